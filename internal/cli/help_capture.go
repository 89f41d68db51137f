package cli

// captureHelp is the help of shakedown capture.
const captureHelp = `usage: shakedown capture SOURCE... [-o CAPTURE] [options]

Reads what a server can give and writes a capture file for shakedown replay:
each statement with its session, its order in the session, time, default
database, text, and (where the source has them) duration, rows sent and
examined, and error code. Sources, detected from their first bytes:

  slow      the slow log, MySQL's or MariaDB's (set long_query_time=0 to log
            every statement)
  general   the general log file, or the mysql.general_log table named by a
            URL: mysql://user@host:port/mysql?password_env=VAR
  pcap      tcpdump -w of the server's traffic (--port, default 3306): text
            queries and prepared statements with their parameters; pcapng too
  tcpdump-text
            tcpdump -x or -xx text, as pt-query-digest reads it:
            tcpdump -s 65535 -x -nn -q -tttt -i any port 3306 > mysql.txt

Passwords never reach the capture: IDENTIFIED BY, SET PASSWORD and the like
are replaced by '<redacted>', and the general log's Connect lines are not
kept. Reading streams: memory does not grow with the size of the input.

  shakedown capture slow.log -o app.capture --summary
  shakedown capture app.capture --summary            (a capture file is a source too)
  shakedown capture slow.log --to-workload app.sql   (then: shakedown run sql --file app.sql)

Each source's entries, statements and skipped entries (why, and on which
lines) are said on standard error when some were skipped, and with --summary.

Exit status: 0 ok, 2 bad input (unknown format, a packet capture with no
MySQL traffic on the port, a source from which no statement could be read:
the capture of the others is still written),
1 the capture failed or was interrupted (what was read is written).

Options:
`
