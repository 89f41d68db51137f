package sweep

import (
	"os"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/segment"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
)

// ParsePlan reads a sweep plan (plan.Parse) and checks each step's
// command line against the engine's.
func ParsePlan(path string, src []byte, getenv func(string) string) (*plan.Plan, error) {
	return plan.Parse(path, src, getenv, bench.Grammar{})
}

// LoadPlan reads the one plan file args name, checks it can be split as
// sp, and finds every target's password: password_env, when a target
// names one, has given it; the others look where every command looks
// (creds). A plan that cannot be read or parsed is bad usage.
func LoadPlan(args []string, getenv func(string) string, creds *target.Credentials, sp segment.Split) (*plan.Plan, error) {
	if len(args) != 1 {
		return nil, usage.Errorf("sweep: name one plan file, e.g. shakedown sweep plan.yaml (see shakedown sweep --help)")
	}
	path := args[0]
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, usage.Errorf("sweep: read plan: %v", err)
	}
	p, err := ParsePlan(path, src, getenv)
	if err != nil {
		return nil, err
	}
	if err := CheckSplit(p, sp); err != nil {
		return nil, err
	}
	for _, t := range p.Targets {
		if err := creds.Fill(t.Target, getenv); err != nil {
			return nil, err
		}
	}
	return p, nil
}
