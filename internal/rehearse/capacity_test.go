package rehearse

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/monitor"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
)

// The capacity step's settings are read before anything connects: a bad
// SLO, peak or a plan without a sweep is refused with its line; a good
// plan gives run lines for the source and the candidates that carry no
// password, while the step's Password gives each target its own. The
// production peak is read as capacity --peak reads it: a number (with a
// rate's suffix or none) or a watch --json file, a relative one from the
// plan's directory, whose origin the report keeps.
func TestCapacityPlan(t *testing.T) {
	const targets = "source: {name: old, url: \"mysql://u@127.0.0.1:1/app\", password_env: OLD_PW}\n" +
		"candidates: [{name: new, url: \"mysql://u@127.0.0.1:2/app\", password_env: NEW_PW}]\n"
	const sweep = "sweep:\n  workloads: [{name: oltp_point_select, options: {tables: 2}}]\n  threads: [1, 4]\n  time: 1\n"
	const bulk = "sweep:\n  workloads: [bulk_insert]\n  threads: [1, 4]\n  time: 1\n"
	const good = targets + sweep + "capacity: {slo: \"p99<=20ms\", step_time: 1, warmup: 0}\nproduction_peak: "
	// The plan's directory holds a day of watch --json (qps peaks at
	// 1200 on its second line; an event of oltp_point_select is one
	// statement) and an empty file; the other directory holds the plan
	// that names the first by an absolute path.
	dir, other := t.TempDir(), t.TempDir()
	at := time.Date(2026, 11, 25, 20, 14, 56, 0, time.UTC)
	var day strings.Builder
	for i, v := range []float64{700, 1200, 900} {
		b, err := json.Marshal(monitor.Record(result.Sample{AtS: float64(i + 1), ElapsedS: 1, Values: map[string]float64{"qps": v, "tps": v / 10}, Wall: at.Add(time.Duration(i) * time.Second)}))
		if err != nil {
			t.Fatal(err)
		}
		day.Write(append(b, '\n'))
	}
	prod, empty := filepath.Join(dir, "prod.jsonl"), filepath.Join(dir, "empty.jsonl")
	for f, text := range map[string]string{prod: day.String(), empty: ""} {
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, plan string
		dir        string  // the plan's directory; dir when ""
		peak       float64 // the peak read
		from       bool    // whether it came from prod.jsonl
		want       string  // the error; "" for none
	}{
		{name: "no sweep", plan: targets + "capacity: {slo: \"p99<=20ms\"}\n", want: "p.yaml:3: capacity: needs a sweep: section"},
		{name: "bad slo", plan: targets + sweep + "capacity: {slo: \"fast\"}\n", want: "p.yaml:7: capacity slo: "},
		{name: "a number", plan: good + "1200\n", peak: 1200},
		{name: "a number with qps", plan: good + "1200 qps\n", peak: 1200},
		{name: "a number a second", plan: good + "1200/s\n", peak: 1200},
		{name: "no peak", plan: good[:len(good)-len("production_peak: ")], peak: 0},
		{name: "a watch file", plan: good + prod + "\n", dir: other, peak: 1200, from: true},
		{name: "a watch file relative to the plan", plan: good + "prod.jsonl\n", peak: 1200, from: true},
		{name: "a negative number", plan: good + "-5 qps\n", want: "p.yaml:8: production_peak: -5 qps: the production peak must be a number >= 0"},
		{name: "neither a number nor a file", plan: good + "lots\n", want: "p.yaml:8: production_peak: " + filepath.Join(dir, "lots") + ": no such file"},
		{name: "a missing file", plan: good + "prod.jsonl\n", dir: other, want: "p.yaml:8: production_peak: " + filepath.Join(other, "prod.jsonl") + ": no such file"},
		{name: "a file with no samples", plan: good + "empty.jsonl\n", want: "p.yaml:8: production_peak: " + empty + ": holds no sample"},
		{name: "an event neither transaction nor statement", plan: targets + bulk + "capacity: {slo: \"p99<=20ms\"}\nproduction_peak: prod.jsonl\n",
			want: "p.yaml:8: production_peak: " + prod + ": an event of bulk_insert is neither one transaction nor one statement"},
	}
	env := map[string]string{"OLD_PW": "old-secret", "NEW_PW": "new-secret"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pdir := dir
			if c.dir != "" {
				pdir = c.dir
			}
			p, err := plan.ParseRehearsal(filepath.Join(pdir, "p.yaml"), []byte(c.plan), func(k string) string { return env[k] }, bench.Grammar{})
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
			if cfg.Peak != c.peak || cfg.Time != 1 || cfg.Control != "old" || len(tgs) != 2 {
				t.Fatalf("got peak %v, step %ds, control %q, %d targets; want %v, 1s, old, 2", cfg.Peak, cfg.Time, cfg.Control, len(tgs), c.peak)
			}
			switch from := cfg.PeakFrom; {
			case !c.from && from != nil:
				t.Errorf("got the peak from %+v, want none for a number", from)
			case c.from && (from == nil || from.File != prod || from.Key != "qps" || from.Line != 2 || from.Samples != 3):
				t.Errorf("got the peak from %+v, want qps of 3 samples in %s, line 2", from, prod)
			}
			for i, tg := range tgs {
				args := tg.Spec.Args()
				line := strings.Join(args, " ")
				if strings.Contains(line, "secret") || !strings.Contains(line, "--threads=4") || !strings.Contains(line, "--tables=2") {
					t.Errorf("target %s: got run line %q, want --threads=4 --tables=2 and no password", tg.Name, line)
				}
				var u string
				for _, a := range args {
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
