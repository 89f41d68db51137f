package plan

import (
	"errors"
	"strings"
	"testing"

	_ "github.com/shakedown/shakedown/internal/workload/all"

	"github.com/shakedown/shakedown/internal/bench"
)

const goodRehearsal = `name: app-move
source:
  name: prod
  url: mysql://shakedown@127.0.0.1:3307/app
candidates:
  - name: new
    url: mysql://shakedown@127.0.0.1:3308/app
    password_env: NEW_PW
databases: [app]
data: present
replay:
  capture: app.capture
  speed: 2
sweep:
  workloads: [oltp_point_select]
  threads: [1, 2]
  time: 2
  options: {tables: 1, table-size: 100}
production_peak: 1200 qps
steps:
  check: {continue_on_failure: true}
  analyze: {skip: true}
`

func TestParseRehearsal(t *testing.T) {
	getenv := func(string) string { return "pw" }
	r, err := ParseRehearsal("plans/app.yaml", []byte(goodRehearsal), getenv, bench.Grammar{})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what      string
		got, want any
	}{
		{"name", r.Name, "app-move"},
		{"source", r.Source.Name + " " + string(r.Source.Role), "prod control"},
		{"candidates", len(r.Candidates), 1},
		{"candidate", r.Candidates[0].Name + " " + string(r.Candidates[0].Role), "new candidate"},
		{"candidate password", r.Candidates[0].Target.Password, "pw"},
		{"databases", strings.Join(r.Databases, ","), "app"},
		{"data", r.Data.Mode, DataPresent},
		{"capture", r.Replay.Capture, "plans/app.capture"},
		{"speed", r.Replay.Speed, 2.0},
		{"sweep targets", len(r.Sweep.Targets), 2},
		{"sweep name", r.Sweep.Name, "app-move"},
		{"sweep threads", len(r.Sweep.Threads), 2},
		{"sweep steps", len(r.Sweep.Steps()), 12}, // 2 targets x 2 levels x 3 repeats
		{"sweep repeats", r.Sweep.AutoRepeats, true},
		{"capacity", r.Capacity == nil, true},
		{"peak", r.ProductionPeak, "1200 qps"},
		{"check goes on", r.Steps[StepCheck].ContinueOnFailure, true},
		{"analyze skipped", r.Steps[StepAnalyze].Skip, true},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
		}
	}
	// The sweep's plan text is stored with the sweep and parsed again on
	// its resume: it must stand alone.
	if _, err := Parse(r.Sweep.Path, r.Sweep.Source, getenv, bench.Grammar{}); err != nil {
		t.Errorf("the sweep's own plan text does not parse: %v\n%s", err, r.Sweep.Source)
	}
}

// TestRehearsalSweepRepeats: a rehearsal's sweep that gives no repeats
// runs repeats: auto, so that its levels can reach a verdict (a fixed 1
// never does); one that gives them keeps them. The stored plan text says
// so, so that a resume runs the same sweep.
func TestRehearsalSweepRepeats(t *testing.T) {
	tests := []struct {
		name, extra string
		auto        bool
		repeats     int
		max         int
	}{
		{"no repeats: auto", "", true, MinAutoRepeats, DefaultMaxRepeats},
		{"a fixed number", "  repeats: 2\n", false, 2, 0},
		{"auto with a maximum", "  repeats: auto\n  max_repeats: 5\n", true, MinAutoRepeats, 5},
		{"a maximum alone", "  max_repeats: 6\n", true, MinAutoRepeats, 6},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(goodRehearsal, "  time: 2\n", "  time: 2\n"+tc.extra, 1)
			getenv := func(string) string { return "pw" }
			r, err := ParseRehearsal("app.yaml", []byte(src), getenv, bench.Grammar{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Sweep.AutoRepeats != tc.auto || r.Sweep.Repeats != tc.repeats || r.Sweep.MaxRepeats != tc.max {
				t.Errorf("got auto %v, repeats %d, max %d; want %v, %d, %d", r.Sweep.AutoRepeats, r.Sweep.Repeats, r.Sweep.MaxRepeats, tc.auto, tc.repeats, tc.max)
			}
			again, err := Parse(r.Sweep.Path, r.Sweep.Source, getenv, bench.Grammar{})
			if err != nil {
				t.Fatalf("the sweep's own plan text does not parse: %v\n%s", err, r.Sweep.Source)
			}
			if again.AutoRepeats != tc.auto || again.Repeats != tc.repeats || again.MaxRepeats != tc.max {
				t.Errorf("the stored plan text: got auto %v, repeats %d, max %d; want %v, %d, %d\n%s", again.AutoRepeats, again.Repeats, again.MaxRepeats, tc.auto, tc.repeats, tc.max, r.Sweep.Source)
			}
		})
	}
}

func TestParseRehearsalCopyAndCapacity(t *testing.T) {
	src := `source: {name: a, url: "mysql://u@h:1/app"}
candidates: [{name: b, url: "mysql://u@h:2/app"}]
data:
  copy: {where: "app.orders: id < 10", follow_fk: true}
capacity: {slo: "p99 < 20ms"}
`
	r, err := ParseRehearsal("p.yaml", []byte(src), func(string) string { return "" }, bench.Grammar{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Data.Mode != DataCopy || len(r.Data.Options) != 2 || r.Data.Options[1].Key != "follow-fk" || r.Data.Line != 4 {
		t.Errorf("data: got %+v, want copy with where and follow-fk on line 4", r.Data)
	}
	if r.Capacity == nil || r.Capacity.SLO != "p99 < 20ms" || r.Capacity.Line != 5 {
		t.Errorf("capacity: got %+v, want slo p99 < 20ms on line 5", r.Capacity)
	}
}

func TestParseRehearsalErrors(t *testing.T) {
	base := "source: {name: a, url: \"mysql://u@h:1/app\"}\ncandidates: [{name: b, url: \"mysql://u@h:2/app\"}]\n"
	cases := []struct {
		name, src string
		want      []string
	}{
		{"empty", "", []string{"p.yaml: the plan must be a mapping"}},
		{"no candidates", "source: {name: a, url: \"mysql://u@h:1/app\"}\n", []string{"p.yaml: missing candidates:"}},
		{"unknown key", base + "sweeep: {}\n", []string{`p.yaml:3: unknown key "sweeep" in rehearsal plan (did you mean "sweep"?)`}},
		{"role given", "source: {name: a, url: \"mysql://u@h:1/app\", role: candidate}\ncandidates: [{name: b, url: \"mysql://u@h:2/app\"}]\n", []string{"p.yaml:1: source: leave role: out"}},
		{"password in url", "source: {name: a, url: \"mysql://u:secret@h:1/app\"}\ncandidates: [{name: b, url: \"mysql://u@h:2/app\"}]\n", []string{"p.yaml:1: url: the URL holds a password"}},
		{"bad data", base + "data: presnt\n", []string{`p.yaml:3: data: "presnt" (did you mean "present"?)`}},
		{"sweep threads", base + "sweep:\n  workloads: [oltp_point_select]\n  threads: [0]\n", []string{"p.yaml:5: threads: 0: want 1 to"}},
		{"sweep workload", base + "sweep:\n  workloads: [oltp_point_selct]\n  threads: [1]\n", []string{`p.yaml:4: unknown workload "oltp_point_selct"`}},
		{"sweep missing", base + "sweep:\n  threads: [1]\n", []string{"p.yaml: sweep: missing workloads:"}},
		{"sweep targets", base + "sweep:\n  targets: []\n  workloads: [oltp_point_select]\n  threads: [1]\n", []string{"p.yaml:4: sweep: leave targets: out"}},
		{"capacity in the sweep", base + "sweep:\n  workloads: [oltp_point_select]\n  threads: [1]\n  capacity: {slo: \"p99<=20ms\"}\n", []string{"p.yaml:6: sweep: move capacity: out of sweep: to the rehearsal plan's top level"}},
		{"cleanup before capacity", base + "sweep:\n  workloads: [oltp_point_select]\n  threads: [1]\n  prepare: true\n  cleanup: true\ncapacity: {slo: \"p99<=20ms\"}\n",
			[]string{"p.yaml:8: capacity: the capacity step searches on the data the sweep prepares, which the sweep's cleanup: true drops before it"}},
		{"replay without capture", base + "replay: {speed: 1}\n", []string{"p.yaml:3: replay: needs capture: FILE"}},
		{"unknown step", base + "steps:\n  verfy: {skip: true}\n", []string{`p.yaml:4: unknown key "verfy" in steps (did you mean "verify"?)`}},
		{"skip readiness", base + "steps:\n  readiness: {skip: true}\n", []string{"p.yaml:4: steps: readiness: the rehearsal ends on the readiness page"}},
		{"bad bool", base + "steps:\n  check: {continue_on_failure: maybe}\n", []string{`p.yaml:4: steps: check: continue_on_failure: "maybe": want true or false`}},
		{"tab", base + "data:\n\tpresent\n", []string{"p.yaml:4: not valid YAML"}},
		{"every problem", "source: {name: a}\ncandidates: [{name: b, url: \"mysql://u@h:2/app\"}]\ndata: x\n", []string{"p.yaml:1: target a needs a url:", `p.yaml:3: data: "x"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseRehearsal("p.yaml", []byte(c.src), func(string) string { return "" }, bench.Grammar{})
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a plan error", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to hold %q", err, w)
				}
			}
		})
	}
}

// TestParseRehearsalSweepCleanup: a sweep that drops its data at its end
// is refused only where the capacity step runs after it on that data.
func TestParseRehearsalSweepCleanup(t *testing.T) {
	base := "source: {name: a, url: \"mysql://u@h:1/app\"}\ncandidates: [{name: b, url: \"mysql://u@h:2/app\"}]\n" +
		"sweep:\n  workloads: [oltp_point_select]\n  threads: [1]\n  prepare: true\n  cleanup: true\n"
	for _, src := range []string{base, base + "capacity: {slo: \"p99<=20ms\"}\nsteps:\n  capacity: {skip: true}\n"} {
		r, err := ParseRehearsal("p.yaml", []byte(src), func(string) string { return "" }, bench.Grammar{})
		if err != nil || r.Sweep == nil || !r.Sweep.Cleanup {
			t.Errorf("%s: got %v, want the plan with the sweep's cleanup", src, err)
		}
	}
}

// FuzzParseRehearsal: a rehearsal plan is outside input. ParseRehearsal
// returns a plan with a source and candidates, or an error naming the file,
// and never panics.
func FuzzParseRehearsal(f *testing.F) {
	f.Add(goodRehearsal)
	f.Add("source: {name: a, url: \"mysql://u@h:1/app\"}\ncandidates: [{name: b}]\ndata: {copy: }\n")
	f.Add("source: []\ncandidates: {}\nsweep: [1]\nsteps: {check: 1}\n")
	f.Fuzz(func(t *testing.T, src string) {
		r, err := ParseRehearsal("p.yaml", []byte(src), func(string) string { return "pw" }, bench.Grammar{})
		if err != nil {
			if !strings.Contains(err.Error(), "p.yaml") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		if r.Source == nil || r.Source.Role != Control || len(r.Candidates) == 0 {
			t.Errorf("accepted a plan without a source or candidates: %+v", r)
		}
	})
}
