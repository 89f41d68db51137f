package cli

// followHelp is the help of shakedown follow.
const followHelp = `usage: shakedown follow SOURCE TARGET --allow-write [options]

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
