package cli

// baselineHelp is the help of shakedown baseline.
const baselineHelp = `usage: shakedown baseline save NAME [--store FILE] [--sweep ID|latest | --runs all|ID,...] [--target NAME]
       shakedown baseline list [--store FILE]
       shakedown baseline delete NAME [--store FILE]

A baseline is a named set of stored runs of one target: what good looked
like. "report --baseline NAME" and "sweep PLAN --baseline NAME" compare new
results with it by the same statistics as any comparison, and exit with 3
when anything is slower, for cron and CI. save takes the successful runs of
a stored sweep (the latest by default) or of runs made one by one (--runs),
of the sweep's control or of --target. New results must be of the same
workloads with the same options; only the thread levels may differ.

save also keeps the runs of the other targets, measured beside the
baseline's. When every one of them moved against the baseline as far as
the baseline's target did, the machine changed, not the server: such a
figure is "inconclusive: the machine changed (xFACTOR)", not slower. New
results that are the baseline's own runs are the same.

Options:
`
