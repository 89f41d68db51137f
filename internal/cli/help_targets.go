package cli

// targetsHelp is shakedown help targets (and help passwords).
const targetsHelp = `Targets: where load goes

A target is a URL:

    mysql://user:password@host:port/db?param=value&param=value

host and port may be comma lists, which spread connections round-robin.
Parameters:
    socket=/path           connect through a Unix socket instead of TCP
    tls=VALUE              true (verify the server's certificate), skip-verify,
                           preferred (TLS when the server offers it) or false
    tls-ca=FILE            verify the server against this CA (PEM) instead of
                           the system's; implies tls=true
    tls-cert=FILE, tls-key=FILE
                           a client certificate, for servers that ask for one
    timeout=5s             give up connecting after this long (default 10s)
    charset=utf8mb4        the connection's character set
    collation=utf8mb4_bin  the connection's collation
    password_env=NAME      the password is in environment variable NAME (each
                           target its own, where a command takes several)
Any other parameter is refused. run, prepare and cleanup also take sysbench's
--mysql-host, --mysql-port, --mysql-user, --mysql-password, --mysql-db and
--mysql-socket.

A password in a URL that holds / # ? @ or : must be percent-encoded
(%2F %23 %3F %40 %3A): mysql://bench:p%40ss%2Fword@db1:3306/sbtest.

Passwords come from the first of these that has one:
  1. the URL (and run's --mysql-password): visible in ps and shell history;
     or the environment variable the URL's password_env=NAME names;
  2. --password-file FILE: its first line;
  3. the environment: MYSQL_PWD, or for a plan's target the variable its
     password_env: names;
  4. MySQL option files, read as the mysql client reads them: the files
     /etc/my.cnf, /etc/mysql/my.cnf, $MYSQL_HOME/my.cnf,
     --defaults-extra-file FILE, ~/.my.cnf and ~/.mylogin.cnf (or only
     --defaults-file FILE), groups [client] and [shakedown], then the group
     --login-path NAME names; the last password read wins, but a group that
     names another user (user = root) keeps its password for that user.
     --no-defaults reads none.
For example, with ~/.my.cnf (chmod 600) holding

    [client]
    user = bench
    password = s3cret

shakedown verify mysql://bench@db1:3306/shop mysql://bench@db2:3306/shop
connects as bench with that password. No password is ever printed, logged,
stored or reported.

The database: run, prepare and cleanup use sbtest when the URL names none,
as sysbench does; verify and analyze then work on every user database (all
but mysql, sys, information_schema and performance_schema); vars diff and
watch read server-wide figures and need none. A database named in a URL or
with --databases must exist.
`
