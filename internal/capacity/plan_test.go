package capacity

import (
	"slices"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/plan"
)

// TestFromPlan: a sweep plan's capacity: section searches its first
// workload at its highest thread level on every target, compared with
// the target whose role is control (not the first); what the section
// leaves out comes from the defaults handed in; the run lines carry no
// password while Password gives each target its own.
func TestFromPlan(t *testing.T) {
	src := `targets:
  - {name: new, url: "mysql://u@127.0.0.1:2/app", password_env: NEW_PW}
  - {name: old, url: "mysql://u@127.0.0.1:1/app", role: control}
workloads:
  - {name: oltp_point_select, options: {tables: 2}}
  - oltp_read_only
threads: [16, 1, 4]
capacity: {slo: "p99<=20ms", step_time: 3, bracket: 5%}
production_peak: 900/s
`
	env := map[string]string{"NEW_PW": "new-secret"}
	p, err := plan.Parse("p.yaml", []byte(src), func(k string) string { return env[k] }, bench.Grammar{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, targets, err := FromPlan(p.Capacity, p, p.ProductionPeak, p.ProductionPeakLine, Config{Warmup: 2, Time: 10, Version: "v", Options: Options{Bracket: 0.02, Repeats: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Control != "old" || cfg.Time != 3 || cfg.Warmup != 2 || cfg.Options.Bracket != 0.05 || cfg.Options.Repeats != 2 || cfg.Peak != 900 || cfg.Version != "v" {
		t.Errorf("got control %q, step %d s after %d s, bracket %g, repeats %d, peak %g, version %q; want old, 3 after 2, 0.05, 2, 900, v",
			cfg.Control, cfg.Time, cfg.Warmup, cfg.Options.Bracket, cfg.Options.Repeats, cfg.Peak, cfg.Version)
	}
	if len(targets) != 2 || targets[0].Name != "new" || targets[1].Name != "old" || targets[0].Workload != "oltp_point_select" {
		t.Fatalf("got targets %+v, want new and old searching oltp_point_select", targets)
	}
	for _, tg := range targets {
		args := tg.Spec.Args()
		line := strings.Join(args, " ")
		if !slices.Contains(args, "--threads=16") || !slices.Contains(args, "--tables=2") || strings.Contains(line, "secret") {
			t.Errorf("%s: got run line %q, want --threads=16 and --tables=2 and no password", tg.Name, line)
		}
	}
	_, name, _ := strings.Cut(strings.Join(targets[0].Spec.Args(), " "), "password_env=")
	name, _, _ = strings.Cut(name, " ")
	if got := cfg.Password(name); name == "" || got != "new-secret" {
		t.Errorf("Password(%q): got %q, want the value of the plan's NEW_PW", name, got)
	}

	// No section, no search; a bad peak names its line.
	if cfg, _, err := FromPlan(nil, p, "", 0, Config{}); cfg != nil || err != nil {
		t.Errorf("no section: got %v, %v; want nothing", cfg, err)
	}
	if _, _, err := FromPlan(p.Capacity, p, "lots", 9, Config{}); err == nil || !strings.Contains(err.Error(), "p.yaml:9: production_peak: ") {
		t.Errorf("bad peak: got %v, want an error naming p.yaml:9", err)
	}
}
