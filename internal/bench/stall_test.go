package bench

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

// A session that holds the hot row stalls the hotrow load: the stall
// capture fires, and its processlist and lock waits name that session.
func TestStallCaptureNamesTheBlocker(t *testing.T) {
	ctx := context.Background()
	if err := job(t, "prepare", "", "hotrow", "--table=stall_hot").Prepare(ctx, PrepareOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { job(t, "cleanup", "", "hotrow", "--table=stall_hot").Prepare(ctx, PrepareOptions{}) })

	tg, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	db, err := tg.Open(tg.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	blocker, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close()
	var id int64
	var num int64
	for _, q := range []string{"BEGIN", "SELECT num FROM stall_hot WHERE id=1 FOR UPDATE", "SELECT CONNECTION_ID()"} {
		dest := []any{&num}
		if strings.Contains(q, "CONNECTION_ID") {
			dest = []any{&id}
		}
		if q == "BEGIN" {
			_, err = blocker.ExecContext(ctx, q)
		} else {
			err = blocker.QueryRowContext(ctx, q).Scan(dest...)
		}
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	defer blocker.ExecContext(ctx, "ROLLBACK")

	args := []string{"hotrow", "--table=stall_hot", "--threads=3", "--time=3", "--stall=threads_running>2 for 2s", "--stall-cooldown=1h"}
	_, lookErr := exec.LookPath("gdb")
	stacks := lookErr == nil // the sandbox is local: its stacks can be read where gdb is
	if stacks {
		args = append(args, "--stall-stacks")
	}
	var out bytes.Buffer
	res, err := job(t, "run", "", args...).Run(ctx, RunOptions{Out: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(res.Stalls) != 1 {
		t.Fatalf("got %d stall captures, want 1\n%s", len(res.Stalls), out.String())
	}
	st := res.Stalls[0]
	want := strconv.FormatInt(id, 10)
	if got := column(t, st.Section("processlist"), "Id"); !slices.Contains(got, want) {
		t.Errorf("processlist ids: got %v, want the blocking session %s among them", got, want)
	}
	// Waiters queued behind the holder block one another too; the one
	// blocking session that waits for nothing is the holder.
	if got := column(t, st.Section("lock_waits"), "blocking_id"); !slices.Contains(got, want) {
		t.Errorf("lock waits' blocking sessions: got %v, want %s among them", got, want)
	}
	if len(st.Blockers) != 1 || !strings.HasPrefix(st.Blockers[0], want+" (") {
		t.Errorf("blockers waiting for nothing: got %q, want session %s alone", st.Blockers, want)
	}
	if st.Section("innodb_status") == nil || !strings.Contains(st.Section("innodb_status").Text, "TRANSACTIONS") {
		t.Errorf("got no InnoDB status text, want SHOW ENGINE INNODB STATUS kept")
	}
	for _, sec := range st.Sections {
		if sec.ReadMS <= 0 {
			t.Errorf("section %s: got read time %g ms, want the time its read took", sec.Name, sec.ReadMS)
		}
	}
	if sec := st.Section("stacks"); stacks && (sec == nil || sec.Error != "" || len(sec.Rows) == 0 || sec.PauseMS <= 0) {
		t.Errorf("stacks: got %+v, want the server's thread stacks aggregated, with the pause they cost", sec)
	} else if !stacks {
		t.Log("gdb is not installed: --stall-stacks not checked")
	}
	if len(st.Before) == 0 {
		t.Errorf("got no samples before the trigger, want the ring buffer's")
	}
	// The run records its host's facts, read once at its start: the
	// sandbox is local, so its process is found.
	if f := res.HostFacts; f == nil || f.Subject.PID == 0 {
		t.Errorf("host facts: got %+v, want the local server's, with its process", f)
	} else if _, ok := f.Get("cgroup.cpu.max"); !ok {
		t.Errorf("host facts: got no cgroup.cpu.max row, want every row, known or saying why not")
	}
	if !strings.Contains(out.String(), "Stall captures: 1") {
		t.Errorf("summary: got\n%s\nwant the capture printed", out.String())
	}
}

// column returns one column of a captured table, failing when the section
// is missing or was not read.
func column(t *testing.T, sec *result.StallSection, name string) []string {
	t.Helper()
	if sec == nil || sec.Error != "" {
		t.Fatalf("section: got %+v, want it read", sec)
	}
	i := slices.Index(sec.Columns, name)
	if i < 0 {
		t.Fatalf("columns: got %v, want %s", sec.Columns, name)
	}
	var col []string
	for _, r := range sec.Rows {
		col = append(col, r[i])
	}
	return col
}
