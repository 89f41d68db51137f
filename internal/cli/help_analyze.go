package cli

// analyzeHelp is the help of shakedown analyze.
const analyzeHelp = `usage: shakedown analyze TARGET [--databases a,b] [--tables ...] [--local]

Runs ANALYZE TABLE on every base table of TARGET's database, to refresh
index statistics after a migration. TARGET is a URL,
mysql://user@host:port/db: without a database (mysql://user@host:port/),
every user database (all but mysql, sys, information_schema and
performance_schema); --databases names others. A database that does not
exist, or tables that match nothing, are bad usage (exit 2). Unlike verify,
this WRITES: the server stores new statistics, and unless --local the
statement is written to the binary log so that replicas run it too.
Passwords: shakedown help targets.

Options:
`
