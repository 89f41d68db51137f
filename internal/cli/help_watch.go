package cli

// watchHelp is the help of shakedown watch.
const watchHelp = `usage: shakedown watch TARGET [--interval 1s] [--count N] [--wide] [--json] [--cores N] [--stall [TRIGGERS]]

Per-second server status, orzdba / mysqladmin ext -i1 -r style: statements,
transactions, threads, rows, buffer pool, redo, network and InnoDB figures,
plus host CPU and the server process's CPU when the server runs on this
host. Rates are over the real time between two reads of SHOW GLOBAL STATUS;
a counter that goes back (a restart) shows 0. Each line is labelled by the
end of its own interval. The table fits the terminal's width ($COLUMNS, or
80 columns when not known) with the most useful figures; --wide shows them
all. Figures that need attention
are marked with '*' and explained once. TARGET is a URL such as
mysql://user@host:port/ (no database needed: the figures are server-wide;
one that is named must exist). Passwords: shakedown help targets. Ctrl-C
stops. --stall takes run's triggers on the server's figures
(threads_running, qps) and prints each capture in full as it is taken.

Options:
`
