package demo

import (
	"context"
	"database/sql"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/browsertest"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
	_ "github.com/shakedown/shakedown/internal/workload/all"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// TestRehearse runs the demo's rehearsal on two sandboxes that differ in
// a setting: the copy loads the rows into the candidate's own tables
// (which lack the email index) and adds the view and the trigger, and the
// page, rendered in headless Chromium, says not ready for the verify's
// schema difference.
func TestRehearse(t *testing.T) {
	insts := sandboxtest.StartAll(t, nil, []string{"sort_buffer_size=4194304"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out strings.Builder
	dir := t.TempDir()
	sum, err := Rehearse(ctx, RehearseOptions{Dir: dir, Source: insts[0], Candidate: insts[1], Out: &out, Progress: io.Discard,
		Getenv: func(string) string { return "" }, Version: "test", StepTime: 1})
	if err != nil {
		t.Fatalf("Rehearse: %v\n%s", err, out.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "rehearsal.yaml")); err != nil || !strings.Contains(string(b), "\n  time: 1\n") {
		t.Errorf("the plan written: want the sweep's steps at 1 s, as asked (%v)\n%s", err, b)
	}
	if sum.Verdict != readiness.NotReady || len(sum.Pages) != 1 {
		t.Fatalf("verdict %q, %d pages: want not ready, 1 page\n%s", sum.Verdict, len(sum.Pages), out.String())
	}
	steps := map[string]store.RehearsalStep{}
	for _, s := range sum.Steps {
		steps[s.Name] = s
	}
	if cp := steps[plan.StepCopy]; cp.Status != store.StepDone || !strings.Contains(cp.Summary, "into the candidate's own tables") {
		t.Errorf("copy step: got %s %q %s, want done into the candidate's own tables", cp.Status, cp.Summary, cp.Error)
	}
	if v := steps[plan.StepVerify]; !strings.Contains(v.Summary, "0 differing rows, 1 schema differences") {
		t.Errorf("verify step: got %q, want 0 differing rows and the missing index", v.Summary)
	}
	reasons := strings.Join(sum.Pages[0].Reasons, "\n")
	if !strings.Contains(reasons, "verify") {
		t.Errorf("page reasons: got %q, want the verify's", reasons)
	}
	// The check ran before the copy made the view and the trigger: what
	// the copy puts right is no reason.
	for _, stale := range []string{"missing_view", "missing_trigger"} {
		if strings.Contains(reasons, stale) {
			t.Errorf("page reasons: got %q, want no %s", reasons, stale)
		}
	}
	db := open(t, insts[1])
	checks := []struct{ q, want string }{
		{"SELECT COUNT(*) FROM app.customers", "2005"},
		{"SELECT COUNT(*) FROM app.orders", "10008"},
		{"SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'app' AND INDEX_NAME = 'email_idx'", "0"},
		{"SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = 'app'", "1"},
		{"SELECT COUNT(*) FROM information_schema.VIEWS WHERE TABLE_SCHEMA = 'app'", "1"},
	}
	for _, c := range checks {
		var got string
		if err := db.QueryRowContext(ctx, c.q).Scan(&got); err != nil || got != c.want {
			t.Errorf("candidate: %s: got %s (%v), want %s", c.q, got, err, c.want)
		}
	}
	browsertest.Need(t)
	dom := browsertest.DOM(t, "file://"+sum.Pages[0].Path)
	if !strings.Contains(dom, `id="verdict">NOT READY</div>`) {
		t.Errorf("rendered page: want the NOT READY verdict")
	}
	m := regexp.MustCompile(`(?s)<tr id="ev-verify" data-status="([a-z]+)">`).FindStringSubmatch(dom)
	if m == nil || m[1] != readiness.StatusFail {
		t.Errorf("rendered page's verify row: got %v, want status %s", m, readiness.StatusFail)
	}
}

func open(t *testing.T, inst *sandbox.Instance) *sql.DB {
	t.Helper()
	tg, err := target.Parse(inst.URL())
	if err != nil {
		t.Fatal(err)
	}
	db, err := tg.OpenNoDB(tg.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
