package cli

// verifyHelp is the help of shakedown verify.
const verifyHelp = `usage: shakedown verify SOURCE TARGET [options]

Proves that TARGET holds exactly SOURCE's data: tables, columns, types,
nullability, defaults, character sets, collations and indexes, then row
counts and chunked checksums, then the rows that differ (key; missing on
target, extra on target, or changed, with the columns) and, with --fix-sql,
the SQL that would make TARGET equal to SOURCE. verify never writes to either
server and takes no locks: each chunk is read in a read-only consistent
snapshot.

SOURCE and TARGET are URLs, mysql://user@host:port/db. Which databases:
--databases when given (the same names on both sides); else the URLs'
databases (a URL without one takes the other's); else, when neither names
one, every user database of SOURCE (all but mysql, sys, information_schema
and performance_schema), by the same names on TARGET. A database that SOURCE
does not have is bad usage (exit 2); one that TARGET lacks is a difference.
Passwords: shakedown help targets.

Exit status: 0 equal, 3 differences found, 1 the check failed, 2 bad usage.

Options:
`
