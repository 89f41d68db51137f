package runner

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// schedule hands out Poisson arrival times shared by all threads, so events
// queue (and their latency grows) when the threads cannot keep up.
type schedule struct {
	mu    sync.Mutex
	next  time.Time
	mean  float64 // seconds between arrivals
	rnd   *rand.Rand
	taken atomic.Int64
	start time.Time
	rate  float64
	// from and to are the measured window, set before the threads start
	// (to is zero without a time limit); inWindow counts the arrivals
	// due within it. Both are under mu.
	from, to time.Time
	inWindow int64
}

// newSchedule draws arrivals at rate from start. stream tells apart the
// schedules of the runners of a split load: the same seed with another
// stream gives an independent sequence.
func newSchedule(start time.Time, rate float64, seed int64, stream uint64) *schedule {
	s := &schedule{next: start, mean: 1 / rate, start: start, rate: rate}
	s.rnd = rand.New(rand.NewPCG(uint64(seed), 0x5eed+stream))
	return s
}

func (s *schedule) take() time.Time {
	s.mu.Lock()
	at := s.advance()
	s.mu.Unlock()
	s.taken.Add(1)
	return at
}

// advance draws the next arrival and counts it when it falls in the
// measured window. The caller holds mu.
func (s *schedule) advance() time.Time {
	at := s.next
	s.next = at.Add(time.Duration(s.rnd.ExpFloat64() * s.mean * float64(time.Second)))
	if !at.Before(s.from) && !s.to.IsZero() && at.Before(s.to) {
		s.inWindow++
	}
	return at
}

// drain is called once the threads have ended: it draws the arrivals due
// before end that no thread took, and returns how many there were and how
// many arrivals, taken or not, fell in the measured window.
func (s *schedule) drain(end time.Time) (unstarted, inWindow int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.next.Before(end) {
		s.advance()
		unstarted++
	}
	return unstarted, s.inWindow
}

// behind estimates how many arrivals are due but not yet taken.
func (s *schedule) behind(now time.Time) int64 {
	due := int64(now.Sub(s.start).Seconds() * s.rate)
	if n := due - s.taken.Load(); n > 0 {
		return n
	}
	return 0
}
