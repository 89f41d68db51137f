package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/usage"
)

// settlePair is a table t of 3000 rows (v = id) on both sides, in three
// chunks, where the target's row 1500 has v = -1.
func settlePair(t *testing.T) *pair {
	t.Helper()
	p := newPair(t)
	p.both(t, "CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)", "INSERT INTO t SELECT seq, seq FROM seq_1_to_3000")
	mustExec(t, p.dstDB, "UPDATE t SET v = -1 WHERE id = 1500")
	return p
}

func TestRechecksAfterSettle(t *testing.T) {
	tests := []struct {
		name     string
		rechecks int
		// settle is what the n-th call to Settle (from 1) does, as a
		// follower catching up would.
		settle    func(p *pair, n int64) error
		wantRows  []string
		wantCalls int64
		wantStill int
		sentence  string
	}{
		{
			name: "the follower applies the change", rechecks: 2,
			settle: func(p *pair, n int64) error {
				_, err := p.dstDB.Exec("UPDATE t SET v = 1500 WHERE id = 1500")
				return err
			},
			wantCalls: 1,
			sentence:  "rechecked 1 chunk that differed while the target was being followed: 1 matched on a recheck, 0 still differ",
		},
		{
			// The target was already ahead: the source changed after it was
			// read. A recheck that read the source only once would still differ.
			name: "the source is read again", rechecks: 1,
			settle: func(p *pair, n int64) error {
				_, err := p.srcDB.Exec("UPDATE t SET v = -1 WHERE id = 1500")
				return err
			},
			wantCalls: 1,
			sentence:  "rechecked 1 chunk that differed while the target was being followed: 1 matched on a recheck, 0 still differ",
		},
		{
			name: "the follower catches up on the second wait", rechecks: 3,
			settle: func(p *pair, n int64) error {
				if n != 2 {
					return nil
				}
				_, err := p.dstDB.Exec("UPDATE t SET v = 1500 WHERE id = 1500")
				return err
			},
			wantCalls: 2,
			sentence:  "rechecked 1 chunk that differed while the target was being followed: 1 matched on a recheck, 0 still differ",
		},
		{
			name: "nothing changes", rechecks: 3,
			settle:    func(p *pair, n int64) error { return nil },
			wantRows:  []string{"changed id=1500 [v]"},
			wantCalls: 3, wantStill: 1,
			sentence: "rechecked 1 chunk that differed while the target was being followed: 0 matched on a recheck, 1 still differ",
		},
		{
			name: "no rechecks", rechecks: 0,
			settle:    func(p *pair, n int64) error { return errors.New("Settle called with Rechecks 0") },
			wantRows:  []string{"changed id=1500 [v]"},
			wantCalls: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := settlePair(t)
			var calls atomic.Int64
			r := p.run(t, Options{chunkRows: 1000, Rechecks: tt.rechecks, Settle: func(ctx context.Context) error {
				if err := tt.settle(p, calls.Add(1)); err != nil {
					return err
				}
				return ctx.Err()
			}})
			tr := table(t, r, "t")
			if tr.Chunks < 3 {
				t.Fatalf("got %d chunks, want 3 or more: the test needs equal chunks beside the differing one", tr.Chunks)
			}
			wantRows(t, tr, tt.wantRows...)
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("Settle: got %d calls, want %d", got, tt.wantCalls)
			}
			wantRechecked := 0
			if tt.wantCalls > 0 {
				wantRechecked = 1
			}
			if r.Equal != (len(tt.wantRows) == 0) || r.ChunksRechecked != wantRechecked || r.Rechecks != int(tt.wantCalls) ||
				r.ChunksStillDiffering != tt.wantStill {
				t.Errorf("got equal %v, chunks_rechecked %d, rechecks %d, chunks_still_differing %d; want %v, %d, %d, %d",
					r.Equal, r.ChunksRechecked, r.Rechecks, r.ChunksStillDiffering, len(tt.wantRows) == 0, wantRechecked, tt.wantCalls, tt.wantStill)
			}
			if tr.ChunksRechecked != r.ChunksRechecked || tr.Rechecks != r.Rechecks || tr.ChunksStillDiffering != r.ChunksStillDiffering {
				t.Errorf("table: got chunks_rechecked %d, rechecks %d, chunks_still_differing %d; want the run's %d, %d, %d",
					tr.ChunksRechecked, tr.Rechecks, tr.ChunksStillDiffering, r.ChunksRechecked, r.Rechecks, r.ChunksStillDiffering)
			}
			var text bytes.Buffer
			if err := WriteText(&text, r, 10); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(text.String(), "rechecked "); got != (tt.sentence != "") ||
				tt.sentence != "" && !strings.Contains(text.String(), tt.sentence+"\n") {
				t.Errorf("text report: got\n%s\nwant the line %q", text.String(), tt.sentence)
			}
		})
	}
}

func TestSettleFails(t *testing.T) {
	errStopped := errors.New("follower stopped: replication error 1062")
	tests := []struct {
		name   string
		settle func(ctx context.Context, interrupt context.CancelFunc) error
		check  func(t *testing.T, err error)
	}{
		{
			name:   "Settle's error",
			settle: func(context.Context, context.CancelFunc) error { return errStopped },
			check: func(t *testing.T, err error) {
				if !errors.Is(err, errStopped) || !strings.HasPrefix(err.Error(), "verify: wait for the follower: ") || errors.Is(err, ErrInterrupted) {
					t.Errorf("got error %v, want %q wrapped by \"verify: wait for the follower: \"", err, errStopped)
				}
			},
		},
		{
			name: "interrupted while waiting",
			settle: func(ctx context.Context, interrupt context.CancelFunc) error {
				interrupt()
				<-ctx.Done()
				return ctx.Err()
			},
			check: func(t *testing.T, err error) {
				if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) {
					t.Errorf("got error %v, want ErrInterrupted and context.Canceled", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := settlePair(t)
			ctx, interrupt := context.WithCancel(testCtx(t))
			defer interrupt()
			var calls atomic.Int64
			started := time.Now()
			r, err := Run(ctx, p.srcSide, p.dstSd, Options{chunkRows: 1000, Rechecks: 3, Settle: func(ctx context.Context) error {
				calls.Add(1)
				return tt.settle(ctx, interrupt)
			}})
			tt.check(t, err)
			if r == nil {
				t.Fatal("got no report, want one")
			}
			if r.Equal || !r.Interrupted {
				t.Errorf("got report equal %v, interrupted %v; want false, true", r.Equal, r.Interrupted)
			}
			if got := calls.Load(); got != 1 {
				t.Errorf("Settle: got %d calls, want 1", got)
			}
			if d := time.Since(started); d > time.Minute {
				t.Errorf("Run took %v after Settle failed", d)
			}
		})
	}
}

func TestValidateRechecks(t *testing.T) {
	settle := func(context.Context) error { return nil }
	tests := []struct {
		name     string
		rechecks int
		settle   func(context.Context) error
		want     string // "" for valid
	}{
		{"none", 0, nil, ""},
		{"with a follower", 3, settle, ""},
		{"negative", -1, settle, "--rechecks must be >= 0"},
		{"without a follower", 2, nil, "--rechecks needs a follower"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{Threads: 1, ChunkTime: time.Second, MaxRows: 1, Rechecks: tt.rechecks, Settle: tt.settle}
			err := o.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !usage.Is(err)):
				t.Errorf("got %v, want a usage error with %q", err, tt.want)
			}
		})
	}
}

func TestReportRechecks(t *testing.T) {
	const sentence = "rechecked 3 chunks that differed while the target was being followed: 2 matched on a recheck, 1 still differ"
	r := sampleReport()
	var plain bytes.Buffer
	if err := WriteText(&plain, r, 2); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "rechecked") {
		t.Errorf("text report without rechecks mentions them:\n%s", plain.String())
	}
	r.ChunksRechecked, r.Rechecks, r.ChunksStillDiffering = 3, 5, 1
	var text, html, js bytes.Buffer
	if err := WriteText(&text, r, 2); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "\n"+sentence+"\n") {
		t.Errorf("text report: got\n%s\nwant the line %q", text.String(), sentence)
	}
	if err := WriteHTML(&html, r, 2); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(html.String(), ">"+sentence+"<") {
		t.Errorf("HTML report lacks %q", sentence)
	}
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]float64{"chunks_rechecked": 3, "rechecks": 5, "chunks_still_differing": 1} {
		if got, ok := doc[field].(float64); !ok || got != want {
			t.Errorf("JSON %s: got %v, want %v", field, doc[field], want)
		}
	}
}
