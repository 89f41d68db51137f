// Package check looks at a migration's source and target before (and
// after) the move and lists what would break: server settings that change
// results, objects and accounts the target lacks or holds differently, what
// the target cannot hold (collations, reserved words, engines, features its
// flavour lacks, zero dates, exhausted AUTO_INCREMENT ranges), tables
// without a primary key, the source's replication prerequisites, and stale
// statistics after the copy.
//
// Every finding has a stable check id, a severity (error blocks the move,
// warning needs a decision, notice is for information), the object it
// concerns, why it matters and how to fix it. A check that cannot run, for
// want of a privilege or because the server lacks the information_schema
// table it reads, is listed as not checked with what it would need; it is
// never passed silently.
//
// FollowPrerequisites applies the same rules on the source's binary log,
// the rights to read it and the tables' keys for a follower of the binary
// log, which asks before it writes anything: what is missing comes back as
// a list of Prerequisite, not as a report.
//
// # Reading
//
// check only reads. Each side is read on one connection, in a fixed number
// of bulk queries on information_schema and mysql (never one query per
// table), bounded by Options.QueryTimeout each. The exception is the zero
// date probe, which reads data: it runs only when the target's sql_mode
// rejects zero dates, only on DATE, DATETIME and TIMESTAMP columns of tables
// estimated below Options.MaxScanRows rows, and batches many columns into
// one statement.
//
// The variables come from internal/vars (the same collection and
// normalisation as "shakedown vars diff"); tables, columns and indexes from
// internal/verify's schema reader; flavour and version from
// internal/target. The feature table per target flavour is in flavour.go.
package check
