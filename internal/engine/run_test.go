package engine

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
	if res.Tool != "shakedown 9.8.7" || !strings.Contains(out.String(), "shakedown 9.8.7 (sysbench-compatible ping)") {
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
