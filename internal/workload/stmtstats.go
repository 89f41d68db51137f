package workload

import (
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/target"
)

// StatementNamer is a generator that reports figures per statement (the sql
// workload). Its workers get a StmtRecorder in WorkerEnv.Stmts and record
// statement i of the returned list there.
type StatementNamer interface {
	StatementNames() []string
}

// StmtStats gathers latency and errors per statement for many threads. Each
// thread records through its own StmtRecorder, which batches samples so the
// shared lock is taken once per batch. Safe for concurrent use.
type StmtStats struct {
	names []string

	mu    sync.Mutex
	epoch uint64
	hists []*histogram.Histogram // created on first sample
	errs  []map[uint16]int64
}

// NewStmtStats returns an empty collection for the named statements.
func NewStmtStats(names []string) *StmtStats {
	return &StmtStats{
		names: append([]string(nil), names...),
		hists: make([]*histogram.Histogram, len(names)),
		errs:  make([]map[uint16]int64, len(names)),
	}
}

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
		s.errs[i] = nil
	}
}

// StmtOutcome is what was measured for one statement.
type StmtOutcome struct {
	Name    string
	Latency *histogram.Histogram
	Errors  map[uint16]int64
}

// Outcome returns a copy of the figures per statement, in the order of the
// names. Flush the recorders first.
func (s *StmtStats) Outcome() []StmtOutcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]StmtOutcome, len(s.names))
	for i, n := range s.names {
		h := histogram.New()
		if s.hists[i] != nil {
			h.Merge(s.hists[i])
		}
		e := map[uint16]int64{}
		for c, k := range s.errs[i] {
			e[c] = k
		}
		out[i] = StmtOutcome{Name: n, Latency: h, Errors: e}
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

// Fail counts a failed run of statement i by the error's code.
func (r *StmtRecorder) Fail(i int, err error) {
	if r == nil || i < 0 || i >= len(r.s.names) {
		return
	}
	code := target.Code(err)
	s := r.s
	s.mu.Lock()
	if s.errs[i] == nil {
		s.errs[i] = map[uint16]int64{}
	}
	s.errs[i][code]++
	s.mu.Unlock()
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
