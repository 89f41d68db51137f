package rehearse

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/store"
)

// A step that fails stops the chain with its reason, and the page is made
// all the same; with continue_on_failure the chain goes on. The servers
// are down: every step that connects fails at once.
func TestFailedStep(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := fmt.Sprintf("mysql://u@%s/app?timeout=2s", l.Addr())
	l.Close()
	base := fmt.Sprintf("source: {name: a, url: %q}\ncandidates: [{name: b, url: %q}]\n", down, down)
	cases := []struct {
		name, steps string
		rows        string // name:status of each row
	}{
		{"stops", "", "check:failed readiness:done"},
		{"goes on", "steps:\n  check: {continue_on_failure: true}\n  verify: {continue_on_failure: true}\n",
			"check:done copy:skipped follow:skipped verify:done analyze:failed readiness:done"},
		{"skipped", "steps:\n  check: {skip: true}\n", "check:skipped copy:skipped follow:skipped verify:failed readiness:done"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "p.yaml")
			if err := os.WriteFile(path, []byte(base+c.steps), 0o644); err != nil {
				t.Fatal(err)
			}
			p := parse(t, path)
			st := openStore(t)
			sum, err := Run(context.Background(), p, Options{Store: st, PageDir: t.TempDir()})
			if !errors.Is(err, ErrStepFailed) || !strings.Contains(err.Error(), "connect") {
				t.Errorf("error: got %v, want ErrStepFailed naming the connection", err)
			}
			rows, rerr := st.RehearsalSteps(context.Background(), sum.ID)
			if rerr != nil {
				t.Fatal(rerr)
			}
			var got []string
			for _, r := range rows {
				got = append(got, r.Name+":"+r.Status)
				if r.Status == store.StepFailed && r.Error == "" {
					t.Errorf("step %s failed without a reason", r.Name)
				}
			}
			if strings.Join(got, " ") != c.rows {
				t.Errorf("rows: got %s, want %s", strings.Join(got, " "), c.rows)
			}
			if sum.Status != store.RehearsalStopped || len(sum.Pages) != 1 {
				t.Errorf("summary: got status %s with %d pages, want stopped with the page", sum.Status, len(sum.Pages))
			}
			if sum.StoppedBy == "" || sum.StoppedBy == plan.StepReadiness {
				t.Errorf("stopped by: got %q, want the failed step", sum.StoppedBy)
			}
		})
	}
}
