package cli

// replayHelp is the help of shakedown replay.
const replayHelp = `usage: shakedown replay CAPTURE --control URL --candidate URL [--candidate URL...] [options]

Replays a capture (shakedown capture) on the control and every candidate:
each captured session on its own connection to each target, its statements
in order with its default database, SET statements and prepared statements,
sessions at once. Each statement's result on a candidate is compared with
the control's: errors (on one side only, different codes), warnings, row
count, column names and types, and a checksum of the rows that ignores their
order unless the statement orders them. ORDER BY ... LIMIT that cuts through
ties is "not comparable"; statements whose results cannot repeat (NOW(),
RAND(), UUID(), LIMIT without ORDER BY, ...) are "non-deterministic", not
different. Latency p50/p95/p99 per fingerprint and target, with the ratio of
medians and a verdict.

Read-only by default: only statements the parser shows cannot write run
(SELECT without locking clauses or INTO, SHOW, DESCRIBE, EXPLAIN, SET of
session variables, USE); the rest are skipped and counted. --allow-writes
runs them too and first says what will run where.

A URL that names a database replays the captured default database as that
one (to replay on a copy under another name); without one, each session uses
the database it used when captured. A URL may start with NAME= to name the
target. Passwords come from the sources every command reads (shakedown help
targets); the password_env parameter gives each target its own:
  --candidate tidb=mysql://app@10.0.0.2:4000/shop?password_env=TIDB_PW

Exit status: 0 no differences, 3 differences or new errors found, 1 the
replay failed or was interrupted (the partial report is printed and
saved), 2 bad usage.

Options:
`
