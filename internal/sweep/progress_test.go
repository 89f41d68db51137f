package sweep

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/runner"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *fakeClock               { return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }
func testStep(i, threads int) plan.Step {
	return plan.Step{Index: i, Target: &plan.Target{Name: "relaxed"}, Workload: &plan.Workload{Name: "oltp_write_only"}, Threads: threads, Repeat: 1}
}

func TestProgressLive(t *testing.T) {
	c := newClock()
	var b bytes.Buffer
	p := newProgress(&b, true, false, c.now, 4, 10*time.Second)
	p.startStep(testStep(1, 16), "warming up")
	c.add(3 * time.Second)
	p.interval(runner.Interval{QPS: 1234.56})
	out := b.String()
	want := "\r\033[Kstep 1/4  relaxed  oltp_write_only  16 thr  1234.6 qps  elapsed 0:03  ~0:37 left"
	if !strings.HasSuffix(out, want) {
		t.Errorf("got %q, want it to end with %q", out, want)
	}
	if strings.Contains(out, "\n") {
		t.Errorf("a live line wrote a newline: %q", out)
	}
	// After one finished step the estimate is the measured pace.
	c.add(7 * time.Second)
	p.finishStep(testStep(1, 16), "ok", "1234.6 qps")
	p.startStep(testStep(2, 16), "warming up")
	if got := p.line(c.now()); !strings.HasSuffix(got, "elapsed 0:10  ~0:30 left") {
		t.Errorf("got %q, want 30 s left after one step of 10", got)
	}
	// A failure stays on screen above the live line.
	b.Reset()
	p.finishStep(testStep(2, 16), "failed", "FAILED: connection refused")
	if !strings.Contains(b.String(), "\r\033[K") || !strings.HasSuffix(b.String(), "FAILED: connection refused  (elapsed 0:10, ~0:10 left)\n") {
		t.Errorf("got %q, want the failure on a line of its own", b.String())
	}
	p.close()
}

func TestProgressPlain(t *testing.T) {
	c := newClock()
	var b bytes.Buffer
	p := newProgress(&b, false, false, c.now, 2, 5*time.Second)
	p.startStep(testStep(1, 1), "warming up")
	p.interval(runner.Interval{QPS: 10})
	c.add(5 * time.Second)
	p.finishStep(testStep(1, 1), "ok", "10.0 qps")
	want := "step 1/2  relaxed  oltp_write_only  1 thr  #1: 10.0 qps  (elapsed 0:05, ~0:05 left)\n"
	if got := b.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
