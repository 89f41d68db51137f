package rehearse

import (
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/engine"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
)

// The capacity step's settings are read before anything connects: a bad
// SLO, peak or a plan without a sweep is refused with its line; a good
// plan gives run lines for the source and the candidates that carry no
// password, while the step's Password gives each target its own.
func TestCapacityPlan(t *testing.T) {
	const targets = "source: {name: old, url: \"mysql://u@127.0.0.1:1/app\", password_env: OLD_PW}\n" +
		"candidates: [{name: new, url: \"mysql://u@127.0.0.1:2/app\", password_env: NEW_PW}]\n"
	const sweep = "sweep:\n  workloads: [{name: oltp_point_select, options: {tables: 2}}]\n  threads: [1, 4]\n  time: 1\n"
	cases := []struct {
		name, plan string
		want       string // the error; "" for none
	}{
		{"no sweep", targets + "capacity: {slo: \"p99<=20ms\"}\n", "p.yaml:3: capacity: needs a sweep: section"},
		{"bad slo", targets + sweep + "capacity: {slo: \"fast\"}\n", "p.yaml:7: capacity slo: "},
		{"bad peak", targets + sweep + "capacity: {slo: \"p99<=20ms\"}\nproduction_peak: lots\n", "p.yaml:8: production_peak: \"lots\": want events per second"},
		{"good", targets + sweep + "capacity: {slo: \"p99<=20ms\", step_time: 1, warmup: 0}\nproduction_peak: 1200 qps\n", ""},
	}
	env := map[string]string{"OLD_PW": "old-secret", "NEW_PW": "new-secret"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := plan.ParseRehearsal("p.yaml", []byte(c.plan), func(k string) string { return env[k] }, engine.Grammar{})
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			cfg, tgs, err := capacityPlan(p, "test")
			if c.want != "" {
				if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("got %v, want a usage error with %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Peak != 1200 || cfg.Time != 1 || cfg.Control != "old" || len(tgs) != 2 {
				t.Fatalf("got peak %v, step %ds, control %q, %d targets; want 1200, 1s, old, 2", cfg.Peak, cfg.Time, cfg.Control, len(tgs))
			}
			for i, tg := range tgs {
				line := strings.Join(tg.Args, " ")
				if strings.Contains(line, "secret") || !strings.Contains(line, "--threads=4") || !strings.Contains(line, "--tables=2") {
					t.Errorf("target %s: got run line %q, want --threads=4 --tables=2 and no password", tg.Name, line)
				}
				var u string
				for _, a := range tg.Args {
					if v, ok := strings.CutPrefix(a, "--target="); ok {
						u = v
					}
				}
				pt, err := target.Parse(u)
				if err != nil {
					t.Fatalf("target %s: %v", tg.Name, err)
				}
				if err := pt.LoadPassword(cfg.Password); err != nil {
					t.Fatal(err)
				}
				if want := []string{"old-secret", "new-secret"}[i]; pt.Password != want {
					t.Errorf("target %s: got password %q, want %q", tg.Name, pt.Password, want)
				}
			}
		})
	}
}
