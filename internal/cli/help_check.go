package cli

// checkHelp is the help of shakedown check.
const checkHelp = `usage: shakedown check SOURCE TARGET [--json FILE] [--html FILE] [--store[=FILE]]

Looks at SOURCE (the server you run today) and TARGET (where you move to)
and lists what would break or change with the move, each finding with a
severity (error blocks the move, warning needs a decision, notice), the
object, why it matters and how to fix it:

  - server behaviour that changes results (sql_mode, character sets and
    collations, lower_case_table_names, time zone, explicit_defaults_for_
    timestamp, isolation, autocommit, max_allowed_packet, group_concat_max_len,
    authentication plugins);
  - objects and accounts compared (databases, tables, columns, indexes, views,
    routines, triggers, events; accounts by what each may do);
  - what TARGET cannot hold (collations, reserved words, engines, features its
    flavour and version lack, zero dates, AUTO_INCREMENT near its maximum);
  - tables without a primary key, and which unique key could serve;
  - SOURCE's replication prerequisites (binary log, ROW, FULL, server_id,
    GTIDs, retention, the migration account's privileges);
  - TARGET tables whose statistics are stale after the copy.

check only reads (information_schema and mysql, a few bulk queries per side;
data only to look for zero dates). Checks the user may not run are listed as
"not checked" with the privilege they need. SOURCE and TARGET are URLs,
mysql://user@host:port/db (passwords: shakedown help targets); a URL without
a database means every database of SOURCE but the system ones, and a
database that is named (or given to --databases) must exist (exit 2).

Exit status: 0 no errors, 3 errors found, 1 a side could not be read, 2 bad
usage.

Options:
`
