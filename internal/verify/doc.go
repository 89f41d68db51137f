// Package verify proves that a target database holds exactly the source's
// data: schema first, then row counts and chunked checksums, then the rows
// that differ and the SQL that would repair them. It never writes to either
// server.
//
// # Reading
//
// Every connection sets time_zone '+00:00' and an empty sql_mode, and uses
// utf8mb4. All work on one chunk on one side runs in one read-only
// REPEATABLE READ transaction (START TRANSACTION READ ONLY; the snapshot is
// taken by its first read): plain consistent reads, no locks (on InnoDB;
// a non-transactional engine such as MyISAM locks a table for each read,
// as any SELECT does), and the server itself refuses any write. Both servers are queried at once; up to
// Options.Threads chunks (of one or several tables) are checked at once.
// Memory does not grow with the table: checksums are aggregates, rows are
// streamed, and what is held is the keys of one chunk's differing rows
// (chunks have at most 500,000 rows). The exception is a table compared in
// one chunk (below), which holds the keys or row hashes of all its
// differing rows.
//
// # Keys and chunks
//
// Rows are matched by the source's primary key, else its first unique key
// on NOT NULL columns (both present on the target). A key whose first column
// is an integer is chunked by computed ranges of that column; any other key
// by (lo, hi] ranges whose bounds are read by walking the source's index.
// Chunks are sized to take Options.ChunkTime each (rows per second and key
// density are learnt as chunks finish) and the same ranges are applied on
// both sides. The first and last chunks are open, so target rows outside
// the source's key range are seen; if the target allows NULL in a key
// column, those rows get a chunk of their own.
//
// Range predicates compare natively (so indexes are used), which selects
// the same rows on both sides only when the key columns have the same type
// family and, for text, the same character set and collation; otherwise the
// table is one chunk. Within a range, rows are ordered and merged by one
// comparison on both sides: integers, decimals and times by value, text by
// the bytes of its utf8mb4 form (ORDER BY CAST(CONVERT(k USING utf8mb4) AS
// BINARY), compared bytewise in Go), binary by its bytes.
//
// A table without such a key is compared as a multiset of whole rows: its
// chunk checksum is a sum, so duplicates count, and a mismatch is resolved
// by counting rows per row hash on both sides (GROUP BY the hash, which,
// unlike GROUP BY the columns, is not cut at max_sort_length); the rows of
// differing hashes are then read by hash, in one pass over the table when
// there are many.
//
// # Checksum
//
// Each column is turned into a canonical text that both sides produce
// alike for equal values:
//
//   - integers (also BIT, YEAR, ZEROFILL) as plain numbers; DECIMAL as is,
//     or cast to a common scale when the types differ;
//   - text as its stored bytes when both sides use the same character set,
//     else CONVERT(... USING utf8mb4), so a latin1 and a utf8mb4 copy of the
//     same text are equal; binary as its bytes;
//   - TIMESTAMP as UNIX_TIMESTAMP (time-zone free); DATETIME and TIME as is,
//     or with 6 fractional digits when the precisions differ;
//   - FLOAT and DOUBLE as m·10^e rounded to 7 or 13 significant digits, so
//     that every difference beyond the tolerance (relative 1e-6 for FLOAT,
//     1e-12 for DOUBLE) changes the checksum; the row phase then applies
//     the tolerance to the values themselves;
//   - JSON as its text; the row phase compares documents by meaning;
//   - large values (MEDIUM/LONG TEXT and BLOB, JSON, spatial) as the SHA-1
//     of that text, so that a row never exceeds max_allowed_packet.
//
// Each column is encoded in a prefix-free way: NULL (tested on the raw
// value) as 'N'; numbers and times followed by ','; strings as
// LENGTH ':' bytes; hashes as 40 hex digits. No separator ambiguity is
// possible, and NULL, the empty string, 'NULL' and '<null>' all encode
// differently. A row hash is SHA1(CONCAT(encodings)); a chunk's checksum is
// COUNT(*) and the exact DECIMAL sum of 64 bits of the row hashes: where
// both servers have CRC32C and pass a probe, CRC32(h)<<32 | CRC32C(h) of
// the hash's hex digits h (carried by a user variable, since SQL has no
// common subexpressions); elsewhere the hash's first 16 hex digits read by
// CONV, which costs the server about a third more CPU per row. A sum,
// unlike BIT_XOR, does not cancel: duplicated rows add up and the same
// edit on an even number of rows moves it. Different rows leave count and
// sum unchanged with probability about 2^-64 per chunk; the row phase
// compares full 160-bit hashes anyway.
//
// # Row phase
//
// A mismatched chunk is split in two (arithmetically, or at the source's
// median key) and the halves that still differ are split again (the second
// half's checksum is the difference of the sums, no query needed), until a
// part holds at most a few thousand rows or both halves keep differing; each
// such part is streamed from both sides in key order as (key, row hash) and
// merged in Go. The rows whose keys or hashes differ are then read in full
// on both sides and compared column by column under the rules above; rows
// equal under them (floats within tolerance, the same JSON) are dropped.
// Each remaining row is reported with its key, its kind (missing on target,
// extra on target, changed) and the columns that differ.
//
// A live source changes while it is read, so differing rows are read again
// on both sides after Options.RecheckWait, up to Options.Recheck times,
// until two readings agree; rows that stop differing are not reported. The
// wait does not hold a worker.
//
// While a follower applies the source's changes to the target, a chunk may
// differ only because the target has not received the latest of them yet.
// With Options.Settle and Options.Rechecks, a chunk that differs is
// compared again, whole, each time after Settle has returned (the follower
// has applied what the source had when Settle was called), up to Rechecks
// times while it differs, and is reported only when it still differs. Both
// sides are read again in fresh snapshots, the source's too: its rows may
// have changed since the first reading, and a target that caught up with
// them must be compared with them. The wait does not hold a worker; a
// failing Settle ends the run with its error. These rechecks come before
// the re-reads of differing rows (Options.Recheck), which start from the
// last comparison.
//
// # Repair SQL, checkpoints, load
//
// With Options.Fix, repair statements are written as chunks finish:
// DELETE ... LIMIT 1 for extra rows, REPLACE for missing ones, UPDATE of the
// changed columns for changed ones (binary values as x'..', generated
// columns never set), after SET NAMES utf8mb4, time_zone '+00:00' and an
// sql_mode that reads the literals as written. shakedown never runs them.
// The file is for the mariadb or mysql client (it may hold DELIMITER).
//
// The repair's writes would fire the target's triggers, and what they do
// would make the target differ again; the servers have no session setting
// that turns triggers off. So a target table with triggers is, by default,
// not repaired: its statements are written as comments under the names of
// its triggers. With Options.FixTriggers = FixTriggersDrop each block of
// its statements runs under LOCK TABLES ... WRITE with the triggers dropped,
// and is followed by their CREATE statements as SHOW CREATE TRIGGER gave
// them, in their sql_mode, character set and firing order. Every block
// starts with a statement that fails when its table has a trigger verify
// did not see (created since, or hidden from an account without the
// TRIGGER privilege), so that the client stops before it writes.
//
// The source's database must exist and some table must be selected, else
// Run fails with ErrNothingToCompare rather than report two empty sets equal.
//
// A Checkpoint (--resume) records every planned and every finished chunk
// as a JSON line, written through at once. A resumed run replays the same
// chunk plan, skips finished chunks (their findings come from the file) and
// continues planning after the last one.
//
// Options.MaxLoad pauses work while the source's Threads_running, which
// counts verify's own queries too, is above it.
package verify
