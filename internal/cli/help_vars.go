package cli

// varsHelp is the help of shakedown vars diff.
const varsHelp = `usage: shakedown vars diff TARGET TARGET... [--all] [--json]
       shakedown vars bisect CONTROL CANDIDATE --workload W --threads N --allow-set-global [...]

Compares the servers' global variables (SHOW GLOBAL VARIABLES), the first
TARGET being the control. Values are normalised before comparing (ON, YES
and TRUE are 1; numbers compare numerically; case is ignored) and
per-instance values (server_id, ports, paths, host names) are ignored. The
variables known to change performance or behaviour come first, each with a
line saying what it changes. Variables that only some servers have (across
versions or flavours: MariaDB's wsrep_*, TiDB's tidb_*) are summed up in a
section of their own; --all lists them one by one. Exits 3 when differences
are shown, 0 when there are none. TARGET is a URL such as
mysql://user@host:port/ (no database needed: variables are server-wide; one
that is named must exist). Passwords: shakedown help targets.

"vars bisect" finds which of the differences make performance differ
(shakedown vars bisect --help).

Options:
`
