package helptext

// Follow is the help of shakedown follow.
const Follow = `usage: shakedown follow SOURCE TARGET --allow-write [options]

Applies the changes in SOURCE's binary log to TARGET, from the position
the last follower (or copy --follow) saved in TARGET's shakedown_follow
schema, until Ctrl-C, SIGTERM, --until-caught-up or --follow-for.

Row changes are applied idempotently by key (REPLACE of the row as it is
after the change, DELETE by key) over --workers connections, hashed by
table and key so that a row's changes keep their order; each worker applies
its share of a batch in one transaction, and the position after the batch
is saved once every worker has committed. A follower killed at any moment
applies its last batch again when it resumes: no row is lost or doubled.

DDL on the followed databases (CREATE, ALTER, DROP, RENAME, TRUNCATE TABLE;
CREATE and DROP DATABASE) is applied in its place in the stream. A
statement the target refuses stops the follower before it, naming it;
apply it by hand and go on with --from-next, or leave it out with --skip-ddl.

Before anything is written the source is checked: log_bin on,
binlog_format=ROW, binlog_row_image=FULL, a server_id, REPLICATION SLAVE and
REPLICATION CLIENT, a primary or unique NOT NULL key on every followed table;
and the target: no triggers on followed tables.

While it runs: a progress line (events/s, rows/s, lag in seconds and bytes,
position), --json lines, --metrics-addr for Prometheus. verify of a target
a follower applies to compares a differing chunk again after the follower
has passed the source's position (--rechecks).

Exit status: 0 stopped or caught up, 1 the follower failed (the position
is gone from the source, a DDL statement stopped it, a server failed for
longer than it retries), 2 bad usage or missing prerequisites.

Options:
`

// Cutover is the help of shakedown cutover.
const Cutover = `usage: shakedown cutover SOURCE TARGET --allow-set-global [options]

Rehearses the switch from SOURCE to TARGET, step by step, timed:
  1. waits for the follower's lag to fall under --max-lag (a follower at work
     on TARGET, or one this command runs from the saved position);
  2. SET GLOBAL read_only = ON on SOURCE (--kill-writers also ends the
     sessions with an open transaction that has written);
  3. waits for the follower to apply SOURCE's final position;
  4. verifies the followed databases (--verify full|none);
  5. with --rehearse (the default) sets read_only back as it was, also on
     Ctrl-C; --keep-read-only or --rehearse=false leave SOURCE read-only.
It prints the timeline and the write-unavailable window: from read_only on
to the verify's end. cutover never changes DNS, a proxy or a load balancer.

Exit status: 0 the data matched, 3 it did not, 1 a step failed, 2 bad usage.

Options:
`
