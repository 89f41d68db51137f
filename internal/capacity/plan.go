package capacity

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/runspec"
	"github.com/shakedown/shakedown/internal/usage"
)

// Defaults are the capacity command's settings where none is given: two
// seconds of warm-up and ten measured a step, a bracket of 2%, and the
// answer run twice more.
var Defaults = Config{Warmup: 2, Time: 10, Options: Options{Bracket: 0.02, Repeats: 2}}

// FromPlan is the search a plan's capacity: section asks for, checked
// before anything runs: a bad SLO, peak or workload is a usage error
// naming its line. It searches sw's first workload, with its options, at
// sw's highest thread level on every target of sw, the control being the
// one the plan names so. peak and peakLine are the plan's
// production_peak:, read as capacity --peak reads it, a file from the
// plan's directory. d holds what the section does not set (the steps'
// time and warm-up, the bracket, the repeats), the rest of the search's
// options and the version. It is nil when sec is.
func FromPlan(sec *plan.Capacity, sw *plan.Plan, peak string, peakLine int, d Config) (*Config, []Target, error) {
	if sec == nil {
		return nil, nil, nil
	}
	slo, err := ParseSLO([]string{sec.SLO})
	if err != nil {
		return nil, nil, usage.Errorf("%s:%d: capacity slo: %v", sw.Path, sec.Line, err)
	}
	run := sw.CapacitySpec()
	cfg := d
	cfg.Options.SLO, cfg.Searches = slo, sec.Searches
	if sec.StepTimeS > 0 {
		cfg.Time = sec.StepTimeS
	}
	if sec.WarmupS > 0 {
		cfg.Warmup = sec.WarmupS
	}
	if sec.Bracket > 0 {
		cfg.Options.Bracket = sec.Bracket
	}
	if sec.Repeats > 0 {
		cfg.Options.Repeats = sec.Repeats
	}
	// The run lines carry no password: each target's URL as the plan
	// wrote it (it holds none) names a variable that only Password,
	// which answers from the targets already resolved, knows.
	passwords := map[string]string{}
	for i, t := range sw.Targets {
		u := t.URL
		if pw := t.Target.Password; pw != "" {
			name := t.Target.PasswordEnv
			if name == "" {
				name = fmt.Sprintf("SHAKEDOWN_PLAN_PW_%d", i)
				u = withParam(u, "password_env", name)
			}
			passwords[name] = pw
		}
		if t.Role == plan.Control {
			cfg.Control = t.Name
		}
		cfg.Targets = append(cfg.Targets, t.Name+"="+u)
	}
	cfg.Password = func(name string) string { return passwords[name] }
	targets, err := planTargets(cfg, run)
	if err != nil {
		return nil, nil, usage.Errorf("%s:%d: %v", sw.Path, sec.Line, err)
	}
	// The event kind that picks a watch file's figure is the planned
	// workload's.
	if cfg.Peak, cfg.PeakFrom, err = ReadPeak(peak, filepath.Dir(sw.Path), targets); err != nil {
		return nil, nil, usage.Errorf("%s:%d: production_peak: %v", sw.Path, peakLine, err)
	}
	return &cfg, targets, nil
}

// withParam adds key=value to a URL's query.
func withParam(u, key, value string) string {
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + key + "=" + url.QueryEscape(value)
}

// planTargets is Plan for a plan's run, whose options are named in its
// Options.
func planTargets(cfg Config, run runspec.Spec) ([]Target, error) {
	var given []string
	for _, o := range run.Options {
		given = append(given, o.Key)
	}
	if err := checkGiven(cfg, given); err != nil {
		return nil, err
	}
	return targetsOf(cfg, run)
}
