package cli

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// The TiDB process killed in the middle of a run, then started again: the
// run is marked degraded as on MariaDB, nothing hangs, exit 1.
func TestRunTiDBKilledIsDegraded(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a TiDB server")
	}
	bin, err := sandboxtest.TiDBServer()
	if err != nil {
		t.Fatal(err)
	}
	if bin == "" {
		t.Skip(sandboxtest.TiDBGet)
	}
	runKilledIsDegraded(t, sandbox.Options{Flavour: flavour.TiDB, Server: bin}, func(ctx context.Context, home string) error {
		return sandbox.Kill(ctx, home, "killed")
	})
}

// vtcombo (vtgate and the tablets) killed in the middle of a run on a
// Vitess sandbox, then started again: as for TiDB.
func TestRunVitessKilledIsDegraded(t *testing.T) {
	bin := sandboxtest.RequireVitess(t)
	runKilledIsDegraded(t, sandbox.Options{Flavour: flavour.Vitess, Server: bin, Set: sandboxtest.Settings}, func(ctx context.Context, home string) error {
		b, err := os.ReadFile(filepath.Join(home, "killed", "vtcombo", "vtcombo.pid"))
		if err != nil {
			return err
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return err
		}
		return syscall.Kill(pid, syscall.SIGKILL)
	})
}

// runKilledIsDegraded starts a sandbox as opts say, runs read/write on it,
// kills it with kill after the first interval and starts it again: the
// run must end degraded, with exit 1, within a minute.
func runKilledIsDegraded(t *testing.T, opts sandbox.Options, kill func(ctx context.Context, home string) error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	home := t.TempDir()
	opts.Name, opts.Home, opts.DieWithParent = "killed", home, true
	inst, err := sandbox.Up(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sandbox.Down(context.Background(), home, "killed") })
	url := inst.URL()
	prepareSmall(t, url)
	path := filepath.Join(t.TempDir(), "r.json")
	var out, errOut syncBuffer
	done := make(chan int)
	go func() {
		done <- runCLIWith(context.Background(), &out, &errOut, "run", "oltp_read_write", "--target="+url, "--tables=1", "--table-size=2000",
			"--threads=4", "--time=8", "--report-interval=1", "--json="+path)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "[ 1s ]") {
		if time.Now().After(deadline) {
			t.Fatalf("no interval line within 30s:\n%s\n%s", out.String(), errOut.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := kill(ctx, home); err != nil {
		t.Fatal(err)
	}
	// A signal is not a death: wait until the sandbox reads as stopped.
	for gone := time.Now().Add(15 * time.Second); ; {
		inst, err := sandbox.Get(home, "killed")
		if err != nil {
			t.Fatal(err)
		}
		if !inst.Running {
			break
		}
		if time.Now().After(gone) {
			t.Fatal("the killed sandbox still reads as running after 15 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := sandbox.Start(ctx, home, "killed"); err != nil {
		t.Fatal(err)
	}
	var code int
	select {
	case code = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run did not end")
	}
	if code != ExitFailure || !strings.Contains(errOut.String(), "run degraded: the server could not be reached for") {
		t.Errorf("got exit %d, want %d and the run said to be degraded\n%s\n%s", code, ExitFailure, out.String(), errOut.String())
	}
	if r := readResult(t, path); !r.Degraded || r.Availability == nil || r.Availability.ReconnectFailures < 1 {
		t.Errorf("got degraded %v, availability %+v; want the reconnects that failed while the server was away", r.Degraded, r.Availability)
	}
}
