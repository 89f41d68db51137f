package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// upPlaced starts a sandbox placed by p and removes it (and its cgroup,
// should Down fail) when the test ends. It may run on a goroutine of its
// own, so it reports a failure with Errorf and returns nil.
func upPlaced(t *testing.T, home, name string, p sandbox.Placement) *sandbox.Instance {
	inst, err := sandbox.Up(t.Context(), sandbox.Options{
		Name: name, Home: home, DieWithParent: true, Set: sandboxtest.Settings, Placement: p,
	})
	if err != nil {
		t.Errorf("up %s: %v", name, err)
		return nil
	}
	t.Cleanup(func() {
		if err := sandbox.Down(context.Background(), home, name); err != nil && !errors.Is(err, sandbox.ErrNotFound) {
			t.Errorf("down %s: %v", name, err)
		}
		if inst.Cgroup != "" {
			_ = os.Remove(inst.Cgroup) // only left when Down failed
		}
	})
	return inst
}

func procStatus(t *testing.T, pid int, field string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return ""
}

// TestPlacement starts one sandbox bound to CPU 0 and one under a 50% CPU
// quota, checks where the kernel has them, and loads the second until its
// cgroup counts throttled periods: the quota biting.
func TestPlacement(t *testing.T) {
	t.Parallel()
	sandboxtest.RequireServer(t)
	p, err := sandbox.ParsePlacement("0", "50%", "")
	if err != nil {
		t.Skipf("this machine cannot place sandboxes: %v", err)
	}
	home := t.TempDir()
	var pinned, limited *sandbox.Instance
	var wg sync.WaitGroup
	wg.Go(func() { pinned = upPlaced(t, home, "pinned", sandbox.Placement{CPUs: p.CPUs}) })
	limited = upPlaced(t, home, "limited", sandbox.Placement{CPUQuota: p.CPUQuota})
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// Every thread, not just the first: the server is bound from its start.
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pinned.PID) + "/task/*")
	for _, task := range tasks {
		tid, _ := strconv.Atoi(filepath.Base(task))
		if got := procStatus(t, tid, "Cpus_allowed_list"); got != "0" {
			t.Errorf("thread %d of the pinned server: got Cpus_allowed_list %s, want 0", tid, got)
		}
	}
	if len(tasks) < 2 {
		t.Errorf("got %d threads of the pinned server, want the server's several", len(tasks))
	}

	if limited.Cgroup == "" {
		t.Fatalf("got no cgroup for the sandbox under --cpu-quota 50%%")
	}
	// Kill and Start: the quota is kept, and the new server joins the cgroup.
	if err := sandbox.Kill(t.Context(), limited.Home, limited.Name); err != nil {
		t.Fatal(err)
	}
	if limited, err = sandbox.Start(t.Context(), limited.Home, limited.Name); err != nil {
		t.Fatal(err)
	}
	if got := cgroupQuota(t, limited.Cgroup); got != "50000 100000" {
		t.Errorf("got quota and period %q in %s, want 50000 100000", got, limited.Cgroup)
	}
	procs, err := os.ReadFile(filepath.Join(limited.Cgroup, "cgroup.procs"))
	if err != nil || !strings.Contains("\n"+string(procs), "\n"+strconv.Itoa(limited.PID)+"\n") {
		t.Errorf("got cgroup.procs %q, %v; want the restarted server's pid %d", procs, err, limited.PID)
	}

	before, err := sandbox.ReadCPUStat(limited.Cgroup)
	if err != nil {
		t.Fatal(err)
	}
	after := loadUntilThrottled(t, limited, before)
	t.Logf("cgroup %s: periods %d→%d, throttled %d→%d, throttled time %v→%v", limited.Cgroup,
		before.Periods, after.Periods, before.Throttled, after.Throttled, before.ThrottledTime, after.ThrottledTime)
	if after.Throttled <= before.Throttled || after.ThrottledTime <= before.ThrottledTime {
		t.Errorf("got throttling %+v after CPU-bound queries, want more than %+v", after, before)
	}

	cg := limited.Cgroup
	if err := sandbox.Down(t.Context(), limited.Home, limited.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cg); !os.IsNotExist(err) {
		t.Errorf("after down: got %v for %s, want it removed", err, cg)
	}
}

// cgroupQuota is "QUOTA PERIOD" in microseconds from a v2 or v1 cgroup.
func cgroupQuota(t *testing.T, dir string) string {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(dir, "cpu.max")); err == nil {
		return strings.TrimSpace(string(b))
	}
	q, err := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(q)) + " " + strings.TrimSpace(string(p))
}

// loadUntilThrottled runs CPU-bound queries on two connections, more than
// a 50% quota allows, until the cgroup has been throttled in at least 3
// more periods or 30 seconds pass, and returns the counters then. (On a
// busy machine the server seldom gets even its quota, so throttled periods
// come slowly.)
func loadUntilThrottled(t *testing.T, inst *sandbox.Instance, before sandbox.CPUStat) sandbox.CPUStat {
	t.Helper()
	db := open(t, inst.URL())
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for ctx.Err() == nil {
				// About a tenth of a second of CPU a query.
				_, _ = db.ExecContext(ctx, "SELECT BENCHMARK(200000, MD5('shakedown'))")
			}
		})
	}
	defer wg.Wait()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		now, err := sandbox.ReadCPUStat(inst.Cgroup)
		if err != nil {
			t.Fatal(err)
		}
		if now.Throttled >= before.Throttled+3 {
			cancel()
			return now
		}
		select {
		case <-ctx.Done():
			return now
		case <-tick.C:
		}
	}
}
