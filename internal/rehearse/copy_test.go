package rehearse

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/dbcopy"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
)

// TestRehearsalCopy rehearses with data: copy of a subset onto an empty
// candidate: the copy's result is stored, the candidate holds the chosen
// customers and, by their foreign key, their orders, and the verify step
// compares those rows only, so it finds nothing.
func TestRehearsalCopy(t *testing.T) {
	insts := sandboxtest.StartAll(t, nil, nil)
	exec(t, insts[0], appSchema(true))
	url := func(i *sandbox.Instance) string { return fmt.Sprintf("mysql://%s@127.0.0.1:%d/app", i.User, i.Port) }
	text := fmt.Sprintf(`source: {name: old, url: "%s"}
candidates:
  - {name: new, url: "%s"}
data:
  copy:
    allow-write: true
    threads: 2
    where: "app.customers: id <= 3"
steps:
  check: {continue_on_failure: true}
`, url(insts[0]), url(insts[1]))
	path := filepath.Join(t.TempDir(), "copy.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	st := openStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out strings.Builder
	sum, err := Run(ctx, parse(t, path), Options{Store: st, Out: &out, PageDir: t.TempDir(), Version: "test"})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, out.String())
	}
	rows := map[string]store.RehearsalStep{}
	for _, r := range sum.Steps {
		rows[r.Name] = r
	}
	cp := rows[plan.StepCopy]
	if cp.Status != store.StepDone || cp.Outcome != store.OutcomePass || !strings.HasPrefix(cp.Ref, "evidence ") ||
		!strings.Contains(cp.Summary, "(a subset)") {
		t.Errorf("copy step: got %s %s %q [%s] %s, want done, pass, a subset, stored as evidence\n%s",
			cp.Status, cp.Outcome, cp.Summary, cp.Ref, cp.Error, out.String())
	}
	if got := evidenceCount(t, st, KindCopy); got != 1 {
		t.Errorf("copy evidence: got %d, want 1", got)
	}
	if v := rows[plan.StepVerify]; v.Status != store.StepDone || v.Outcome != store.OutcomePass {
		t.Errorf("verify step: got %s %s (%s %s), want done and pass: the subset's rows are equal", v.Status, v.Outcome, v.Summary, v.Error)
	}
	// Customers 1-3 and the orders that reference them (customer_id is
	// i%5+1 for orders 1-20: 12 of them).
	for table, want := range map[string]int{"customers": 3, "orders": 12} {
		if got := count(t, insts[1], "app."+table); got != want {
			t.Errorf("candidate's %s: got %d rows, want %d", table, got, want)
		}
	}
}

func count(t *testing.T, inst *sandbox.Instance, table string) int {
	t.Helper()
	tg, err := target.Parse(inst.URL())
	if err != nil {
		t.Fatal(err)
	}
	db, err := tg.OpenNoDB(tg.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// TestRehearsalCopyResume kills a rehearsal in the middle of its copy
// and resumes it: the copy continues from its checkpoint (a copy started
// over would be refused, the candidate's database holding tables), the
// candidate ends with every row, and the checkpoint is gone.
func TestRehearsalCopyResume(t *testing.T) {
	insts := sandboxtest.StartAll(t, nil, nil)
	exec(t, insts[0], append(appSchema(true), "INSERT INTO app.orders SELECT seq + 100, seq % 20 + 1, 1.00 FROM app.seq_1_to_2000"))
	url := func(i *sandbox.Instance) string { return fmt.Sprintf("mysql://%s@127.0.0.1:%d/app", i.User, i.Port) }
	text := fmt.Sprintf(`source: {name: old, url: "%s"}
candidates:
  - {name: new, url: "%s"}
data:
  copy: {allow-write: true, threads: 1, chunk-rows: 100}
steps:
  check: {continue_on_failure: true}
`, url(insts[0]), url(insts[1]))
	path := filepath.Join(t.TempDir(), "copy.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	st := openStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	kctx, kill := context.WithCancel(ctx)
	defer kill()
	var out strings.Builder
	o := Options{Store: st, Out: &out, PageDir: t.TempDir(), Version: "test"}
	o.copyProgress = func(p dbcopy.Progress) {
		if p.Table == "app.orders" && p.TableRows >= 500 {
			kill()
		}
	}
	sum, err := Run(kctx, parse(t, path), o)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("killed run: got %v, want ErrInterrupted\n%s", err, out.String())
	}
	ck := filepath.Join(filepath.Dir(st.Path()), fmt.Sprintf("s.db.rehearsal-%d.copy-new.ckpt", sum.ID))
	if _, err := os.Stat(ck); err != nil {
		t.Fatalf("checkpoint after the kill: %v", err)
	}
	if got := count(t, insts[1], "app.orders"); got == 0 || got >= 2020 {
		t.Fatalf("candidate's orders after the kill: got %d, want some but not all 2020", got)
	}

	o.copyProgress, o.Resume = nil, sum.ID
	out.Reset()
	sum, err = Run(ctx, parse(t, path), o)
	if err != nil {
		t.Fatalf("resumed run: %v\n%s", err, out.String())
	}
	rows := map[string]store.RehearsalStep{}
	for _, r := range sum.Steps {
		rows[r.Name] = r
	}
	if cp := rows[plan.StepCopy]; cp.Status != store.StepDone || !strings.Contains(cp.Summary, "resumed from its checkpoint") {
		t.Errorf("resumed copy step: got %s %q %s, want done and resumed from its checkpoint", cp.Status, cp.Summary, cp.Error)
	}
	if v := rows[plan.StepVerify]; v.Status != store.StepDone || v.Outcome != store.OutcomePass {
		t.Errorf("verify step: got %s %s (%s %s), want done and pass", v.Status, v.Outcome, v.Summary, v.Error)
	}
	if got := count(t, insts[1], "app.orders"); got != 2020 {
		t.Errorf("candidate's orders after the resume: got %d, want 2020", got)
	}
	if _, err := os.Stat(ck); !os.IsNotExist(err) {
		t.Errorf("checkpoint after the finished copy: got %v, want it removed", err)
	}
}
