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
}

func newSchedule(start time.Time, rate float64, seed int64) *schedule {
	s := &schedule{next: start, mean: 1 / rate, start: start, rate: rate}
	s.rnd = rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	return s
}

func (s *schedule) take() time.Time {
	s.mu.Lock()
	at := s.next
	s.next = at.Add(time.Duration(s.rnd.ExpFloat64() * s.mean * float64(time.Second)))
	s.mu.Unlock()
	s.taken.Add(1)
	return at
}

// behind estimates how many arrivals are due but not yet taken.
func (s *schedule) behind(now time.Time) int64 {
	due := int64(now.Sub(s.start).Seconds() * s.rate)
	if n := due - s.taken.Load(); n > 0 {
		return n
	}
	return 0
}
