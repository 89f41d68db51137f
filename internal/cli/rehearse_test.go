package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Plans that cannot be rehearsed are refused before anything connects,
// with exit 2 and the file and line: copy's options that are wrong or
// missing, and a capacity step without a workload, among them.
func TestRehearseRefuses(t *testing.T) {
	const base = "source: {name: old, url: \"mysql://u@127.0.0.1:1/app\"}\ncandidates: [{name: new, url: \"mysql://u@127.0.0.1:2/app\"}]\n"
	cases := []struct {
		name, plan string
		args       []string
		want       string
	}{
		{"copy without allow-write", base + "data:\n  copy: {where: \"app.orders: id < 10\"}\n", nil,
			"p.yaml:4: data: copy writes the candidates (tables created, rows loaded): add allow-write: true"},
		{"copy option unknown", base + "data:\n  copy:\n    allow-write: true\n    thread: 4\n", nil,
			"p.yaml:6: data: copy: thread: unknown option (did you mean threads?)"},
		{"copy option bad", base + "data:\n  copy:\n    allow-write: true\n    sample: lots\n", nil,
			"p.yaml:6: data: copy: sample: "},
		{"capacity without a sweep", base + "capacity: {slo: \"p99 < 20ms\"}\n", nil, "p.yaml:3: capacity: needs a sweep: section"},
		{"missing capture", base + "replay: {capture: nowhere.capture}\n", nil, "p.yaml:3: replay: capture "},
		{"bad plan", base + "steps:\n  verfy: {skip: true}\n", nil, `p.yaml:4: unknown key "verfy" in steps (did you mean "verify"?)`},
		{"no plan", "", []string{}, "rehearse: name one plan file"},
		{"resume without rehearsals", base + "capacity: {slo: \"p99 < 20ms\"}\n", []string{"--resume"}, "holds no unfinished rehearsal"},
		{"resume with a plan", "", []string{"--resume", "p.yaml"}, "rehearse --resume takes the plan from the store"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "p.yaml")
			if err := os.WriteFile(path, []byte(c.plan), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Chdir(dir)
			args := c.args
			if args == nil {
				args = []string{"p.yaml"}
			}
			storePath := filepath.Join(dir, "s.db")
			if c.name == "resume without rehearsals" {
				// A refused plan makes the store but no rehearsal.
				if code, _, stderr := runCLI(context.Background(), "rehearse", "p.yaml", "--store", storePath); code != 2 {
					t.Fatalf("making the store: got exit %d (%s), want 2", code, stderr)
				}
			}
			code, _, stderr := runCLI(context.Background(), append([]string{"rehearse", "--store", storePath}, args...)...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("got exit %d and %q, want 2 and %q", code, stderr, c.want)
			}
		})
	}
}
