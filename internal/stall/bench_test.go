package stall

import (
	"context"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/result"
)

// BenchmarkObserveNeverFires is what a trigger that never fires costs the
// client per sample (scripts/bench.sh's stall case measures the whole run):
// an hour of samples with every kind of trigger, none holding.
func BenchmarkObserveNeverFires(b *testing.B) {
	ts, err := Parse("threads_running>25 for 5s,qps<50%,p99>200ms")
	if err != nil {
		b.Fatal(err)
	}
	w := NewWatcher(Config{Triggers: ts}, nil) // never captures, so never queries
	ctx := context.Background()
	start := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		w.ObserveLatency(func(float64) (float64, bool) { return 3, true })
		w.Observe(ctx, result.Sample{Wall: start.Add(time.Duration(i%3600) * time.Second),
			Values: map[string]float64{"qps": 10000 + float64(i%7), "threads_running": 9}})
	}
	if st, _ := w.Finish(); len(st) != 0 {
		b.Fatalf("got %d captures, want none", len(st))
	}
}
