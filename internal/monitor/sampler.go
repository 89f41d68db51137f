package monitor

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stats"
)

// Sampler turns readings of its sources into samples. It is not safe for
// concurrent use: one goroutine reads (Record runs one for a run).
type Sampler struct {
	q       *OwnQuerier
	sources []Source
	lim     Limits
	now     func() time.Time

	prev     *Reading
	statuses []result.SourceStatus
	pid      int
	// closers are the connections the sampler opened itself.
	closers []*sql.DB
}

// Close closes the connections the sampler opened to a target's other
// hosts (WatchSampler); the caller's own connection stays open.
func (s *Sampler) Close() {
	for _, c := range s.closers {
		c.Close()
	}
}

// Options adjust a Sampler.
type Options struct {
	// Limits decide some attention marks.
	Limits Limits
	// Host adds host and process figures; nil leaves them out (a server on
	// another machine).
	Host *HostOptions
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// MetricsPort is host:port of the server's HTTP status port, read
	// for the figures its SHOW GLOBAL STATUS lacks (TiDB's); "" for none.
	MetricsPort string
	// Nodes are connections to the target's other hosts, whose status is
	// added to the first's (NodesSource); NodeNames name them.
	Nodes     []Querier
	NodeNames []string
}

// HostOptions say where the host facts are.
type HostOptions struct {
	// Proc is the proc file system's root; "" means /proc.
	Proc string
	// ServerPID is the server's process; 0 when it was not found.
	ServerPID int
	// Client adds shakedown's own CPU.
	Client bool
}

// NewSampler returns a sampler that queries through q, which should be one
// connection of its own (a pool limited to one connection does). It reads
// the global status, the InnoDB figures the status lacks and, with
// opt.Host, the host and the processes.
func NewSampler(q Querier, opt Options) *Sampler {
	sources := []Source{StatusSource{}, &InnoDBSource{}}
	if len(opt.Nodes) > 0 {
		sources = append(sources, NewNodesSource(opt.Nodes, opt.NodeNames))
	}
	if opt.MetricsPort != "" {
		sources = append(sources, MetricsPortSource{Addr: opt.MetricsPort})
	}
	if h := opt.Host; h != nil {
		proc := h.Proc
		if proc == "" {
			proc = "/proc"
		}
		if h.ServerPID > 0 || h.Client {
			sources = append(sources, ProcessSource{Proc: proc, ServerPID: h.ServerPID, Client: h.Client})
		}
		sources = append(sources, HostSource{Proc: proc})
		// The server's cgroup counters, where they can be read (a live
		// /proc: the cgroup files are found through it and /sys).
		if cg := (CgroupSource{ServerPID: h.ServerPID}); h.ServerPID > 0 && proc == "/proc" && cg.Read(context.Background(), nil, &Reading{Values: map[string]float64{}}) == nil {
			sources = append(sources, cg)
		}
	}
	return NewSamplerWith(q, opt, sources...)
}

// NewSamplerWith returns a sampler over the given sources, read in order
// (the status source first: a reading's time is taken around it).
func NewSamplerWith(q Querier, opt Options, sources ...Source) *Sampler {
	s := &Sampler{q: NewOwnQuerier(q), sources: sources, lim: opt.Limits, now: opt.Now}
	if s.now == nil {
		s.now = time.Now
	}
	for _, src := range sources {
		s.statuses = append(s.statuses, result.SourceStatus{Name: src.Name()})
	}
	if opt.Host != nil {
		s.pid = opt.Host.ServerPID
	}
	return s
}

// Read takes one reading of every source. A source that fails is noted in
// the reading's Failed map; the others are still read.
func (s *Sampler) Read(ctx context.Context) *Reading {
	r := &Reading{Values: map[string]float64{}}
	for i, src := range s.sources {
		t0 := s.now()
		err := src.Read(ctx, s.q, r)
		if i == 0 {
			t1 := s.now()
			r.At = t0.Add(t1.Sub(t0) / 2)
		}
		st := &s.statuses[i]
		st.Reads++
		if err != nil {
			st.Failures++
			st.LastError = err.Error()
			if r.Failed == nil {
				r.Failed = map[string]string{}
			}
			r.Failed[src.Name()] = err.Error()
		}
	}
	if r.At.IsZero() {
		r.At = s.now()
	}
	return r
}

// Next takes a reading and returns the sample since the previous one; ok is
// false for the first reading, which only sets the baseline.
func (s *Sampler) Next(ctx context.Context) (smp result.Sample, ok bool) {
	cur := s.Read(ctx)
	prev := s.prev
	s.prev = cur
	if prev == nil {
		return result.Sample{}, false
	}
	return compute(prev, cur, s.lim), true
}

// OwnStatements is how many statements the sampler has sent.
func (s *Sampler) OwnStatements() int64 { return s.q.Statements() }

// Statuses says how each source fared so far.
func (s *Sampler) Statuses() []result.SourceStatus {
	return append([]result.SourceStatus(nil), s.statuses...)
}

// Recording is a sampler reading in its own goroutine; Stop ends it.
type Recording struct {
	s        *Sampler
	interval time.Duration
	onSample func(result.Sample)

	mu     sync.Mutex
	series *result.Series
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

// Record reads a baseline now, then a sample every interval until Stop is
// called or ctx ends. onSample, when set, is called from the recording
// goroutine with each sample and must not block for long.
func (s *Sampler) Record(ctx context.Context, interval time.Duration, onSample func(result.Sample)) *Recording {
	if interval <= 0 {
		interval = time.Second
	}
	rec := &Recording{
		s: s, interval: interval, onSample: onSample,
		series: &result.Series{IntervalS: interval.Seconds(), Samples: []result.Sample{}, Keys: []string{}},
		stop:   make(chan struct{}), done: make(chan struct{}),
	}
	rctx, cancel := context.WithTimeout(ctx, readTimeout(interval))
	s.Next(rctx)
	cancel()
	if s.prev != nil {
		rec.series.Start = s.prev.At
	}
	go rec.loop(ctx)
	return rec
}

// readTimeout bounds one reading, so that a hung server delays samples
// instead of stopping them for good.
func readTimeout(interval time.Duration) time.Duration {
	if d := 5 * interval; d > 5*time.Second {
		return d
	}
	return 5 * time.Second
}

func (rec *Recording) loop(ctx context.Context) {
	defer close(rec.done)
	t := time.NewTicker(rec.interval)
	defer t.Stop()
	take := func(ctx context.Context) {
		rctx, cancel := context.WithTimeout(ctx, readTimeout(rec.interval))
		smp, ok := rec.s.Next(rctx)
		cancel()
		if !ok {
			return
		}
		rec.mu.Lock()
		smp.AtS = stats.Round(smp.Wall.Sub(rec.series.Start).Seconds(), 3)
		addSample(rec.series, smp)
		rec.mu.Unlock()
		if rec.onSample != nil {
			rec.onSample(smp)
		}
	}
	for {
		select {
		case <-t.C:
			take(ctx)
		case <-rec.stop:
			// A last, partial interval so that the series covers the run
			// to its end; it is read even when ctx was cancelled (Ctrl-C).
			// One much shorter than the interval would be mostly noise.
			if rec.s.prev == nil || rec.s.now().Sub(rec.s.prev.At) >= rec.interval/10 {
				take(context.WithoutCancel(ctx))
			}
			return
		case <-ctx.Done():
			return
		}
	}
}

// Stop takes a last sample, ends the goroutine and returns the series. It
// may be called more than once; later calls return the same series.
func (rec *Recording) Stop() *result.Series {
	rec.once.Do(func() { close(rec.stop) })
	<-rec.done
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.series.Sources = rec.s.Statuses()
	rec.series.OwnStatements = rec.s.OwnStatements()
	rec.series.ServerPID = rec.s.pid
	return rec.series
}
