package bench

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/client"
)

func TestRunPing(t *testing.T) {
	j := job(t, "run", "", "ping", "--threads=2", "--events=300", "--monitor=off")
	var out bytes.Buffer
	res, err := j.Run(context.Background(), RunOptions{Out: &out, Version: "9.8.7"})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if res.Transactions != 300 || res.Queries.Other != 300 || res.Errors.Total != 0 {
		t.Errorf("got %d events, %d other statements and %d errors, want 300, 300 and 0", res.Transactions, res.Queries.Other, res.Errors.Total)
	}
	if res.Tool != "shakedown 9.8.7" || !strings.Contains(out.String(), "shakedown 9.8.7 (ping, shakedown's own workload)") {
		t.Errorf("got tool %q and header\n%s\nwant the version passed in", res.Tool, out.String())
	}
	if res.Target.Flavour != "mariadb" || res.Options["threads"] != "2" {
		t.Errorf("got target %+v options %v, want the server and the options", res.Target, res.Options)
	}
}

func TestPrepareAndRunHotrow(t *testing.T) {
	ctx := context.Background()
	for _, verb := range []string{"cleanup", "prepare"} {
		var out bytes.Buffer
		if err := job(t, verb, "", "hotrow", "--table=engine_hot").Prepare(ctx, PrepareOptions{Out: &out, Version: "9.8.7"}); err != nil {
			t.Fatalf("%s: %v\n%s", verb, err, out.String())
		}
		if !strings.HasPrefix(out.String(), "shakedown 9.8.7\n") {
			t.Errorf("%s: header %q, want the version passed in", verb, out.String())
		}
	}
	res, err := job(t, "run", "", "hotrow", "--table=engine_hot", "--events=50", "--monitor=off").Run(ctx, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Transactions != 50 || res.Queries.Write != 50 {
		t.Errorf("got %d events and %d writes, want 50 each", res.Transactions, res.Queries.Write)
	}
	if err := job(t, "cleanup", "", "hotrow", "--table=engine_hot").Prepare(ctx, PrepareOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = job(t, "run", "", "hotrow", "--table=engine_hot", "--events=50", "--monitor=off").Run(ctx, RunOptions{})
	if !errors.Is(err, client.ErrMissingTables) {
		t.Errorf("after cleanup: got %v, want ErrMissingTables", err)
	}
}

// cancelOn is a prepare's output that cancels the prepare when a line
// holding mark is written.
type cancelOn struct {
	bytes.Buffer
	mark   string
	cancel context.CancelFunc
}

func (c *cancelOn) Write(p []byte) (int, error) {
	n, err := c.Buffer.Write(p)
	if strings.Contains(c.String(), c.mark) {
		c.cancel()
	}
	return n, err
}

// A prepare stopped part way says which tables it left incomplete.
func TestInterruptedPrepareSaysWhatIsIncomplete(t *testing.T) {
	args := []string{"oltp_read_only", "--tables=3", "--table-size=2000", "--threads=1"}
	if err := job(t, "cleanup", "", args...).Prepare(context.Background(), PrepareOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &cancelOn{mark: "into 'sbtest2'", cancel: cancel}
	err := job(t, "prepare", "", args...).Prepare(ctx, PrepareOptions{Out: out})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("got %v, want ErrInterrupted\n%s", err, out.String())
	}
	for _, want := range []string{"incomplete: sbtest2 and sbtest3 hold 0 of 2000 rows", "run cleanup, then prepare again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("got %q, want it to say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "sbtest1") {
		t.Errorf("got %q: sbtest1 was complete", err)
	}
	if err := job(t, "cleanup", "", args...).Prepare(context.Background(), PrepareOptions{}); err != nil {
		t.Fatal(err)
	}
}
