package replay

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/capture"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// TestReplayShowsFirstDifference replays two range reads on one server,
// from the database fd_ctl as the control and fd_cand as the candidate:
// in t only row 57 differs, in u the candidate has a row more. Each
// example names where the rows part.
func TestReplayShowsFirstDifference(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a server")
	}
	inst := sandboxtest.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	db, err := sql.Open("mysql", fmt.Sprintf("%s@tcp(127.0.0.1:%d)/", inst.User, inst.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, name := range []string{"fd_ctl", "fd_cand"} {
		for _, q := range []string{
			"CREATE DATABASE " + name,
			"CREATE TABLE " + name + ".t (id INT PRIMARY KEY, c VARCHAR(20))",
			"INSERT INTO " + name + ".t SELECT seq, CONCAT('row ', seq) FROM " + name + ".seq_1_to_100",
			"CREATE TABLE " + name + ".u LIKE " + name + ".t",
			"INSERT INTO " + name + ".u SELECT * FROM " + name + ".t",
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	for _, q := range []string{"UPDATE fd_cand.t SET c = 'planted' WHERE id = 57", "INSERT INTO fd_cand.u VALUES (101, 'extra')"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var capt bytes.Buffer
	w, err := capture.NewWriter(&capt, []string{"test"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range []string{"SELECT id, c FROM t WHERE id BETWEEN 1 AND 100", "SELECT id, c FROM u WHERE id BETWEEN 1 AND 200 ORDER BY id"} {
		if err := w.Write(&capture.Record{Session: "1", Seq: int64(i + 1), SQL: q}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rd, err := capture.NewReader(&capt)
	if err != nil {
		t.Fatal(err)
	}
	var targets []Target
	for _, name := range []string{"fd_ctl", "fd_cand"} {
		tg, err := target.Parse(fmt.Sprintf("mysql://%s@127.0.0.1:%d/%s", inst.User, inst.Port, name))
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, Target{Name: strings.TrimPrefix(name, "fd_"), Target: tg, FixedDB: true})
	}
	rep, err := Run(ctx, rd, targets, Options{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(rep.Examples) != 2 {
		t.Fatalf("got %d examples, want 2: %+v", len(rep.Examples), rep.Examples)
	}
	var text bytes.Buffer
	if err := WriteText(&text, rep, 10); err != nil {
		t.Fatal(err)
	}
	for _, ex := range rep.Examples {
		d := ex.First
		switch {
		case strings.Contains(ex.SQL, "FROM t "):
			if ex.What != "rows" || d == nil || d.Control == nil || d.Candidate == nil ||
				d.Control.Row != 57 || d.Candidate.Row != 57 || fmt.Sprint(d.Columns) != "[c]" ||
				fmt.Sprint(d.Control.Values) != "[57 row 57]" || fmt.Sprint(d.Candidate.Values) != "[57 planted]" {
				t.Errorf("range read: got %q and %+v, want rows differing at row 57, column c, 'row 57' on the control and 'planted' on the candidate", ex.What, d)
			}
			if len(ex.ControlR.Sample) != 5 || ex.ControlR.Sample[0][1] != "row 1" {
				t.Errorf("range read: got first rows %q, want the first 5", ex.ControlR.Sample)
			}
		default:
			if ex.What != "row count" || d == nil || d.Control != nil || d.Candidate == nil || d.ExtraOn != "candidate" || d.Extra != 1 ||
				d.Candidate.Row != 101 || fmt.Sprint(d.Candidate.Values) != "[101 extra]" {
				t.Errorf("extra row: got %q and %+v, want a row count differing, 1 more row on the candidate, row 101 (101, extra)", ex.What, d)
			}
		}
	}
	for _, want := range []string{
		"    first differs at row 57, column c\n      control:   (57, row 57)\n      candidate: (57, planted)\n",
		"    first differs at row 101: 1 more row on the candidate\n      candidate: (101, extra)\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("got report\n%s\nwant %q in it", text.String(), want)
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"first_difference": {`) || !strings.Contains(js.String(), `"columns": [`) {
		t.Errorf("JSON report: got\n%s\nwant first_difference with its columns", js.String())
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "first differs at row 57, column c") || !strings.Contains(page.String(), "<code>planted</code>") {
		t.Errorf("HTML report: want the first difference and its row in it")
	}
}
