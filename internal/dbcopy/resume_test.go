package dbcopy

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestResumeAfterInterrupt stops a copy mid-table (the context cancelled
// after two ranges, as Ctrl-C does), then resumes it from its checkpoint:
// the finished ranges are not copied again and the result verifies.
func TestResumeAfterInterrupt(t *testing.T) {
	p := newPair(t)
	shop(t, p.srcDB, 60, 400)
	ck := filepath.Join(t.TempDir(), "copy.ckpt")
	ctx, cancel := context.WithCancel(testCtx(t))
	opts := Options{AllowWrite: true, Threads: 1, ChunkRows: 50, Checkpoint: ck, NoAnalyze: true}
	opts.afterChunk = func(n int) {
		if n == 2 {
			cancel()
		}
	}
	if _, err := Run(ctx, p.src, p.dst, opts); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("interrupted copy: got %v, want %v", err, ErrInterrupted)
	}
	b, err := os.ReadFile(ck)
	if err != nil {
		t.Fatalf("checkpoint after the interrupt: %v", err)
	}
	if got := strings.Count(string(b), `"event":"done"`); got < 2 {
		t.Fatalf("finished ranges in the checkpoint: got %d, want >= 2", got)
	}
	if got := count(t, p.dstDB, "SELECT COUNT(*) FROM orders"); got == 0 || got >= 400 {
		t.Fatalf("orders on the target after the interrupt: got %d, want some but not all 400", got)
	}

	var copied atomic.Int64
	opts.Resume = true
	opts.afterChunk = func(int) { copied.Add(1) }
	res, err := Run(testCtx(t), p.src, p.dst, opts)
	if err != nil {
		t.Fatalf("resumed copy: %v", err)
	}
	if !res.Resumed || !res.Verify.Equal {
		t.Errorf("resumed %v, verify %+v: want resumed and equal", res.Resumed, res.Verify)
	}
	var total int
	for _, tr := range res.Tables {
		total += tr.Chunks
	}
	if got := int(copied.Load()); got >= total || got == 0 {
		t.Errorf("ranges copied by the resumed run: got %d of %d, want fewer (the finished ones skipped)", got, total)
	}
	if res.Rows != 60+400+403 {
		t.Errorf("rows in the result: got %d, want %d", res.Rows, 60+400+403)
	}
}
