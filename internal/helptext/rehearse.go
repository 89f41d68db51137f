package helptext

// Rehearse is the help of shakedown rehearse.
const Rehearse = `usage: shakedown rehearse PLAN.yaml [--store FILE] [--pages DIR] [--json]
       shakedown rehearse --resume [ID|latest] [--store FILE]

Rehearses a migration unattended, from one plan: check, copy, verify,
analyze, vars diff, replay, sweep and capacity, in that order, then one
readiness page per candidate. Each step's result is stored as it finishes
(check, verify, vars and replay as evidence, the sweep as a sweep), so
--resume continues a killed rehearsal after its last finished step. A step
that fails stops the chain with its reason, unless the plan gives it
continue_on_failure: true; the pages are made either way.

analyze writes index statistics on the candidates; replay runs only
statements that cannot write unless the plan says allow_writes: true; the
sweep loads the source and the candidates as sweep does. data: copy
writes the candidates as shakedown copy does (it needs allow-write: true;
schema: existing loads into tables made on the candidates beforehand), and
a copy killed mid-way continues from its checkpoint on --resume;
capacity searches the sweep's first workload as shakedown capacity does.

Plan:
  source: {name: prod, url: mysql://shakedown@10.0.0.1:3306/app, password_env: PROD_PW}
  candidates:
    - {name: new, url: mysql://shakedown@10.0.0.2:3306/app, password_env: NEW_PW}
  databases: [app]                 # default: the source URL's database
  data: present                    # or copy: {allow-write: true, where: ...}
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
  steps:                           # optional, per step
    check: {continue_on_failure: true}
    analyze: {skip: true}

Exit status: 0 ready (or ready with warnings), 3 not ready, 1 a step or
the tool failed, 2 bad usage or a bad plan.

Options:
`
