package cli

// reportHelp is the help of shakedown report.
const reportHelp = `usage: shakedown report [--store FILE] [--sweep ID|latest] [--format text|md|csv|json|html] [-o FILE] [--html FILE] [--bisect FILE]
       shakedown report [--store FILE] --runs all|ID,... [--control NAME] [--format ...] [-o FILE]
       shakedown report [--control NAME] RESULT.json... [--format ...] [-o FILE]
       shakedown report --list [--store FILE]
       shakedown report --stall RUN_ID [--store FILE] [--format text|json]
       shakedown report --baseline NAME [--sweep ID|latest | --runs all|ID,...] [--format ...] [-o FILE]
       shakedown report --history [--workload W] [--target T] [--threads N] [--format ...] [-o FILE]

Shows a stored sweep: for each workload a table per target, every candidate
against the control at each thread level with the ratio of medians, its 95%
interval and a state (faster, slower, same, inconclusive, or no verdict
with one run), for QPS and the p95 and p99 latency; the peak QPS, unsteady
runs, the control's drift, the noise an A/A pair measured, and the
environment of each target. It reads the store and never runs anything.
The HTML report is one file that opens offline, with charts.

--baseline NAME compares new results (the latest sweep, --sweep or --runs)
with a saved baseline (shakedown baseline) and exits with 3 when anything is
slower. --history shows each workload, target and thread level across every
stored sweep, with its change points. --stall prints one run's stall
captures (run --stall) in full: the reports name each capture's run.

Runs made one by one are reported the same way: those stored by "shakedown
run --store" (--runs, IDs from --list), or result documents written by
"shakedown run --json". Runs of one workload, target and thread level count
as repeats; the control is --control, else the first target.

Options:
`
