package replay

import (
	"fmt"
	"strings"

	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
)

// Validate checks the options as the flags of replay's command line set
// them, before anything is opened: a fault is bad usage that names the
// flag.
func (o *Options) Validate() error {
	switch {
	case o.Speed < 0:
		return usage.Errorf("replay: --speed must be >= 0 (0: as fast as possible)")
	case o.Concurrency < 0:
		return usage.Errorf("replay: --concurrency must be >= 0")
	case o.Timeout <= 0:
		return usage.Errorf("replay: --timeout must be > 0")
	case o.IO.Check() != nil:
		return usage.Errorf("replay: %v", o.IO.Check())
	case o.ProgressInterval < 0:
		return usage.Errorf("replay: --progress must be >= 0")
	}
	return nil
}

// ParseTargets reads the control and the candidates, each a mysql:// URL
// or NAME=URL, with their passwords as creds finds them. Unnamed ones are
// control, and candidate (candidate1, candidate2... when there are
// several); two of one name are bad usage.
func ParseTargets(creds *target.Credentials, getenv func(string) string, control string, candidates []string) ([]Target, error) {
	targets := make([]Target, 0, 1+len(candidates))
	for i, raw := range append([]string{control}, candidates...) {
		what, name := "--control", "control"
		if i > 0 {
			what, name = "--candidate", "candidate"
			if len(candidates) > 1 {
				name = fmt.Sprintf("candidate%d", i)
			}
		}
		if n, u, ok := strings.Cut(raw, "="); ok && !strings.Contains(n, "://") {
			name, raw = n, u
		}
		if !strings.HasPrefix(raw, "mysql://") {
			return nil, usage.Errorf("replay: %s must be a URL mysql://user@host:port/db (optionally NAME=URL)", what)
		}
		t, err := creds.ParseArg(getenv, "replay: "+what, raw)
		if err != nil {
			return nil, err
		}
		t.Name = name
		targets = append(targets, Target{Name: name, Target: t, FixedDB: urlNamesDB(raw)})
	}
	seen := map[string]bool{}
	for _, t := range targets {
		if seen[t.Name] {
			return nil, usage.Errorf("replay: two targets are named %q: name them NAME=URL", t.Name)
		}
		seen[t.Name] = true
	}
	return targets, nil
}

// urlNamesDB reports whether a mysql:// URL has a database path.
func urlNamesDB(raw string) bool {
	rest := strings.TrimPrefix(raw, "mysql://")
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest = rest[:i]
	}
	i := strings.IndexByte(rest, '/')
	return i >= 0 && i < len(rest)-1
}
