package cli

// copyHelp is the help of shakedown copy.
const copyHelp = `usage: shakedown copy SOURCE TARGET --allow-write [options]

Copies SOURCE's database (or --databases) to TARGET: tables, routines and
views first, then the rows in parallel by key ranges (LOAD DATA LOCAL, or
multi-row INSERTs where the target refuses it), then secondary indexes,
foreign keys, triggers and events (created disabled), then ANALYZE TABLE
and verify on what was copied. The source is only read: a brief global lock (backup stage or
FLUSH TABLES WITH READ LOCK) while every worker opens a consistent
snapshot, released at once; --consistency none skips it. A target database
that holds tables is refused unless --replace, which drops it first.

--schema existing loads the rows into tables made on TARGET beforehand (a
schema for the new server: other indexes, engine, partitioning) and
changes none of them: every table must exist and be empty (--replace
empties it), views and routines TARGET lacks are created, and the
source's triggers after the rows (a trigger on TARGET is refused: it would
fire on every copied row).

--accounts also copies the accounts with privileges on the copied
databases (their authentication as SHOW CREATE USER gives it) and those
privileges; global privileges are not copied.

Subsets: --where 'db.table: condition' (repeatable), --sample 10% (tables
without a foreign key of their own); with --follow-fk (the default) rows
referencing the chosen ones come along down to --fk-depth, and every row
they reference, so that no foreign key dangles.

--follow keeps the copy current afterwards: from the position the snapshot
was read at, the source's binary log is applied to TARGET (as shakedown
follow does) until Ctrl-C, SIGTERM, --until-caught-up or --follow-for; the
next shakedown follow goes on from where it stopped. The source must write
a ROW binary log with full row images, and a target table must have no
triggers while it is followed; both are checked before anything is written.

Exit status: 0 copied and equal, 3 verify found differences, 1 the copy
failed, 2 bad usage.

Options:
`
