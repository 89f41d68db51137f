package slap

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/clock"
	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/ioloop"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/workload"
)

// levelStats gathers the iterations at one concurrency of one engine.
type levelStats struct {
	clients int
	limit   uint64
	engine  string

	times    []time.Duration
	queries  int64
	connects int64
	stats    *workload.StmtStats
	stopped  error // why the level ended early, if it did

	// probe measures the client's own load over the rounds; client is
	// what it came to, once the rounds are over (see clientLoad).
	probe  runner.Probe
	client *result.Client
	// dataCheck is the hot-row check of the level's iterations; nil
	// without a hot-row statement.
	dataCheck *result.DataCheck

	mu       sync.Mutex
	connLat  *histogram.Histogram
	errors   map[uint16]int64   // failed connects
	stmtErrs []map[uint16]int64 // by statement, as in stats
	hot      hotTally           // the hot-row check's iterations so far
	// hotRows and hotUnsure are the current round's: the hot-row
	// statement's rows changed, as acknowledged, and its statements whose
	// answer was lost with the connection.
	hotRows, hotUnsure int64
}

func (lv *levelStats) add(r roundResult) {
	lv.times = append(lv.times, r.elapsed)
	lv.queries += r.queries
	if r.err != nil {
		lv.stopped = r.err
	}
}

func (lv *levelStats) connected(d time.Duration) {
	lv.mu.Lock()
	lv.connLat.Record(d)
	lv.connects++
	lv.mu.Unlock()
}

func (lv *levelStats) connectFailed(code uint16) {
	lv.mu.Lock()
	lv.errors[code]++
	lv.mu.Unlock()
}

// outcome is the figures per statement: latency from stats, errors as
// counted by failed.
func (lv *levelStats) outcome() []workload.StmtOutcome {
	out := lv.stats.Outcome()
	lv.mu.Lock()
	defer lv.mu.Unlock()
	for i := range out {
		if i < len(lv.stmtErrs) {
			for code, n := range lv.stmtErrs[i] {
				out[i].Errors[code] = n
			}
		}
	}
	return out
}

// failed counts a failure of statement i.
func (lv *levelStats) failed(i int, code uint16) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	for len(lv.stmtErrs) <= i {
		lv.stmtErrs = append(lv.stmtErrs, nil)
	}
	if lv.stmtErrs[i] == nil {
		lv.stmtErrs[i] = map[uint16]int64{}
	}
	lv.stmtErrs[i][code]++
}

// clientLoad is what the client spent on lv's rounds, whether that limited
// them, and how its clients waited for replies.
func (s *session) clientLoad(lv *levelStats) *result.Client {
	var n int64
	var sum time.Duration
	for _, st := range lv.stats.Outcome() {
		n += st.Latency.Count()
		sum += st.Latency.Sum()
	}
	var mean time.Duration
	if n > 0 {
		mean = sum / time.Duration(n)
	}
	return lv.probe.Stored(mean, s.plan, lv.clients)
}

// roundResult is one iteration's load.
type roundResult struct {
	elapsed time.Duration
	queries int64
	err     error
}

// round runs the load once: c clients start together; the time is from
// their start to the end of the last, connecting included.
func (s *session) round(ctx context.Context, c int, limit uint64, keys []string, lv *levelStats) roundResult {
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var fatal error
	fail := func(err error) {
		mu.Lock()
		if fatal == nil {
			fatal = err
		}
		mu.Unlock()
		cancel()
	}
	queries := make([]uint64, c)
	seed := s.b.rnd.Uint64()
	if s.b.o.OnlyPrint {
		// One client after the other, so the printout reads in order.
		for k := range queries {
			queries[k] = s.client(rctx, k, limit, keys, seed, lv, fail)
		}
		return roundResult{}
	}
	if s.plan.Looped() {
		start := time.Now()
		g, release, err := s.plan.Group(c, 0)
		if err != nil {
			fail(err)
			return s.roundEnd(ctx, start, queries, &mu, &fatal)
		}
		g.Spread(rctx, c, func(ctx context.Context, k int) {
			// The client's pauses (its connect retries) wait in its loop.
			ctx = clock.WithSleeper(ctx, ioloop.From(ctx))
			queries[k] = s.client(ctx, k, limit, keys, seed, lv, fail)
		})
		release()
		return s.roundEnd(ctx, start, queries, &mu, &fatal)
	}
	ready := make(chan struct{})
	var wg sync.WaitGroup
	for k := range queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-ready
			queries[k] = s.client(rctx, k, limit, keys, seed, lv, fail)
		}()
	}
	start := time.Now()
	close(ready)
	wg.Wait()
	return s.roundEnd(ctx, start, queries, &mu, &fatal)
}

// roundEnd sums a round that began at start.
func (s *session) roundEnd(ctx context.Context, start time.Time, queries []uint64, mu *sync.Mutex, fatal *error) roundResult {
	r := roundResult{elapsed: time.Since(start)}
	for _, q := range queries {
		r.queries += int64(q)
	}
	mu.Lock()
	r.err = *fatal
	mu.Unlock()
	if ctx.Err() != nil {
		r.err = ErrInterrupted
	}
	return r
}

// connectBackoff is mysqlslap's: a client tries ten times, 100 ms apart,
// before it gives up.
var connectBackoff = client.Backoff{First: 100 * time.Millisecond, Max: 100 * time.Millisecond, Attempts: 10}

// connect opens client k's connection, trying as mysqlslap does. It returns
// nil when it gave up; fail was called unless the error is ignored.
func (s *session) connect(ctx context.Context, k int, counts *workload.Counts, lv *levelStats, fail func(error)) workload.Conn {
	var c workload.Conn
	err := s.b.policy.Redial(ctx, clock.Real{}, connectBackoff, nil, func(ctx context.Context) error {
		start := time.Now()
		var err error
		if c, err = s.dialer.Connect(ctx, 0, counts); err == nil {
			lv.connected(time.Since(start))
			s.verbose(3, "connected!\n")
		}
		return err
	}, func(err error) { lv.connectFailed(target.Code(err)) })
	if err == nil {
		return c
	}
	var gaveUp *client.GaveUpError
	if errors.As(err, &gaveUp) && !s.b.policy.Ignored(target.Code(err)) {
		fail(fmt.Errorf("client %d: %w", k+1, gaveUp.Err))
	}
	return nil
}

// textFor is the text a client sends for st: a keyed statement gets a
// random key of keys appended; ok is false when there are none (mysqlslap
// then sends nothing, and counts it).
func (st stmt) textFor(keys []string, rnd *rand.Rand) (string, bool) {
	if st.kind != keyed {
		return st.text, true
	}
	if len(keys) == 0 {
		return "", false
	}
	return st.text + " '" + keys[rnd.IntN(len(keys))] + "'", true
}

// addHot adds a client's hot-row count, at its end, to the round's.
func (lv *levelStats) addHot(c *hotCount) {
	c.closed()
	if c.rows == 0 && c.unsure == 0 {
		return
	}
	lv.mu.Lock()
	lv.hotRows += c.rows
	lv.hotUnsure += c.unsure
	lv.mu.Unlock()
}

// client runs one client's statements and returns how many it ran.
func (s *session) client(ctx context.Context, k int, limit uint64, keys []string, seed uint64, lv *levelStats, fail func(error)) uint64 {
	b, o := s.b, s.b.o
	printOnly := o.OnlyPrint
	counts := &workload.Counts{}
	rec := lv.stats.Recorder()
	defer rec.Flush()
	rnd := rand.New(rand.NewPCG(seed, uint64(k)))

	var conn workload.Conn
	if !printOnly {
		if conn = s.connect(ctx, k, counts, lv, fail); conn == nil {
			return 0
		}
	}
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	execN := func(q string) (int64, error) {
		if printOnly {
			s.outMu.Lock()
			fmt.Fprintf(s.env.Out, "%s;\n", q)
			s.outMu.Unlock()
			return 0, nil
		}
		if o.Verbose >= 3 { // checked here: the call would box q for nothing
			s.verbose(3, "%s;\n", q)
		}
		return conn.Exec(ctx, q)
	}
	exec := func(q string) error { _, err := execN(q); return err }
	// The hot-row statement's rows changed, as acknowledged (hotrow.go);
	// without one, no statement is marked and it counts nothing.
	var hot hotCount
	defer lv.addHot(&hot)
	// failed handles a statement's error; it reports whether the client goes on.
	failed := func(q string, err error) bool {
		if ctx.Err() != nil {
			return false
		}
		switch b.policy.OnStatement(err, conn.Broken()) {
		case client.Retry:
			return true
		case client.Reconnect:
			hot.closed() // the server rolls back what was open
			conn.Close()
			conn = s.connect(ctx, k, counts, lv, fail)
			return conn != nil
		}
		fail(fmt.Errorf("client %d: statement %q: %w; with --ignore-errors failing statements are counted and the clients go on", k+1, shortText(q), err))
		return false
	}
	if o.Commit > 0 {
		if q := "SET AUTOCOMMIT=0"; exec(q) != nil {
			return 0
		}
	}
	var queries uint64
	commits := 0
passes:
	for {
		for i, st := range b.query {
			if !printOnly && o.Detach > 0 && i%o.Detach == 0 {
				// mysqlslap counts from the start of every pass, so it
				// reconnects at the start of each pass too.
				hot.closed()
				conn.Close()
				if conn = s.connect(ctx, k, counts, lv, fail); conn == nil {
					return queries
				}
			}
			if q, ok := st.textFor(keys, rnd); ok {
				start := time.Now()
				if n, err := execN(q); err != nil {
					hot.failed(st, target.Code(err), target.IsConnLost(err) || conn.Broken())
					if ctx.Err() != nil {
						return queries // stopped: the statement in flight does not count
					}
					lv.failed(st.stat, target.Code(err))
					if !failed(q, err) {
						return queries
					}
				} else {
					rec.Record(st.stat, time.Since(start))
					hot.ok(st, n)
				}
			}
			queries++
			s.prog.count()
			if o.Commit > 0 {
				if commits++; commits == o.Commit {
					commits = 0
					if err := exec("COMMIT"); err != nil && !failed("COMMIT", err) {
						return queries
					}
				}
			}
			if limit > 0 && queries == limit {
				break passes
			}
		}
		if limit == 0 || queries >= limit {
			break
		}
	}
	if o.Commit > 0 {
		if err := exec("COMMIT"); err != nil {
			failed("COMMIT", err)
		}
	}
	return queries
}
