package cli

// sandboxHelp is the help of shakedown sandbox.
const sandboxHelp = `usage: shakedown sandbox up NAME [--port P] [--set var=value ...] [--basedir DIR]
                         [--cpus LIST] [--cpu-quota PCT] [--numa interleave] [--url-only]
       shakedown sandbox up NAME --flavour galera [--nodes N] [--set var=value ...]
       shakedown sandbox up NAME --flavour tidb [--server PATH]
       shakedown sandbox up NAME --flavour vitess [--shards N] [--server PATH] [--set var=value ...]
       shakedown sandbox stop NAME
       shakedown sandbox down NAME
       shakedown sandbox list

Throwaway local MariaDB or MySQL servers for benchmarks, listening on
127.0.0.1 only. Each has a database sbtest and a user shakedown with no
password; "up" prints the target URL to use with --target. Sandboxes live in
$SHAKEDOWN_HOME/sandboxes, or ~/.shakedown/sandboxes without SHAKEDOWN_HOME,
and keep running after shakedown exits until "sandbox down".

--flavour galera makes a MariaDB Galera cluster of --nodes nodes (3), whose
URL names every node; --flavour tidb runs one TiDB server with its
embedded storage, from --server, $SHAKEDOWN_TIDB_SERVER or tidb-server on
PATH; --flavour vitess runs vtgate and its tablets (one vtcombo process)
over a MariaDB sandbox, with a keyspace sbtest of --shards shards (1), from
--server, $SHAKEDOWN_VITESS_SERVER, vtcombo on PATH or the build that
scripts/install-vitess.sh makes. --set sets the MariaDB beneath.
docs/flavours.md says what differs on each.

  up NAME     create and start a sandbox; NAME is letters, digits, '_' or '-'.
              A sandbox that exists but is stopped (stopped, killed, or the
              machine restarted) starts again with its data and settings;
              one that runs is left running and its URL printed. Options
              that differ from an existing sandbox's are refused, named.
  start NAME  start a stopped sandbox again (as up NAME does)
  stop NAME   shut a sandbox's server down cleanly, keeping its data
  down NAME   stop a sandbox and delete it with its data
  list        show the sandboxes, whether they run and where (CPUs, quota, NUMA)

--cpus, --cpu-quota and --numa place the server as production hosts do,
to compare a server bound to cores with one under a CPU quota: --cpus binds
it to CPUs (as taskset -c), --cpu-quota limits it to a share of CPU time in
a cgroup of its own (cpu.max, or cpu.cfs_quota_us on cgroup v1; 200% is two
CPUs' time), --numa interleave spreads its memory over the NUMA nodes (with
numactl). They are kept: the sandbox starts again placed the same way.

Options of up:
`
