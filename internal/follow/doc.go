// Package follow keeps a copy up to date: it reads the source's binary log
// from the position a copy recorded and applies its row changes to the
// target until it is stopped or has caught up, and rehearses the switch to
// the target (Cutover).
//
// # Reading
//
// The binary log is read with go-mysql's replication package, a well-kept
// client of the replication protocol (DM and canal are built on it), not a
// parser of our own. Its own retry is off: after any stream error the
// follower drops the transaction it was reading and starts a new stream
// from the last position it saved, so a transaction is never applied in
// part. Heartbeats and a read timeout bound every wait on the source.
//
// # Applying
//
// Row events are applied idempotently: an insert or an update becomes a
// REPLACE of the row as it is after the change, keyed by the table's
// primary key (or a unique key of NOT NULL columns), a delete a DELETE by
// that key. Complete transactions are gathered into a batch; the batch's
// changes are split over Options.Workers connections by a hash of table
// and key, so that one row's changes stay in order on one connection, and
// each connection applies its share of the batch in one transaction. A
// table with more than one unique key goes to one connection whole, since
// a REPLACE may remove a row of another key. The target's triggers would
// repeat what the source's triggers wrote into the log already, so a
// followed table with triggers on the target is refused before anything
// is written.
//
// # Position
//
// When every connection has committed its share, the position after the
// batch's last transaction (the GTID set where the source has GTIDs, and
// the file and offset) is written to the target, in the shakedown_follow
// schema. A follower killed between the two writes applies the batch again
// from the saved position when it resumes; the apply is idempotent, so no
// row is lost or doubled. The row also carries the follower's lag and a
// heartbeat, which is how Cutover and verify find a follower at work.
//
// A transaction of more than bigTxnRows row changes is applied in parts
// as it is read, so memory stays bounded; its position moves only at its
// end. A change logged as a statement (a session with binlog_format
// STATEMENT or MIXED) in a followed database is never skipped: the
// follower stops before it.
//
// # Verify while following
//
// A Watcher reads a follower's saved row. Its Align lines a recheck's two
// snapshots up: it asks the follower (through shakedown_follow.hold) to
// stop where it is, opens a consistent snapshot of the source and reads
// the binary log position it stands at (MariaDB's Binlog_snapshot_file
// and _position), asks the follower to apply up to exactly there and
// hold, and lets it go once verify has opened the target's snapshot. A
// hold never lasts longer than its row says (10 s), so a verify that dies
// cannot stop the follower.
//
// # DDL
//
// CREATE, ALTER, DROP, RENAME and TRUNCATE TABLE, and CREATE and DROP
// DATABASE, within the followed databases, are applied after the changes
// before them, with collations the target lacks mapped as copy maps them.
// A DDL statement the follower cannot apply stops it before the statement,
// naming it and its position; Options.SkipDDL goes on past it.
package follow
