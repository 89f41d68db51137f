package workload

import (
	"errors"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/histogram"
)

// StatementNamer is a generator that reports figures per statement (the sql
// workload). Its workers get a StmtRecorder in WorkerEnv.Stmts and record
// the latency of statement i of the returned list there; a statement that
// fails is returned as a *StmtError, and the runner counts it, for the
// statement and in the run's totals at once.
type StatementNamer interface {
	StatementNames() []string
}

// StmtError is the failure of statement Index of a StatementNamer's list.
type StmtError struct {
	Index int
	Err   error
}

func (e *StmtError) Error() string { return e.Err.Error() }
func (e *StmtError) Unwrap() error { return e.Err }

// InStatement marks err as the failure of statement i.
func InStatement(i int, err error) error { return &StmtError{Index: i, Err: err} }

// StatementOf returns the index of the statement err is the failure of, or
// -1.
func StatementOf(err error) int {
	var se *StmtError
	if errors.As(err, &se) {
		return se.Index
	}
	return -1
}

// StmtStats gathers latency per statement for many threads. Each thread
// records through its own StmtRecorder, which batches samples so the
// shared lock is taken once per batch. Safe for concurrent use. Errors are
// counted by whoever counts the load's errors (see StmtError).
type StmtStats struct {
	names []string

	mu    sync.Mutex
	epoch uint64
	hists []*histogram.Histogram // created on first sample
}

// NewStmtStats returns an empty collection for the named statements.
func NewStmtStats(names []string) *StmtStats {
	return &StmtStats{
		names: append([]string(nil), names...),
		hists: make([]*histogram.Histogram, len(names)),
	}
}

// Names returns the statements' names.
func (s *StmtStats) Names() []string { return s.names }

// Recorder returns a new handle for one thread.
func (s *StmtStats) Recorder() *StmtRecorder {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &StmtRecorder{s: s, epoch: s.epoch, buf: make([]stmtSample, 0, stmtBatch)}
}

// Reset drops everything recorded so far (the end of a warm-up). Samples a
// recorder still holds from before are dropped when it next flushes.
func (s *StmtStats) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epoch++
	for i := range s.hists {
		s.hists[i] = nil
	}
}

// StmtOutcome is what was measured for one statement.
type StmtOutcome struct {
	Name    string
	Latency *histogram.Histogram
	Errors  map[uint16]int64
}

// Outcome returns a copy of the latencies per statement, in the order of
// the names, with empty Errors for the caller to fill. Flush the recorders
// first.
func (s *StmtStats) Outcome() []StmtOutcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]StmtOutcome, len(s.names))
	for i, n := range s.names {
		h := histogram.New()
		if s.hists[i] != nil {
			h.Merge(s.hists[i])
		}
		out[i] = StmtOutcome{Name: n, Latency: h, Errors: map[uint16]int64{}}
	}
	return out
}

// stmtBatch is how many samples a recorder holds before it flushes.
const stmtBatch = 128

type stmtSample struct {
	i int32
	d time.Duration
}

// StmtRecorder is one thread's handle on a StmtStats. It is used by that
// thread only; Flush may be called by another goroutine once the thread has
// ended.
type StmtRecorder struct {
	s     *StmtStats
	epoch uint64
	buf   []stmtSample
}

// Record adds the latency of one run of statement i.
func (r *StmtRecorder) Record(i int, d time.Duration) {
	if r == nil {
		return
	}
	r.buf = append(r.buf, stmtSample{int32(i), d})
	if len(r.buf) == cap(r.buf) {
		r.Flush()
	}
}

// Flush hands the pending samples to the shared figures.
func (r *StmtRecorder) Flush() {
	if r == nil || len(r.buf) == 0 {
		return
	}
	s := r.s
	s.mu.Lock()
	if r.epoch == s.epoch {
		for _, x := range r.buf {
			if int(x.i) < 0 || int(x.i) >= len(s.hists) {
				continue
			}
			h := s.hists[x.i]
			if h == nil {
				h = histogram.New()
				s.hists[x.i] = h
			}
			h.Record(x.d)
		}
	}
	r.epoch = s.epoch
	s.mu.Unlock()
	r.buf = r.buf[:0]
}
