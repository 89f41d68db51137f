package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/plan"
)

// TestSweepHelpPlanParses takes the example plan out of "sweep --help" as a
// reader would copy it and checks that it is a valid plan: a sql workload
// beside plan-level options for the sysbench ones, and max_repeats with
// repeats: auto.
func TestSweepHelpPlanParses(t *testing.T) {
	_, after, ok := strings.Cut(sweepHelp, "A plan:\n\n")
	if !ok {
		t.Fatal(`got no "A plan:" in sweep --help, want an example plan`)
	}
	example, _, _ := strings.Cut(after, "\nOptions:")
	var lines []string
	for _, l := range strings.Split(example, "\n") {
		lines = append(lines, strings.TrimPrefix(l, "  "))
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "orders.sql"), []byte("SELECT 1;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The sql workload reads its file at parse time, relative to the
	// working directory, as "shakedown sweep" run from the plan's folder.
	t.Chdir(dir)
	src := strings.Join(lines, "\n")
	p, err := plan.Parse("help.yaml", []byte(src), func(k string) string {
		if k == "RELAXED_PW" {
			return "pw"
		}
		return ""
	}, bench.Grammar{})
	if err != nil {
		t.Fatalf("the plan in sweep --help: got %v, want it valid:\n%s", err, src)
	}
	if got, want := len(p.Workloads), 3; got != want {
		t.Errorf("workloads: got %d, want %d", got, want)
	}
	for _, a := range p.RunSpec(p.Workloads[2], 1).Args() {
		if strings.HasPrefix(a, "--tables") || strings.HasPrefix(a, "--table-size") {
			t.Errorf("sql step: got %s, want plan-level tables options left out", a)
		}
	}
}
