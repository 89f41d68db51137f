package plan

import (
	"errors"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	_ "github.com/shakedown/shakedown/internal/workload/all"
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
	p, err := Parse("good.yaml", []byte(good), env(map[string]string{"RELAXED_PW": "s3cret"}))
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
	got := p.Args(p.Workloads[1], 4)
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
	got = p.PrepareArgs(p.Workloads[0])
	want = []string{"oltp_point_select", "--threads=4", "--tables=2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PrepareArgs: got %q, want %q", got, want)
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
		p, err := Parse("p.yaml", []byte(src+order), env(nil))
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
		{"interleave by default", "", []string{"a/1/1", "b/1/1", "a/1/2", "b/1/2", "a/8/1", "b/8/1", "a/8/2", "b/8/2"}},
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
		{"typo in a target key", strings.Replace(base(""), "    role: control", "    rol: control", 1),
			[]string{"p.yaml:1: targets: no target has role: control", `p.yaml:4: unknown key "rol" in a target (did you mean "role"?)`}},
		{"unknown workload", strings.Replace(base(""), "oltp_point_select", "oltp_point_selekt", 1),
			[]string{`p.yaml:8: unknown workload "oltp_point_selekt" (did you mean "oltp_point_select"?); workloads: `, "oltp_read_write"}},
		{"unknown option", base("options: {tabels: 4}\n"),
			[]string{`p.yaml:10: oltp_point_select has no option "tabels" (did you mean "tables"?)`}},
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
		{"bad order", base("order: random\n"), []string{`p.yaml:10: order: "random": want interleave or sequential`}},
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
			_, err := Parse("p.yaml", []byte(tc.src), env(nil))
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
	if _, err := Parse("p.yaml", []byte(plan("{file: "+sqlFile+", mix: sequence}")), env(nil)); err != nil {
		t.Errorf("sql with --file and --mix: got %v, want no error", err)
	}
	_, err := Parse("p.yaml", []byte(plan("{mix: sequence}")), env(nil))
	if err == nil || !strings.Contains(err.Error(), "p.yaml:6: workload sql:") || !strings.Contains(err.Error(), "--file") {
		t.Errorf("sql without --file: got %v, want an error on line 6 naming --file", err)
	}
}
