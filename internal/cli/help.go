// The command line's help pages, word for word as shakedown COMMAND --help
// and shakedown help TOPIC print them (a command's options follow from its
// flag set), one page a file (help_*.go). They live apart from the
// commands' files so that those hold flags, calls and printing only.

package cli

// usageHelp opens shakedown's own help, before the commands, listed by
// commandGroups.
const usageHelp = `usage: shakedown COMMAND [options]

shakedown proves a MySQL-compatible database before you move to it: the same
load on the database you run today and on the candidates, compared.
`

// versionHelp is the help of shakedown version.
const versionHelp = `usage: shakedown version (also --version, -v)

Prints the release number, the commit shakedown was built from, and the Go version.
`

// firstStepsHelp ends the list of commands that shakedown help prints.
const firstStepsHelp = `
First steps, on a local server of its own (URL is what sandbox up prints):
  shakedown sandbox up test
  shakedown prepare oltp_point_select --target URL --tables 1 --table-size 10000
  shakedown run oltp_point_select --target URL --tables 1 --table-size 10000 --threads 4 --store runs.db
  shakedown report --store runs.db --runs all

shakedown help COMMAND shows a command's options; shakedown help targets, how
to name a server and give its password.
`

// sysbenchHelp is the help of shakedown sysbench.
const sysbenchHelp = `usage: shakedown sysbench WORKLOAD [options] prepare|run|cleanup

A sysbench 1.0.20 command line with shakedown in front of it: the same
workloads, option names and meaning, and the same statements in the same mix.
The command comes last, as with sysbench. It is the same as
shakedown prepare|run|cleanup WORKLOAD [options]; see shakedown help run.

Old runbook lines run as sysbench 1.0.20 runs them, each old option with a
WARNING that names its new spelling: --test=PATH.lua names the workload;
--num-threads, --max-time, --max-requests and --tx-rate are --threads, --time,
--events and --rate; sysbench 0.5's oltp.lua (--test=oltp.lua) runs as
oltp_read_write, or oltp_read_only and oltp_write_only with --oltp-read-only
and --oltp-write-only, as text statements as oltp.lua sends them, and its
--oltp-tables-count, --oltp-table-size, --oltp-point-selects and kin are
--tables, --table-size, --point-selects; --mysql-table-engine is
--mysql-storage-engine.

  shakedown sysbench --test=/opt/sysbench/share/sysbench/oltp.lua \
      --oltp-tables-count=10 --oltp-table-size=100000 --mysql-socket=/run/mysqld/mysqld.sock \
      --max-time=300 --max-requests=0 --num-threads=16 --oltp-test-mode=complex run
`
