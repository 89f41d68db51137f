package cli

// sweepHelp is the help of shakedown sweep.
const sweepHelp = `usage: shakedown sweep PLAN.yaml [--store FILE] [--baseline NAME] [--verbose] [--dry-run]
       shakedown sweep --resume [ID] [--store FILE]

Runs every target of the plan at every workload, thread level and repeat,
each step one "shakedown run", and stores every result. The plan is checked
completely, and every target is connected to, before anything runs. A failed
step is stored as failed and the sweep goes on (a target that stops
answering is waited for 30 s, then its remaining steps are skipped); Ctrl-C
stops it and keeps every finished step. "sweep --resume ID" (or
--resume=ID; the latest without an ID) continues it in the same store: it
runs the interrupted, failed and skipped steps and those not run, keeps
the data the sweep made when it is there and whole, and otherwise makes it
again and runs a thread level begun on the old data again from its first
repeat. Then "shakedown report" shows the comparison. With --baseline, the
results are also compared with a saved baseline (shakedown baseline), and
the exit code is 3 when anything is slower. A plan with capacity: searches
each target's capacity once every step is done and stores it, as
"shakedown capacity --store" does; the exit code is 3 when a candidate's
capacity is below the control's (a split sweep runs no search).

A plan:

  targets:
    - name: durable
      url: mysql://shakedown@127.0.0.1:3307/sbtest
      role: control                # exactly one control
    - name: relaxed
      url: mysql://bench@10.0.0.2:3306/sbtest
      password_env: RELAXED_PW     # this variable holds the password; without it: --password-file, MYSQL_PWD, ~/.my.cnf
  options: {tables: 4, table-size: 10000}   # for every workload that has
                                   # the option (sql has no tables: it
                                   # runs without them); a workload's own
                                   # options win
  workloads:
    - oltp_point_select
    - name: oltp_read_write
      options: {range-size: 50}
    - name: sql                    # statements from a file
      label: orders                # results are grouped by label
      options: {file: orders.sql}
  threads: [1, 4, 16, 64]
  time: 10                         # seconds per step (or events: N)
  warmup: 2                        # seconds before measuring, excluded
  repeats: auto                    # 3, more where inconclusive; or a
                                   # fixed number such as 5
  max_repeats: 10                  # with repeats: auto only
  noise_threshold: 2%              # smaller differences count as the same
  cooldown: 1                      # seconds between steps
  prepare: true                    # make the data once per target; refused
                                   # if tables there hold rows, unless
                                   # prepare: replace
  prepare_threads: 4
  cleanup: false                   # drop it at the end
  order: counterbalanced           # A B B A at each level; or interleave,
                                   # sequential
  capacity: {slo: "p99<=20ms"}     # after the steps, each target's capacity
                                   # for the first workload at the highest
                                   # thread level, as shakedown capacity;
                                   # also step_time, warmup, searches,
                                   # bracket, repeats
  production_peak: 1200 qps        # for capacity: events a second, or a
                                   # file that watch --json wrote
  split: {connect: 30s}            # with --segment: time to connect
                                   # before each step (5s), least rest
                                   # between steps (settle, 2s), time from
                                   # the data ready to its step (ready, 5s)

Options:
`
