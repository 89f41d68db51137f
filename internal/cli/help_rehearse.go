package cli

// rehearseHelp is the help of shakedown rehearse.
const rehearseHelp = `usage: shakedown rehearse PLAN.yaml [--store FILE] [--pages DIR] [--json]
       shakedown rehearse --resume [ID|latest] [--store FILE]

Rehearses a migration unattended, from one plan: check, copy, follow,
verify, analyze, vars diff, replay, sweep, capacity and cutover, in that
order, then one readiness page per candidate. Each step's result is
stored as it finishes (check, verify, vars, replay, follow and cutover as
evidence, the sweep as a sweep), so --resume continues a killed rehearsal
after its last finished step. A step that fails stops the chain with its
reason, unless the plan gives it continue_on_failure: true; the pages are
made either way.

analyze writes index statistics on the candidates; replay runs only
statements that cannot write unless the plan says allow_writes: true; the
sweep loads the source and the candidates as sweep does. data: copy
writes the candidates as shakedown copy does (it needs allow-write: true;
schema: existing loads into tables made on the candidates beforehand), and
a copy killed mid-way continues from its checkpoint on --resume;
capacity searches the sweep's first workload as shakedown capacity does.

follow: (after data: copy, of whole databases) starts a follower of the
source's binary log per candidate from the position the copy recorded, as
shakedown follow does; it runs in the background while the later steps
do, and the copy leaves the source's triggers out (the follower applies
what they wrote: create them at the switch). The source must write a ROW
binary log: the plan is refused before the copy, naming what it lacks.
Beside the follower, verify compares a chunk that differs again once the
follower has passed the source's position (up to 3 times); the follower's
lag is sampled each second, apart while the sweep runs. cutover: rehearses
the switch as shakedown cutover does (it needs allow-set-global: true: the
source is made read-only, then writable again, also on Ctrl-C), then
stops the follower; without it the follower stops before the pages. The
pages show the lag under the load and the write-unavailable window; a
cutover whose data did not match is "not ready", a lag p99 above 2 s a
warning. On --resume the follower starts again from the position it saved.
While following, a load step that writes a candidate's followed databases
(a sweep that prepares its tables there, replay's allow_writes) writes
what the source never had: the follower does not undo it, and the
cutover's verify finds it.

Plan:
  source: {name: prod, url: mysql://shakedown@10.0.0.1:3306/app, password_env: PROD_PW}
  candidates:
    - {name: new, url: mysql://shakedown@10.0.0.2:3306/app, password_env: NEW_PW}
  databases: [app]                 # default: the source URL's database
  data: present                    # or copy: {allow-write: true, where: ...}
  follow: {workers: 4}             # optional, after data: copy; also
                                   # batch-rows, server-id
  replay: {capture: app.capture}   # optional; also speed, concurrency,
                                   # timeout, allow_writes
  sweep:                           # optional: a sweep plan without targets
    workloads: [oltp_point_select]
    threads: [1, 4]
    time: 10
  capacity: {slo: "p99<=20ms"}     # optional; also step_time, warmup,
                                   # searches, bracket, repeats
  production_peak: 1200 qps        # optional, for capacity: events a second
                                   # (1200, 1200/s) or a file that watch
                                   # --json wrote, from the plan's directory
  cutover:                         # optional, with follow:
    allow-set-global: true         # required: read_only is set, restored
    max-lag: 1s                    # also lag-wait (5m), verify (full or
                                   # none), kill-writers
  steps:                           # optional, per step
    check: {continue_on_failure: true}
    analyze: {skip: true}

Exit status: 0 ready (or ready with warnings), 3 not ready, 1 a step or
the tool failed, 2 bad usage or a bad plan.

Options:
`
