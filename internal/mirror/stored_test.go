package mirror

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/store"
)

// TestStoredRun: two snapshot periods of a live mirror, the first with a
// planted difference, stored and read back as one run; its records are
// the candidate's, weighed on the run so far, and hold no password.
func TestStoredRun(t *testing.T) {
	lp := newLivePair(t, Options{})
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := NewRecorder(st, lp.m.opts, "shakedown test")
	through := open(t, lp.client(t))
	cand := open(t, dsnOf(lp.cand))
	if _, err := cand.Exec("UPDATE sbtest1 SET c = 'planted' WHERE id = 5"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int{5, 6} {
		if _, err := through.Exec(fmt.Sprintf("SELECT c FROM sbtest1 WHERE id = %d", id)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 5*time.Second, "both reads compared", func() bool { return lp.m.Summary().Compared >= 2 })
	if err := rec.Record(t.Context(), lp.m.Rotate("rotate")); err != nil {
		t.Fatal(err)
	}
	if _, err := through.Exec("SELECT k FROM sbtest1 WHERE id = 3"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the third read compared", func() bool { return lp.m.Summary().Compared >= 3 })
	if err := rec.Record(t.Context(), lp.m.Rotate("end")); err != nil {
		t.Fatal(err)
	}
	recs, err := LoadRun(t.Context(), st, rec.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].N != 1 || recs[1].N != 2 || recs[0].Figures.Differing != 1 || recs[1].Figures.Differing != 0 || recs[1].Total.Compared != 3 {
		t.Fatalf("got %d records, want periods 1 (1 differing) and 2 (none), 3 compared in all: %+v", len(recs), recs)
	}
	e, err := st.LatestEvidence(t.Context(), store.KindMirror, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.Outcome != store.OutcomeFail || !strings.HasPrefix(e.Summary, "canary: ") || !strings.Contains(e.Summary, " 3 statements, 1 classes differ") {
		t.Errorf("latest record: got %s %q, want fail, \"canary: N s, 3 statements, 1 classes differ...\"", e.Outcome, e.Summary)
	}
	for _, pw := range []string{ctlPassword, clientPassword} {
		if bytes.Contains(e.Document, []byte(pw)) || strings.Contains(e.Source+e.Target, pw) {
			t.Errorf("stored record holds the password %q", pw)
		}
	}
	var b bytes.Buffer
	if err := WriteRun(&b, rec.ID(), recs); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{fmt.Sprintf("mirror run %d: control mysql://canary@", rec.ID()), "1 classes differ",
		"first differs in period 1 on cand: rows", "candidate: 1 rows: (planted)", "where `id` = ?"} {
		if !strings.Contains(out, want) {
			t.Errorf("report of the run: want %q in\n%s", want, out)
		}
	}
	if _, err := LoadRun(t.Context(), st, 9999); err == nil {
		t.Errorf("LoadRun of an unknown ID: got nil, want an error")
	}
}
