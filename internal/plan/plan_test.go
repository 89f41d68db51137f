package plan

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	_ "github.com/shakedown/shakedown/internal/workload/all"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/runspec"
)

const good = `name: durability
targets:
  - name: durable
    url: mysql://shakedown@127.0.0.1:3307/sbtest
    role: control
  - name: relaxed
    url: mysql://bench@127.0.0.1:3308/sbtest
    password_env: RELAXED_PW
options: {tables: 2}
workloads:
  - oltp_point_select
  - name: oltp_read_write
    options:
      table_size: 500
      tables: 4
  - name: oltp_read_write
    label: oltp_read_write-big
    options: {table_size: 5000}
threads: [1, 4]
time: 2s
warmup: 1
repeats: 2
cooldown: 0
prepare: true
order: sequential
`

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestParseGood(t *testing.T) {
	p, err := Parse("good.yaml", []byte(good), env(map[string]string{"RELAXED_PW": "s3cret"}), bench.Grammar{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if p.Name != "durability" || p.TimeS != 2 || p.WarmupS != 1 || p.Repeats != 2 || !p.Prepare || p.Order != Sequential {
		t.Errorf("got %+v", p)
	}
	if got, want := p.Control().Name, "durable"; got != want {
		t.Errorf("control: got %s, want %s", got, want)
	}
	if got := p.Targets[1].Target.Password; got != "s3cret" {
		t.Errorf("password from env: got %q, want it set", got)
	}
	if got := p.Targets[1].Role; got != Candidate {
		t.Errorf("default role: got %s, want candidate", got)
	}
	got := p.RunSpec(p.Workloads[1], 4).Args()
	want := []string{"oltp_read_write", "--threads=4", "--time=2", "--warmup-time=1", "--table-size=500", "--tables=4"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Args: got %q, want %q", got, want)
	}
	var labels []string
	for _, w := range p.Workloads {
		labels = append(labels, w.Name+"="+w.Label())
	}
	if got, want := strings.Join(labels, " "), "oltp_point_select=oltp_point_select oltp_read_write=oltp_read_write oltp_read_write=oltp_read_write-big"; got != want {
		t.Errorf("labels: got %s, want %s", got, want)
	}
	prep := p.PrepareSpec(p.Workloads[0])
	if got, want := []any{prep.Workload, prep.Threads, prep.Options}, []any{"oltp_point_select", 4, []runspec.Option{{Key: "tables", Value: "2"}}}; !reflect.DeepEqual(got, want) {
		t.Errorf("PrepareSpec: got %v, want %v", got, want)
	}
}

// TestParseCapacity: a sweep plan's capacity: section and its
// production_peak, as a rehearsal plan has them.
func TestParseCapacity(t *testing.T) {
	src := `targets:
  - {name: a, url: "mysql://u@127.0.0.1:1/d"}
  - {name: b, url: "mysql://u@127.0.0.1:2/d", role: control}
workloads: [oltp_point_select]
threads: [1, 4]
capacity: {slo: "p99<=20ms", step_time: 5s, warmup: 1, bracket: 5%, repeats: 1}
production_peak: 1200 qps
`
	p, err := Parse("p.yaml", []byte(src), func(string) string { return "" }, bench.Grammar{})
	if err != nil {
		t.Fatal(err)
	}
	want := Capacity{SLO: "p99<=20ms", StepTimeS: 5, WarmupS: 1, Bracket: 0.05, Repeats: 1, Line: 6}
	if p.Capacity == nil || *p.Capacity != want {
		t.Errorf("capacity: got %+v, want %+v", p.Capacity, want)
	}
	if p.ProductionPeak != "1200 qps" || p.ProductionPeakLine != 7 {
		t.Errorf("production_peak: got %q on line %d, want 1200 qps on line 7", p.ProductionPeak, p.ProductionPeakLine)
	}
}

// TestParseSplit: split: sets the margins it names and leaves the others
// at 0 (their defaults, sweep's timetable).
func TestParseSplit(t *testing.T) {
	src := `targets:
  - {name: a, url: "mysql://u@127.0.0.1:1/d", role: control}
workloads: [oltp_point_select]
threads: [1]
split: {connect: 30s, ready: 2}
`
	p, err := Parse("p.yaml", []byte(src), func(string) string { return "" }, bench.Grammar{})
	if err != nil {
		t.Fatal(err)
	}
	if want := (SplitMargins{ConnectS: 30, ReadyS: 2}); p.Split != want {
		t.Errorf("split: got %+v, want %+v", p.Split, want)
	}
}

func TestSteps(t *testing.T) {
	src := `targets:
  - {name: a, url: "mysql://u@h:1/d", role: control}
  - {name: b, url: "mysql://u@h:2/d"}
workloads: [oltp_point_select]
threads: [1, 8]
repeats: 2
`
	steps := func(order string) []string {
		p, err := Parse("p.yaml", []byte(src+order), env(nil), bench.Grammar{})
		if err != nil {
			t.Fatalf("Parse: %v", err)
		}
		var out []string
		for i, s := range p.Steps() {
			if s.Index != i+1 {
				t.Errorf("step %d has index %d", i+1, s.Index)
			}
			out = append(out, s.Target.Name+"/"+itoa(s.Threads)+"/"+itoa(s.Repeat))
		}
		return out
	}
	tests := []struct {
		name, order string
		want        []string
	}{
		// A B B A at the first level, B A A B at the next: neither target
		// always runs first.
		{"counterbalanced by default", "", []string{"a/1/1", "b/1/1", "b/1/2", "a/1/2", "b/8/1", "a/8/1", "a/8/2", "b/8/2"}},
		{"interleave", "order: interleave\n", []string{"a/1/1", "b/1/1", "a/1/2", "b/1/2", "a/8/1", "b/8/1", "a/8/2", "b/8/2"}},
		{"sequential", "order: sequential\n", []string{"a/1/1", "a/1/2", "a/8/1", "a/8/2", "b/1/1", "b/1/2", "b/8/1", "b/8/2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := steps(tc.order); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestStatisticsSettings(t *testing.T) {
	base := `targets:
  - {name: a, url: "mysql://u@127.0.0.1:1/d", role: control}
workloads: [oltp_point_select]
threads: [1]
`
	tests := []struct {
		name      string
		extra     string
		auto      bool
		repeats   int
		max       int
		threshold float64
		order     Order
		replace   bool
	}{
		{"defaults", "", false, 1, 0, 0.02, Counterbalanced, false},
		{"auto", "repeats: auto\n", true, 3, 10, 0.02, Counterbalanced, false},
		{"auto with a maximum", "repeats: auto\nmax_repeats: 6\n", true, 3, 6, 0.02, Counterbalanced, false},
		{"threshold in percent", "noise_threshold: 5%\n", false, 1, 0, 0.05, Counterbalanced, false},
		{"threshold as a fraction", "noise_threshold: 0.1\norder: interleave\n", false, 1, 0, 0.1, Interleave, false},
		{"prepare: replace", "prepare: replace\n", false, 1, 0, 0.02, Counterbalanced, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("p.yaml", []byte(base+tc.extra), env(nil), bench.Grammar{})
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if p.AutoRepeats != tc.auto || p.Repeats != tc.repeats || p.MaxRepeats != tc.max || p.NoiseThreshold != tc.threshold || p.Order != tc.order || p.PrepareReplace != tc.replace {
				t.Errorf("got auto %v, repeats %d, max %d, threshold %g, order %s, replace %v; want %v, %d, %d, %g, %s, %v",
					p.AutoRepeats, p.Repeats, p.MaxRepeats, p.NoiseThreshold, p.Order, p.PrepareReplace, tc.auto, tc.repeats, tc.max, tc.threshold, tc.order, tc.replace)
			}
		})
	}
}

// TestMoreSteps checks the extra rounds of repeats: auto: every target of
// each cell still open, turned round as the first rounds were.
func TestMoreSteps(t *testing.T) {
	src := `targets:
  - {name: a, url: "mysql://u@127.0.0.1:1/d", role: control}
  - {name: b, url: "mysql://u@127.0.0.1:2/d"}
workloads: [oltp_point_select]
threads: [1, 8]
repeats: auto
`
	p, err := Parse("p.yaml", []byte(src), env(nil), bench.Grammar{})
	if err != nil {
		t.Fatal(err)
	}
	first := p.Steps()
	if len(first) != 12 {
		t.Fatalf("first round: got %d steps, want 2 cells x 3 repeats x 2 targets", len(first))
	}
	more := p.MoreSteps(p.Cells()[1:], 4, len(first))
	var got []string
	for _, s := range more {
		got = append(got, itoa(s.Index)+":"+s.Target.Name+"/"+itoa(s.Threads)+"/"+itoa(s.Repeat))
	}
	if want := []string{"13:a/8/4", "14:b/8/4"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	base := func(extra string) string {
		return `targets:
  - name: a
    url: mysql://u@127.0.0.1:1/d
    role: control
  - name: b
    url: mysql://u@127.0.0.1:2/d
workloads:
  - oltp_point_select
threads: [1, 4]
` + extra
	}
	tests := []struct {
		name string
		src  string
		want []string // substrings of the message, in order
	}{
		{"typo in a key", base("repeat: 3\n"), []string{`p.yaml:10: unknown key "repeat" in plan (did you mean "repeats"?)`}},
		{"peak without capacity", base("production_peak: 1200\n"), []string{"p.yaml:10: production_peak is for the capacity search: add capacity:"}},
		{"capacity without slo", base("capacity: {step_time: 5}\n"), []string{`p.yaml:10: capacity: needs slo:, such as {slo: "p99<=20ms"}`}},
		{"capacity bracket", base("capacity: {slo: \"p99<=20ms\", bracket: 60%}\n"), []string{"p.yaml:10: capacity bracket: 60%: want 0.5% to 50%"}},
		{"capacity key", base("capacity: {slo: \"p99<=20ms\", repeat: 1}\n"), []string{`p.yaml:10: unknown key "repeat" in capacity (did you mean "repeats"?)`}},
		{"split not a mapping", base("split: 30s\n"), []string{"p.yaml:10: split: want its margins, such as {connect: 30s"}},
		{"split key", base("split: {conect: 30s}\n"), []string{`p.yaml:10: unknown key "conect" in split (did you mean "connect"?)`}},
		{"split below the floors", base("split: {connect: 0, settle: 0s, ready: 1}\n"),
			[]string{"p.yaml:10: split connect: 0: want 1s to 1h", "p.yaml:10: split settle: 0s: want 1s to 1h", "p.yaml:10: split ready: 1: want 2s to 1h"}},
		{"split too long", base("split:\n  connect: 2h\n"), []string{"p.yaml:11: split connect: 2h: want 1s to 1h"}},
		{"split not seconds", base("split: {settle: 1.5s}\n"), []string{`p.yaml:10: split settle: "1.5s": want whole seconds`}},
		{"typo in a target key", strings.Replace(base(""), "    role: control", "    rol: control", 1),
			[]string{"p.yaml:1: targets: no target has role: control", `p.yaml:4: unknown key "rol" in a target (did you mean "role"?)`}},
		{"unknown workload", strings.Replace(base(""), "oltp_point_select", "oltp_point_selekt", 1),
			[]string{`p.yaml:8: unknown workload "oltp_point_selekt" (did you mean "oltp_point_select"?); workloads: `, "oltp_read_write"}},
		{"unknown option", base("options: {tabels: 4}\n"),
			[]string{`p.yaml:10: options: no workload of the plan (oltp_point_select) has option "tabels" (did you mean "tables"?)`}},
		{"plan option no workload has", strings.Replace(base("options: {file: q.sql}\n"), "  - oltp_point_select\n", "  - oltp_point_select\n  - oltp_read_only\n", 1),
			[]string{`p.yaml:11: options: no workload of the plan (oltp_point_select, oltp_read_only) has option "file"`}},
		{"bad option value", base("options:\n  tables: 0\n"),
			[]string{"p.yaml:11: option tables of oltp_point_select: --tables must be >= 1"}},
		{"option the plan owns", base("options: {threads: 4}\n"), []string{"p.yaml:10: options: option threads is set by the plan"}},
		{"bad threads", strings.Replace(base(""), "[1, 4]", "[1, 0, 1, x]", 1),
			[]string{"p.yaml:9: threads: 0: want 1 to 100000", "threads: 1 is listed twice", `threads: "x" is not a whole number`}},
		{"two controls", strings.Replace(base(""), "url: mysql://u@127.0.0.1:2/d", "url: mysql://u@127.0.0.1:2/d\n    role: control", 1),
			[]string{"p.yaml:5: targets: a and b are both role: control"}},
		{"password in url", strings.Replace(base(""), "mysql://u@127.0.0.1:2/d", "mysql://u:hunter2@127.0.0.1:2/d", 1),
			[]string{"p.yaml:6: url: the URL holds a password"}},
		{"unset password_env", strings.Replace(base(""), "url: mysql://u@127.0.0.1:2/d", "url: mysql://u@127.0.0.1:2/d\n    password_env: NOPE", 1),
			[]string{"p.yaml:7: password_env: environment variable NOPE is not set"}},
		{"missing sections", "threads: [1]\n", []string{"p.yaml: missing targets:", "p.yaml: missing workloads:"}},
		{"bad yaml", "targets: [\n", []string{"p.yaml:1: not valid YAML"}},
		{"bad time", base("time: 1.5s\n"), []string{`p.yaml:10: time: "1.5s": want whole seconds`}},
		{"bad order", base("order: random\n"), []string{`p.yaml:10: order: "random": want counterbalanced (the default), interleave or sequential`}},
		{"order typo", base("order: counterbalance\n"), []string{`p.yaml:10: order: "counterbalance" (did you mean "counterbalanced"?)`}},
		{"noise threshold above 50%", base("repeats: 1\nnoise_threshold: 60%\n"), []string{`p.yaml:11: noise_threshold: 60%: want 0 to 50%`}},
		{"noise threshold below 0", base("repeats: 1\nnoise_threshold: -0.01\n"), []string{`p.yaml:11: noise_threshold: -0.01: want 0 to 50%`}},
		{"noise threshold not a share", base("noise_threshold: lots\n"), []string{`p.yaml:10: noise_threshold: "lots": want a share such as 2% or 0.02`}},
		{"max_repeats without auto", base("repeats: 3\nmax_repeats: 8\n"), []string{`p.yaml:11: max_repeats is for repeats: auto`}},
		{"max_repeats too low", base("repeats: auto\nmax_repeats: 2\n"), []string{`p.yaml:11: max_repeats: 2: want 3 to 1000`}},
		{"repeats neither a number nor auto", base("repeats: many\n"), []string{`p.yaml:10: repeats: "many" is not a whole number`}},
		{"duplicate key", base("repeats: 1\nrepeats: 2\n"), []string{"p.yaml:11: plan: key repeats: given twice (first on line 10)"}},
		{"workload twice", strings.Replace(base(""), "  - oltp_point_select\n", "  - oltp_point_select\n  - name: oltp_point_select\n    options: {tables: 2}\n", 1),
			[]string{"p.yaml:9: workload oltp_point_select is listed twice (first on line 8); results are grouped by it: give each configuration its own label, e.g. label: oltp_point_select-2"}},
		{"label twice", strings.Replace(base(""), "  - oltp_point_select\n", "  - {name: oltp_point_select, label: small}\n  - {name: oltp_point_select, label: small}\n", 1),
			[]string{"p.yaml:9: label small is used twice (first on line 8)"}},
		{"label of another workload", strings.Replace(base(""), "  - oltp_point_select\n", "  - {name: oltp_point_select, label: oltp_read_write}\n", 1),
			[]string{"p.yaml:8: workload oltp_point_select: label oltp_read_write is the name of another workload"}},
		{"bad label", strings.Replace(base(""), "  - oltp_point_select\n", "  - {name: oltp_point_select, label: \"my test\"}\n", 1),
			[]string{`p.yaml:8: workload oltp_point_select: label "my test": use letters, digits, '_', '-' and '.' only`}},
		{"everything at once", strings.Replace(base("tme: 5\n"), "oltp_point_select", "oltp_point_selec", 1),
			[]string{`p.yaml:8: unknown workload "oltp_point_selec"`, `p.yaml:10: unknown key "tme" in plan`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tc.src), env(nil), bench.Grammar{})
			if err == nil {
				t.Fatalf("got no error, want one containing %q", tc.want)
			}
			var pe *Error
			if !errors.As(err, &pe) || !pe.Usage() {
				t.Errorf("got %T, want a usage *Error", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "hunter2") {
				t.Errorf("the message shows the password: %s", msg)
			}
			rest := msg
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("got %q, want it to contain %q (in order)", msg, w)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// TestBadTimeOneError: a time that does not parse is one error, on its
// line; it is not also read as time: 0 and told that it needs events.
func TestBadTimeOneError(t *testing.T) {
	src := `targets:
  - {name: a, url: "mysql://u@127.0.0.1:1/d", role: control}
workloads: [oltp_point_select]
threads: [1]
time: %s
`
	tests := []struct{ time, want string }{
		{"abc", `p.yaml:5: time: "abc": want whole seconds, such as 10 or "2m"`},
		{"1.5s", `p.yaml:5: time: "1.5s": want whole seconds, such as 10 or "2m"`},
		{"-5", "p.yaml:5: time: -5: want seconds >= 0"},
		{"0", "p.yaml:5: time: 0 needs events: N: a step needs a limit"},
	}
	for _, tc := range tests {
		t.Run(tc.time, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(fmt.Sprintf(src, tc.time)), env(nil), bench.Grammar{})
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a plan error", err)
			}
			if got := err.Error(); len(pe.Problems) != 1 || !strings.Contains(got, tc.want) {
				t.Errorf("got %d problem(s): %s\nwant one: %s", len(pe.Problems), got, tc.want)
			}
		})
	}
}

// A workload checks some options against each other (sql needs --file):
// they are parsed together, and an error that names no given option is
// placed on the workload's line.
func TestOptionsCheckedTogether(t *testing.T) {
	sqlFile := t.TempDir() + "/load.sql"
	if err := os.WriteFile(sqlFile, []byte("SELECT 1;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	plan := func(opts string) string {
		return `targets:
  - name: a
    url: mysql://u@127.0.0.1:1/d
    role: control
workloads:
  - name: sql
    options: ` + opts + `
threads: [1]
`
	}
	if _, err := Parse("p.yaml", []byte(plan("{file: "+sqlFile+", mix: sequence}")), env(nil), bench.Grammar{}); err != nil {
		t.Errorf("sql with --file and --mix: got %v, want no error", err)
	}
	_, err := Parse("p.yaml", []byte(plan("{mix: sequence}")), env(nil), bench.Grammar{})
	if err == nil || !strings.Contains(err.Error(), "p.yaml:6: workload sql:") || !strings.Contains(err.Error(), "--file") {
		t.Errorf("sql without --file: got %v, want an error on line 6 naming --file", err)
	}
}

// TestPlanOptionsApplyWhereTaken: a plan-level option is a default for each
// workload that has it and is left out for one that does not, so that
// "tables: 4" can be written once beside a sql workload; a workload's own
// option still wins.
func TestPlanOptionsApplyWhereTaken(t *testing.T) {
	src := `targets:
  - name: a
    url: mysql://u@127.0.0.1:1/d
    role: control
options: {tables: 4, table_size: 100, mysql-ignore-errors: all}
workloads:
  - oltp_read_only
  - name: oltp_point_select
    options: {table-size: 50}
  - name: sql
    options: {file: FILE}
threads: [1]
prepare: true
`
	file := filepath.Join(t.TempDir(), "q.sql")
	if err := os.WriteFile(file, []byte("SELECT 1;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Parse("p.yaml", []byte(strings.Replace(src, "FILE", file, 1)), env(nil), bench.Grammar{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	tests := []struct {
		name string
		w    int
		want []string
	}{
		{"sysbench workload takes them all", 0, []string{"--tables=4", "--table-size=100", "--mysql-ignore-errors=all"}},
		{"own option wins", 1, []string{"--tables=4", "--mysql-ignore-errors=all", "--table-size=50"}},
		{"sql takes only the engine's", 2, []string{"--mysql-ignore-errors=all", "--file=" + file}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.RunSpec(p.Workloads[tt.w], 1).Args()[3:]
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
