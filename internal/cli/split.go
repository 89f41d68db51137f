package cli

import (
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/segment"
)

// CheckArgs parses a runner's command line the way its command will,
// reading no file and connecting to nothing, and resolves its split
// options with env.Getenv. Deployment manifests are checked with it. A
// runner's command is sweep PLAN or run WORKLOAD.
func CheckArgs(env *Env, args []string) (segment.Split, error) {
	if len(args) == 0 {
		return segment.Split{}, usagef("a runner's command line starts with sweep or run (got nothing)")
	}
	switch args[0] {
	case "sweep":
		sc := &sweepCmd{}
		fs := sc.flags(env)
		if err := fs.Parse(args[1:]); err != nil {
			return segment.Split{}, flagError("sweep", "sweep", fs, err)
		}
		if fs.NArg() != 1 {
			return segment.Split{}, usagef("sweep: name one plan file, e.g. shakedown sweep plan.yaml (see shakedown sweep --help)")
		}
		return sc.split.Resolve(env.Getenv, time.Now())
	case "run":
		job, err := bench.Parse("run", args[1:], nil)
		if err != nil {
			return segment.Split{}, err
		}
		return job.ResolveSplit(env.Getenv, time.Now())
	}
	return segment.Split{}, usagef("a runner's command line starts with sweep or run (got %q)", strings.Join(args, " "))
}
