package progress

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func TestEvery(t *testing.T) {
	tests := []struct {
		name   string
		cancel bool // end by ctx rather than by stop
	}{
		{"stop ends it", false},
		{"ctx ends it", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var n atomic.Int64
			stop := Every(ctx, time.Millisecond, func() { n.Add(1) })
			deadline := time.Now().Add(10 * time.Second)
			for n.Load() < 2 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if got := n.Load(); got < 2 {
				t.Fatalf("got %d calls within 10s, want at least 2", got)
			}
			if tc.cancel {
				cancel()
			}
			stop()
			after := n.Load()
			time.Sleep(5 * time.Millisecond)
			if got := n.Load(); got != after {
				t.Errorf("got %d calls after stop returned, want 0", got-after)
			}
		})
	}
}
