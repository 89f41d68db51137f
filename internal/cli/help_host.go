package cli

// hostHelp is the help of shakedown host facts and host diff.
const hostHelp = `usage: shakedown host facts [--pid PID | --sandbox NAME] [--datadir DIR] [--json FILE] [TARGET]
       shakedown host diff A B... [--all] [--json]

"host facts" reads, on the machine it runs on, what changes how a server
performs there: kernel, CPU model, virtualisation and CPU vulnerability
mitigations; NUMA nodes, distances and numa_balancing; for the server
process (--pid, a sandbox's, or a local TARGET's from its pid file) its
allowed CPUs and memory nodes, memory policy and page spread over nodes,
its cgroup's cpu.max, cpuset, memory.max and throttling counters (cgroup v2,
else v1), its open-file and process limits and OOM score; transparent huge
pages; swappiness and dirty page limits; the datadir disk's scheduler,
nr_requests and read_ahead_kb; the CPU governor; the listen queue, TCP
buffers, port range, tw_reuse and syncookies; fs.aio-max-nr, fs.file-max
and fs.nr_open. A TARGET also gives the rows only the server can tell
(@@back_log, @@innodb_numa_interleave, @@innodb_flush_method,
@@thread_handling, @@version_comment); for a TARGET on another machine the
host rows say they are unknown there: run host facts on that machine with
--json FILE and pass FILE to host diff. Every fact that cannot be read says
why. It only reads. --json FILE writes the versioned JSON document to FILE
(- for standard output instead of the text).

"host diff" compares hosts, the first being the control. Each of A B... is
a file written by host facts --json, pid:PID (a local server process),
sandbox:NAME, a TARGET URL, or "local" (this machine, no server). Every
setting that differs is listed with what it does, the workloads it affects
and what the references recommend where they agree; where they disagree
(transparent huge pages) it says so rather than judge. Counters (cgroup
throttling, OOM score, page spread) are shown as evidence and facts some
host could not read are listed apart; neither counts as a difference.
Exits 3 when settings differ, 0 when none do.

Options:
`
