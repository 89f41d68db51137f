package sweep

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/usage"
)

// steppedClock moves only when told to.
type steppedClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []steppedWaiter
}

type steppedWaiter struct {
	at time.Time
	ch chan time.Time
}

func (c *steppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *steppedClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.waiters = append(c.waiters, steppedWaiter{at: c.now.Add(d), ch: ch})
	return ch
}

// advance moves the clock and fires the waiters it passes.
func (c *steppedClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

// wakeEarly fires every waiter without moving the clock, as a stepped
// system clock can.
func (c *steppedClock) wakeEarly() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.waiters {
		w.ch <- c.now
	}
	c.waiters = nil
}

func (c *steppedClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

// waitFor polls cond with a deadline.
func pollFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestWaitUntil(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clk := &steppedClock{now: t0}
	done := make(chan error, 1)
	go func() { done <- waitUntil(context.Background(), clk, t0.Add(10*time.Second)) }()

	pollFor(t, "the wait to start", func() bool { return clk.pending() == 1 })
	clk.advance(5 * time.Second)
	clk.wakeEarly() // woken at +5s: must wait on
	pollFor(t, "the wait to resume after an early wake", func() bool { return clk.pending() == 1 })
	select {
	case err := <-done:
		t.Fatalf("returned at +5s with %v, want it to wait until +10s", err)
	default:
	}
	clk.advance(5 * time.Second)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("got %v, want nil at +10s", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not return at +10s")
	}

	if err := waitUntil(context.Background(), clk, t0); err != nil {
		t.Errorf("a time already past: got %v, want nil at once", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- waitUntil(ctx, clk, clk.Now().Add(time.Hour)) }()
	pollFor(t, "the second wait to start", func() bool { return clk.pending() == 1 })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: got %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelled wait did not return")
	}
}

func TestLate(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if got := lateBy(now.Add(2*time.Second), now, time.Second); got != 2*time.Second {
		t.Errorf("lateBy: got %s, want 2s", got)
	}
	if got := lateBy(now.Add(500*time.Millisecond), now, time.Second); got != 0 {
		t.Errorf("lateBy within tolerance: got %s, want 0", got)
	}
}

func timetablePlan(prepare bool) *plan.Plan {
	return &plan.Plan{
		Path:      "p.yaml",
		Targets:   []*plan.Target{{Name: "a", Role: plan.Control}, {Name: "b", Role: plan.Candidate}},
		Workloads: []*plan.Workload{{Name: "oltp_point_select"}, {Name: "oltp_read_write"}},
		Threads:   []int{1, 4},
		TimeS:     10, WarmupS: 2, Repeats: 1, CooldownS: 1,
		Prepare: prepare, Cleanup: prepare, PrepareThreads: 4, Order: plan.Interleave,
	}
}

func TestTimetableWithoutPrepare(t *testing.T) {
	p := timetablePlan(false)
	tt, err := timetableOf(p, nameKey(p), defaultMargins)
	if err != nil {
		t.Fatal(err)
	}
	if len(tt.Blocks) != 1 || tt.Blocks[0].Prepare != nil {
		t.Fatalf("got %d blocks (first prepares: %v), want one without prepare", len(tt.Blocks), tt.Blocks[0].Prepare != nil)
	}
	slots := tt.Blocks[0].Slots
	if len(slots) != len(p.Steps()) {
		t.Fatalf("got %d slots, want %d", len(slots), len(p.Steps()))
	}
	// connect 5s, warm-up 2s, 10s, then max(cooldown 1s, settle 2s).
	for k, want := range []slot{
		{Connect: 0, Load: 5 * time.Second, Measure: 7 * time.Second, End: 17 * time.Second},
		{Connect: 19 * time.Second, Load: 24 * time.Second, Measure: 26 * time.Second, End: 36 * time.Second},
	} {
		got := slots[k]
		if got.Connect != want.Connect || got.Load != want.Load || got.Measure != want.Measure || got.End != want.End {
			t.Errorf("slot %d: got %s/%s/%s/%s, want %s/%s/%s/%s", k, got.Connect, got.Load, got.Measure, got.End, want.Connect, want.Load, want.Measure, want.End)
		}
	}
	for k := 1; k < len(slots); k++ {
		if slots[k].Step.Index != k+1 {
			t.Errorf("slot %d runs step %d, want %d", k, slots[k].Step.Index, k+1)
		}
		if gap := slots[k].Connect - slots[k-1].End; gap < defaultMargins.Settle {
			t.Errorf("slot %d connects %s after slot %d ends, want at least %s", k, gap, k-1, defaultMargins.Settle)
		}
	}
	anchor := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if got := slots[1].At(anchor).Measure; !got.Equal(anchor.Add(26 * time.Second)) {
		t.Errorf("step 2 measures from %s, want %s", got, anchor.Add(26*time.Second))
	}
	if tt.Cleanup {
		t.Errorf("cleanup: got true, want false (the plan does not prepare)")
	}
}

func TestTimetableBlocksAtPrepare(t *testing.T) {
	p := timetablePlan(true)
	tt, err := timetableOf(p, nameKey(p), defaultMargins)
	if err != nil {
		t.Fatal(err)
	}
	// Interleaved: a/point, b/point, a/point, b/point, then read_write:
	// targets a and b prepare once per workload each.
	var got []string
	steps := 0
	for _, b := range tt.Blocks {
		if b.Prepare == nil {
			t.Fatalf("a block without prepare in a plan that prepares: %+v", b)
		}
		got = append(got, b.Prepare.Target.Name+"/"+b.Prepare.Workload.Name)
		steps += len(b.Slots)
		if b.Slots[0].Connect != 0 {
			t.Errorf("block's first step connects at %s, want 0 (at the anchor)", b.Slots[0].Connect)
		}
		if last := b.Slots[len(b.Slots)-1]; b.Done != last.End+defaultMargins.Settle {
			t.Errorf("block done at %s, want %s", b.Done, last.End+defaultMargins.Settle)
		}
	}
	want := "a/oltp_point_select b/oltp_point_select a/oltp_read_write b/oltp_read_write"
	if strings.Join(got, " ") != want {
		t.Errorf("blocks prepare %s, want %s", strings.Join(got, " "), want)
	}
	if steps != len(p.Steps()) {
		t.Errorf("blocks hold %d steps, want %d", steps, len(p.Steps()))
	}
	if !tt.Cleanup {
		t.Errorf("cleanup: got false, want true")
	}
	// A key that says the two workloads share their data: one prepare per
	// target.
	same := func(*plan.Workload) string { return "oltp" }
	tt, _ = timetableOf(p, same, defaultMargins)
	if len(tt.Blocks) != 2 {
		t.Errorf("shared data: got %d blocks, want 2 (one per target)", len(tt.Blocks))
	}
}

// Three runners follow one timetable. Runner 1 prepares, taking as long as
// it takes, and publishes the anchors; the others take them from the mark.
// Every runner ends up with the same wall time for every step.
func TestRunnersAgree(t *testing.T) {
	p := timetablePlan(true)
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	marks := map[int]time.Time{} // block -> announced anchor
	prepareTakes := []time.Duration{90 * time.Second, 3 * time.Second, 47 * time.Second, 1500 * time.Millisecond}

	times := func(runner int) []slotTimes {
		tt, err := timetableOf(p, nameKey(p), defaultMargins)
		if err != nil {
			t.Fatal(err)
		}
		var out []slotTimes
		at := start // when this runner is free to begin the block
		for b, blk := range tt.Blocks {
			anchor := at
			if blk.Prepare != nil {
				if runner == 1 {
					marks[b] = resumeAt(at.Add(prepareTakes[b]), defaultMargins)
				}
				anchor = marks[b]
			}
			for _, s := range blk.Slots {
				out = append(out, s.At(anchor))
			}
			at = anchor.Add(blk.Done)
		}
		return out
	}
	first := times(1)
	for r := 2; r <= 3; r++ {
		got := times(r)
		for k := range first {
			if got[k] != first[k] {
				t.Fatalf("runner %d step %d: got %+v, want %+v (runner 1's)", r, k+1, got[k], first[k])
			}
		}
	}
	for k := 1; k < len(first); k++ {
		if !first[k].Connect.After(first[k-1].End) {
			t.Errorf("step %d connects at %s, before step %d ends at %s", k+1, first[k].Connect, k, first[k-1].End)
		}
	}
	if got := resumeAt(start.Add(1500*time.Millisecond), defaultMargins); !got.Equal(start.Add(7 * time.Second)) {
		t.Errorf("resumeAt: got %s, want %s (ready + 5s, up to a whole second)", got, start.Add(7*time.Second))
	}
}

func TestTimetableRefuses(t *testing.T) {
	p := timetablePlan(false)
	p.TimeS, p.Events = 0, 1000
	if _, err := timetableOf(p, nameKey(p), defaultMargins); err == nil || !usage.Is(err) || !strings.Contains(err.Error(), "needs a time per step") {
		t.Errorf("events only: got %v, want a usage error asking for time", err)
	}
	p = timetablePlan(false)
	if _, err := timetableOf(p, nameKey(p), margins{Connect: -time.Second}); err == nil || !usage.Is(err) {
		t.Errorf("negative margin: got %v, want a usage error", err)
	}
}

// TestMarginsOf: a plan's split: replaces the margins it names, and its
// timetable keeps to them.
func TestMarginsOf(t *testing.T) {
	p := timetablePlan(false)
	if got := marginsOf(p); got != defaultMargins {
		t.Errorf("no split: got %+v, want the defaults %+v", got, defaultMargins)
	}
	p.Split = plan.SplitMargins{ConnectS: 30, ReadyS: 2}
	m := marginsOf(p)
	if want := (margins{Connect: 30 * time.Second, Settle: defaultMargins.Settle, Ready: 2 * time.Second}); m != want {
		t.Fatalf("split connect 30, ready 2: got %+v, want %+v", m, want)
	}
	tt, err := timetableOf(p, nameKey(p), m)
	if err != nil {
		t.Fatal(err)
	}
	if s := tt.Blocks[0].Slots[0]; s.Load-s.Connect != 30*time.Second {
		t.Errorf("first step connects at %s and loads at %s, want 30s apart", s.Connect, s.Load)
	}
}
