package plan

import (
	"strings"
	"testing"

	_ "github.com/shakedown/shakedown/internal/workload/all"

	"github.com/shakedown/shakedown/internal/bench"
)

// FuzzParse: a plan file is outside input. Whatever it holds, Parse
// returns a plan or an error that names the file, and never panics; a plan
// it accepts has targets, workloads and thread levels, and steps.
func FuzzParse(f *testing.F) {
	f.Add(good)
	f.Add("targets:\n  - name: a\n\turl: x\n")
	f.Add("targets: [\n")
	f.Add("name: x\ntargets:\n  - {name: a, url: 'mysql://u@h/db', role: control}\nworkloads: [oltp_point_select]\nthreads: [1, 4]\nrepeats: auto\nmax_repeats: 3\nnoise_threshold: 3%\n")
	f.Add("workloads:\n  - name: sql\n    label: a\n    options: {file: x.sql}\n")
	getenv := func(string) string { return "pw" }
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Parse("plan.yaml", []byte(src), getenv, bench.Grammar{})
		if err != nil {
			if !strings.Contains(err.Error(), "plan.yaml") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		if len(p.Targets) == 0 || len(p.Workloads) == 0 || len(p.Threads) == 0 {
			t.Errorf("accepted a plan without targets, workloads or threads: %+v", p)
		}
		if len(p.Steps()) == 0 {
			t.Errorf("accepted a plan with no steps")
		}
	})
}
