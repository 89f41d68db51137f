package cli

// mirrorHelp is the help of shakedown mirror.
const mirrorHelp = `usage: shakedown mirror --control URL --candidate NAME=URL [--candidate ...] [options]

A MySQL-protocol proxy for a canary: the application (or sysbench, mysqlslap,
the mariadb client) connects to --listen as it would to the control. Every
statement goes to the control and the control's reply comes back unchanged,
packet for packet; the reads (SELECT, SHOW, and reads in a transaction that
has not written, as text or as prepared statements, each twin preparing its
own and mapping the control's statement ids to it) are also sent to each
candidate through a twin session with the same default database, SET
statements and prepared statements, and the two results are compared by
replay's rules, per query class, with both latencies. COM_RESET_CONNECTION
resets the twins too; COM_CHANGE_USER is refused (connect again as the
other user).

The candidate never slows the application: each session's mirrored reads wait
on a bounded queue (--queue), and a read that finds it full is dropped and
counted. A candidate that dies is reconnected with back-off while the
clients go on. Writes, and statements in a transaction that wrote, are
relayed only and counted as not mirrored, since follow keeps the candidate
in step; with --writes (a throwaway candidate that nothing follows) they go
to the twins too, in order per session, compared by affected rows, warnings
and errors: this CHANGES the candidates, and a candidate that is the
control's own server is refused.

Clients log in with mysql_native_password only, checked by the mirror
itself against --accounts FILE (one user:password a line; # comments) or
else the control URL's own user and password. Each session reaches the
control with the control URL's account, and the candidates with theirs.
The mirror speaks no compression to clients yet and refuses LOAD DATA
LOCAL.

TLS to clients: --tls-cert FILE --tls-key FILE (PEM, both or neither, read
at the start) offer TLS in the greeting. On loopback a client may use it or
not; with a --listen beyond this host every client must (one without TLS
gets ERROR 3159 and is disconnected), --insecure-listen or not. A --listen
beyond this host needs --tls-cert or --insecure-listen (clients then in
clear). The mirror's own sessions to the control and the candidates are as
their URLs say.

While it runs, a progress line on stderr: statements/s through, mirrored,
compared, differing, dropped, and the candidates' latency over the
control's. At Ctrl-C or SIGTERM: the summary per class on stdout (the first
difference of each class with its statement, literals as ? unless
--keep-literals, both results' first rows and where they first part), and
--json FILE.
--http HOST:PORT serves a live page of the same (each class, the
differences with samples, the drops, the latency ratio period by period)
and /metrics for Prometheus. --store FILE keeps a snapshot of the figures
every --snapshot period and at the end, for weeks of canary: shakedown
report --mirror ID shows them and readiness weighs the latest. SIGHUP, or
shakedown mirror --rotate --http HOST:PORT (POST /rotate on the page's
address), starts a new period without dropping a connection.

Exit status: 0 no differences, 1 the mirror failed, 2 bad usage,
3 differences found.

Options:
`
