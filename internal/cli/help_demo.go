package cli

// demoHelp is the help of shakedown demo.
const demoHelp = `usage: shakedown demo [--out DIR] [--placement | --candidate tidb|vitess] [--port P]

The main job on this machine alone: starts two local sandboxes of the same
server, "durable" (innodb_flush_log_at_trx_commit=1, sync_binlog=1) as the
control and "relaxed" (both 0) as the candidate, both with the binary log on
(and, for MariaDB, its thread pool) so that only the durability settings
differ; sweeps oltp_point_select
and oltp_write_only over 1, 4, 16 and 64 threads, short steps repeated
(repeats: auto: 3, then more where a verdict is still inconclusive, up to
--max-repeats) in counterbalanced order; prints the comparison with each
ratio's 95% interval and state, writes DIR/report.html, and stops the
sandboxes. DIR also keeps the results store (shakedown.db) and the plan
(plan.yaml).

Then it rehearses a migration from durable to relaxed (shakedown rehearse):
a small application (customers, orders with a foreign key, a trigger, a
view) on durable, its tables made on relaxed beforehand without the index
on customers.email, the rows copied into them (copy --schema existing),
then verify, analyze, vars diff, a replay and a short sweep, ending on a
readiness page that says why relaxed is not ready. DIR/rehearsal/ keeps the
plan, its files, its store and the page. It takes about six minutes in
all; the rehearsal a quarter of a minute of it.

With --placement it compares CPU placement instead: the same server,
"cores" bound to half this machine's CPUs (sandbox up --cpus) as the
control, against "quota" limited to as much CPU time in a cgroup (sandbox up
--cpu-quota) as the candidate, over oltp_point_select and oltp_read_only,
and prints the quota's throttling counters (cgroup cpu.stat) beside the
verdict: a quota lets a server's threads run on every CPU until the
period's time is spent, then stops them all.

Options:
`
