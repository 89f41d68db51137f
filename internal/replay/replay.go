// Package replay plays a capture back on a control and one or more
// candidates: each captured session on its own connection to each target,
// its statements in order with its session state (default database, SET,
// prepared statements), sessions concurrently, at the captured pace or
// faster. Every statement's result on each candidate is compared with the
// control's: errors, warnings, row count, columns and a checksum of the
// rows that ignores their order unless ORDER BY sets it. Latencies are
// gathered per fingerprint and target.
//
// By default only statements that the parser shows cannot write are run;
// the others are skipped and counted.
package replay

import (
	"context"
	"database/sql/driver"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/capture"
	"github.com/shakedown/shakedown/internal/fingerprint"
	"github.com/shakedown/shakedown/internal/target"
)

// Target is one server a capture is replayed on.
type Target struct {
	Name   string
	Target *target.Target
	// FixedDB: the target's database stands for the captured default
	// database (its URL named one), so that a copy under another name can
	// be replayed on; else each session uses the captured database.
	FixedDB bool
}

// Options tune a replay.
type Options struct {
	// Speed 1 keeps the captured timing, N runs N times faster, 0 runs as
	// fast as possible.
	Speed float64
	// Concurrency caps the statements running at once (0: no cap); each
	// session keeps its own connections whatever the cap.
	Concurrency int
	// AllowWrites runs statements that may write.
	AllowWrites bool
	// Timeout bounds each statement on each target.
	Timeout time.Duration
	// Progress, if set, gets a line every ProgressInterval.
	Progress         io.Writer
	ProgressInterval time.Duration
	// Now is the clock (tests may fix it).
	Now func() time.Time
}

// ErrInterrupted means the replay was stopped before the end of the
// capture; the report covers what ran.
var ErrInterrupted = errors.New("replay interrupted")

// stmt is one captured statement on its way to a session.
type stmt struct {
	rec  *capture.Record
	info *fingerprint.Info
	due  time.Time // zero: at once
	args []driver.NamedValue
}

// engine runs one replay.
type engine struct {
	opts  Options
	sides []*side
	tally *tally
	seed  maphash.Seed
	sem   chan struct{}
	wg    sync.WaitGroup

	liveMu sync.Mutex
	live   map[*sniffer]bool // open sockets, cut short when ctx ends
}

// track registers an open socket; untrack forgets it.
func (e *engine) track(s *sniffer) {
	e.liveMu.Lock()
	e.live[s] = true
	e.liveMu.Unlock()
}

func (e *engine) untrack(s *sniffer) {
	e.liveMu.Lock()
	delete(e.live, s)
	e.liveMu.Unlock()
}

// interruptOnCancel moves every open socket's deadline to the past when ctx
// ends, so that statements waiting on a server return at once. It stops
// when stop is closed.
func (e *engine) interruptOnCancel(ctx context.Context, stop <-chan struct{}) {
	select {
	case <-stop:
	case <-ctx.Done():
		e.liveMu.Lock()
		for s := range e.live {
			s.SetDeadline(time.Unix(1, 0))
		}
		e.liveMu.Unlock()
	}
}

// A session without a statement for idleSession of capture time (µs), or
// for idleRecords records of a capture without times, is closed; a later
// statement of it opens it again (its SET statements are not repeated).
const (
	idleSession = int64(10 * time.Minute / time.Microsecond)
	idleRecords = 1000000
)

// sessionQueue is how many statements wait for a session: memory is this
// times the number of open sessions, whatever the capture's size.
const sessionQueue = 256

// Run replays the capture that rd reads on targets (the control first) and
// returns the report. A report is returned also when the replay is
// interrupted (with ErrInterrupted) or a target fails.
func Run(ctx context.Context, rd *capture.Reader, targets []Target, opts Options) (*Report, error) {
	if len(targets) < 2 {
		return nil, errors.New("replay needs a control and at least one candidate")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Timeout <= 0 {
		opts.Timeout = time.Minute
	}
	e := &engine{opts: opts, tally: newTally(len(targets)), seed: maphash.MakeSeed(), live: map[*sniffer]bool{}}
	for _, t := range targets {
		sd, err := newSide(t.Name, t.Target)
		if err != nil {
			return nil, err
		}
		sd.fixedDB = t.FixedDB
		e.sides = append(e.sides, sd)
	}
	// Check every target answers before anything runs.
	for _, sd := range e.sides {
		cctx, cancel := context.WithTimeout(ctx, sd.t.ConnectTimeout+5*time.Second)
		c, err := sd.connect(cctx)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("connect to %s (%s): %w", sd.name, sd.t.Redacted(), err)
		}
		c.close()
	}
	if opts.Concurrency > 0 {
		e.sem = make(chan struct{}, opts.Concurrency)
	}
	started := opts.Now()
	stopProgress := e.progress(ctx, started)
	stopWatch := make(chan struct{})
	watchDone := make(chan struct{})
	go func() { defer close(watchDone); e.interruptOnCancel(ctx, stopWatch) }()
	readErr := e.dispatch(ctx, rd, started)
	e.wg.Wait()
	close(stopWatch)
	<-watchDone
	stopProgress()
	rep := e.report(rd, targets, started, opts.Now())
	switch {
	case ctx.Err() != nil:
		rep.Interrupted = true
		return rep, ErrInterrupted
	case readErr != nil:
		rep.Interrupted = true
		return rep, readErr
	}
	return rep, nil
}

// dispatch reads the capture and hands each statement to its session's
// goroutine, starting one per new session.
func (e *engine) dispatch(ctx context.Context, rd *capture.Reader, started time.Time) error {
	an := fingerprint.NewAnalyzer()
	sessions := map[string]chan *stmt{}
	last := map[string]int64{} // when each open session last had a statement
	defer func() {
		for _, ch := range sessions {
			close(ch)
		}
	}()
	var t0, n, now int64
	for {
		if ctx.Err() != nil {
			return nil
		}
		rec := &capture.Record{}
		err := rd.Next(rec)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		n++
		if rec.TS > now {
			now = rec.TS
		}
		if n%4096 == 0 {
			// Slow logs never say that a session ended: one idle for
			// longer than idleSession of capture time (or idleRecords
			// records, when there are no times) is closed, so that open
			// connections follow the sessions in use, not all there were.
			for name, at := range last {
				if (now > 0 && at < now-idleSession) || (now == 0 && at < n-idleRecords) {
					close(sessions[name])
					delete(sessions, name)
					delete(last, name)
				}
			}
		}
		ch := sessions[rec.Session]
		if rec.Kind == capture.KindQuit {
			if ch != nil {
				close(ch)
				delete(sessions, rec.Session)
				delete(last, rec.Session)
			}
			continue
		}
		if now > 0 {
			last[rec.Session] = now
		} else {
			last[rec.Session] = n
		}
		if rec.Kind != "" || rec.SQL == "" {
			continue
		}
		info, _ := an.Analyze(rec.SQL)
		if !info.ReadOnly && !e.opts.AllowWrites {
			e.tally.skip(info.Write)
			continue
		}
		st := &stmt{rec: rec, info: info}
		if rec.Prepared {
			args, err := paramArgs(rec.Params)
			if err != nil {
				e.tally.skip("unreadable parameters")
				continue
			}
			st.args = args
		}
		if e.opts.Speed > 0 && rec.TS > 0 {
			if t0 == 0 {
				t0 = rec.TS
			}
			off := time.Duration(float64(rec.TS-t0)*float64(time.Microsecond)/e.opts.Speed) * 1
			st.due = started.Add(off)
		}
		if ch == nil {
			ch = make(chan *stmt, sessionQueue)
			sessions[rec.Session] = ch
			e.wg.Add(1)
			go e.session(ctx, rec.Session, ch)
		}
		select {
		case ch <- st:
		case <-ctx.Done():
			return nil
		}
	}
}

// session replays one captured session until its channel closes or ctx
// ends. It owns its connections.
func (e *engine) session(ctx context.Context, name string, ch <-chan *stmt) {
	defer e.wg.Done()
	s := &sessionState{e: e, name: name, conns: make([]*conn, len(e.sides))}
	defer s.closeAll()
	for st := range ch {
		if ctx.Err() != nil {
			continue // drain, so that the dispatcher never blocks
		}
		if !st.due.IsZero() {
			if d := time.Until(st.due); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					continue
				}
			}
		}
		if e.sem != nil {
			select {
			case e.sem <- struct{}{}:
			case <-ctx.Done():
				continue
			}
		}
		res := s.runAll(ctx, st)
		if e.sem != nil {
			<-e.sem
		}
		if ctx.Err() != nil {
			continue // cut short by the interrupt: not a result
		}
		e.tally.add(st, res)
	}
}

// sessionState is a session's connections and the state to restore on a
// new connection.
type sessionState struct {
	e     *engine
	name  string
	conns []*conn
	sets  []string // SET statements that succeeded on the control, in order
}

const maxSets = 64

func (s *sessionState) closeAll() {
	for i, c := range s.conns {
		if c != nil {
			s.release(c)
			s.conns[i] = nil
		}
	}
}

// runAll runs st on every target at once and returns the results, the
// control's first.
func (s *sessionState) runAll(ctx context.Context, st *stmt) []result {
	res := make([]result, len(s.e.sides))
	var wg sync.WaitGroup
	for i := 1; i < len(s.e.sides); i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res[i] = s.runOn(ctx, i, st)
		}(i)
	}
	res[0] = s.runOn(ctx, 0, st)
	wg.Wait()
	if st.info.Session && res[0].errCode == 0 && !strings.HasPrefix(strings.ToLower(strings.TrimSpace(st.rec.SQL)), "use") && len(s.sets) < maxSets {
		s.sets = append(s.sets, st.rec.SQL)
	}
	return res
}

// runOn runs st on target i, connecting (and restoring the session's state)
// first when needed. A lost connection is dropped; the next statement
// reconnects.
func (s *sessionState) runOn(ctx context.Context, i int, st *stmt) result {
	c := s.conns[i]
	if c == nil {
		cctx, cancel := context.WithTimeout(ctx, s.e.opts.Timeout)
		var err error
		c, err = s.open(cctx, i)
		cancel()
		if err != nil {
			return result{errCode: -1, errMsg: "connect: " + err.Error(), lost: true, warnings: -1}
		}
		s.conns[i] = c
	}
	// The statement is bounded by a deadline on the socket, which the
	// engine moves to the past when ctx ends: cheaper per statement than a
	// context, which the driver watches with a goroutine of its own. Under
	// TLS, where the socket is not ours, a context bounds it.
	qctx := context.Background()
	if c.sn != nil {
		c.sn.SetDeadline(time.Now().Add(s.e.opts.Timeout))
		if ctx.Err() != nil {
			return result{errCode: -1, errMsg: "interrupted", warnings: -1}
		}
	} else {
		var cancel context.CancelFunc
		qctx, cancel = context.WithTimeout(ctx, s.e.opts.Timeout)
		defer cancel()
	}
	if db := st.rec.DB; db != "" && db != c.db && !s.e.sides[i].fixedDB {
		if _, err := c.dc.(driver.ExecerContext).ExecContext(qctx, "USE "+quoteIdent(db), nil); err != nil {
			var r result
			r.setError(err)
			if r.lost {
				s.drop(i)
			}
			return r
		}
		c.db = db
	}
	r := c.run(qctx, s.e.seed, st.rec.SQL, st.rec.Prepared, st.args, st.info.OrderKeys)
	if r.lost {
		s.drop(i)
	} else if db, ok := useOf(st); ok && r.errCode == 0 {
		c.db = db
	}
	return r
}

func (s *sessionState) drop(i int) {
	if c := s.conns[i]; c != nil {
		s.release(c)
		s.conns[i] = nil
	}
}

// release closes c and forgets its socket.
func (s *sessionState) release(c *conn) {
	if c.sn != nil {
		s.e.untrack(c.sn)
	}
	c.close()
}

// open connects session s to target i and repeats its SET statements.
func (s *sessionState) open(ctx context.Context, i int) (*conn, error) {
	c, err := s.e.sides[i].connect(ctx)
	if err != nil {
		return nil, err
	}
	if c.sn != nil {
		s.e.track(c.sn)
		// The SET statements below are bounded like any statement, and
		// cut short if the replay was interrupted meanwhile.
		c.sn.SetDeadline(time.Now().Add(s.e.opts.Timeout))
		if ctx.Err() != nil {
			c.sn.SetDeadline(time.Unix(1, 0))
		}
	}
	for _, q := range s.sets {
		// A SET that fails here failed the same way when it first ran on
		// this target, and was compared then.
		_, _ = c.dc.(driver.ExecerContext).ExecContext(ctx, q, nil)
	}
	return c, nil
}

func useOf(st *stmt) (string, bool) {
	if st.info.Verb != "USE" {
		return "", false
	}
	f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(st.rec.SQL), ";"))
	if len(f) != 2 {
		return "", false
	}
	return strings.Trim(f[1], "`"), true
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// paramArgs turns a capture's parameters into driver arguments.
func paramArgs(params []any) ([]driver.NamedValue, error) {
	args := make([]driver.NamedValue, len(params))
	for i, p := range params {
		args[i].Ordinal = i + 1
		switch v := p.(type) {
		case nil:
		case json.Number:
			if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				args[i].Value = n
			} else if u, err := strconv.ParseUint(string(v), 10, 64); err == nil {
				args[i].Value = u
			} else if f, err := v.Float64(); err == nil {
				args[i].Value = f
			} else {
				return nil, err
			}
		case string:
			args[i].Value = v
		case bool:
			args[i].Value = v
		case float64:
			args[i].Value = v
		case map[string]any:
			h, _ := v["hex"].(string)
			b, err := hex.DecodeString(h)
			if err != nil {
				return nil, fmt.Errorf("parameter %d: %w", i+1, err)
			}
			args[i].Value = b
		default:
			return nil, fmt.Errorf("parameter %d: unknown value %v", i+1, v)
		}
	}
	return args, nil
}

// progress prints a line every ProgressInterval until the returned stop is
// called.
func (e *engine) progress(ctx context.Context, started time.Time) func() {
	if e.opts.Progress == nil || e.opts.ProgressInterval <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(e.opts.ProgressInterval)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tk.C:
				t := e.tally
				t.mu.Lock()
				n, d, sk := t.statements, t.differences, int64(0)
				for _, v := range t.skipped {
					sk += v
				}
				t.mu.Unlock()
				el := e.opts.Now().Sub(started)
				fmt.Fprintf(e.opts.Progress, "replay: %s  %d statements (%.0f/s), %d differences, %d skipped\n",
					el.Round(time.Second), n, float64(n)/el.Seconds(), d, sk)
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
