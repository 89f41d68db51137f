package bisect

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
)

// targetOptions name the target in a run's options; bisect's targets are
// its CONTROL and CANDIDATE.
var targetOptions = map[string]bool{"target": true, "mysql-host": true, "mysql-port": true, "mysql-user": true,
	"mysql-password": true, "mysql-db": true, "mysql-socket": true, "store": true}

// SplitArgs separates bisect's own options and the two target URLs from the
// run options, which go to the engine as they are. fs is bisect's own
// flag set.
func SplitArgs(fs *pflag.FlagSet, args []string) (own, targets, run []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "mysql://") {
			targets = append(targets, a)
			continue
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			run = append(run, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		name = strings.ReplaceAll(name, "_", "-")
		f := fs.Lookup(name)
		if f == nil && len(name) == 1 {
			f = fs.ShorthandLookup(name)
		}
		if f == nil {
			if targetOptions[name] {
				return nil, nil, nil, usage.Errorf("vars bisect: --%s: give the servers as CONTROL and CANDIDATE URLs (mysql://user:password@host:port/db); results are not stored", name)
			}
			run = append(run, a)
			continue
		}
		own = append(own, a)
		if !hasValue && f.NoOptDefVal == "" && f.Value.Type() != "bool" && i+1 < len(args) {
			i++
			own = append(own, args[i])
		}
	}
	return own, targets, run, nil
}

// checkRepeats refuses fewer runs per measurement than a 95% interval
// needs: then no comparison can come out faster, slower or same.
func checkRepeats(n int) error {
	if n < stats.MinRunsFor95 {
		return usage.Errorf("vars bisect: --repeats must be >= %d: with fewer runs per side no 95%% interval exists", stats.MinRunsFor95)
	}
	return nil
}

// Validate checks what vars bisect's flags set in the configuration,
// before anything is read: a fault is bad usage that names the flag.
func (cfg *Config) Validate() error {
	switch {
	case cfg.Workload == "":
		return usage.Errorf("vars bisect: --workload is required, e.g. --workload oltp_write_only")
	case checkRepeats(cfg.Repeats) != nil:
		return checkRepeats(cfg.Repeats)
	case cfg.Budget < 0:
		return usage.Errorf("vars bisect: --budget must be >= 0")
	}
	return nil
}

// ParseTarget reads CONTROL or CANDIDATE with its password (creds). The
// workload runs in the URL's database, sbtest when it names none, as with
// shakedown run.
func ParseTarget(creds *target.Credentials, getenv func(string) string, what, raw string) (*target.Target, error) {
	tgt, err := creds.ParseArg(getenv, what, raw)
	if err != nil {
		return nil, err
	}
	if !tgt.NamesDB() {
		tgt.DB = target.DefaultDB
	}
	return tgt, nil
}
