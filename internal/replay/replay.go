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
	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/fingerprint"
	"github.com/shakedown/shakedown/internal/ioloop"
	"github.com/shakedown/shakedown/internal/progress"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire"
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
	// Timeout bounds each statement on each target: every read and write
	// of it, so a statement fails when a target sends nothing for this
	// long.
	Timeout time.Duration
	// Progress, if set, gets a line every ProgressInterval.
	Progress         io.Writer
	ProgressInterval time.Duration
	// Now is the clock (tests may fix it).
	Now func() time.Time
	// IO is how the sessions wait for the targets, as run's --client-io
	// (and the tuning the caller read, client.ReadIOTuning): "" and auto
	// are I/O loops, one per core the client may use, each running its
	// sessions' connections to every target as tasks (package ioloop);
	// blocking and polled run a goroutine per session and target.
	IO client.IOChoice
}

// ErrInterrupted means the replay was stopped before the end of the
// capture; the report covers what ran.
var ErrInterrupted = errors.New("replay interrupted")

// stmt is one captured statement on its way to a session's connections.
type stmt struct {
	rec  *capture.Record
	info *fingerprint.Info
	due  time.Time // zero: at once
	args []any
	res  []result // per target, the control's first
}

// engine runs one replay.
type engine struct {
	opts  Options
	sides []*side
	tally *tally
	seed  maphash.Seed
	sem   chan struct{} // when Concurrency caps the statements
	wg    sync.WaitGroup
	plan  client.IOPlan // how sessions wait for replies (IOChoice.ForReplay)
	loops ioloop.Group  // with I/O loops; session i runs on loops.Of(i)
	next  int           // the loop of the next session
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
	e := &engine{opts: opts, tally: newTally(len(targets)), seed: maphash.MakeSeed()}
	for _, t := range targets {
		sd := newSide(t.Name, t.Target, opts.Timeout)
		sd.fixedDB = t.FixedDB
		e.sides = append(e.sides, sd)
	}
	if opts.Concurrency > 0 {
		e.sem = make(chan struct{}, opts.Concurrency)
	}
	// Replay hands each statement between a session's targets, which the
	// loops do without Go's scheduler wherever the targets run.
	tgts := make([]*target.Target, len(targets))
	for i, t := range targets {
		tgts[i] = t.Target
	}
	e.plan = opts.IO.ForReplay(tgts)
	// Check every target answers before anything runs.
	for _, sd := range e.sides {
		c, err := sd.connect(ctx, wire.Options{})
		if err != nil {
			// Said as every command says a failed connect (access
			// denied names the user and where its password came from,
			// never the password).
			return nil, fmt.Errorf("%s (%s): %w", sd.name, sd.t.Redacted(), sd.t.Explain(sd.t.Endpoints()[0], err))
		}
		c.close()
	}
	started := opts.Now()
	stopProgress := e.progress(ctx, started)
	stopLoops, err := e.startLoops()
	if err != nil {
		stopProgress()
		return nil, err
	}
	var probe runner.Probe
	probe.Start()
	readErr := e.dispatch(ctx, rd, started)
	e.wg.Wait()
	probe.End()
	stopLoops()
	stopProgress()
	rep := e.report(rd, targets, started, opts.Now(), e.clientLoad(probe))
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
		info := an.Info(rec.SQL)
		if !info.ReadOnly && !e.opts.AllowWrites {
			e.tally.skip(info.Write)
			continue
		}
		st := &stmt{rec: rec, info: info, res: make([]result, len(e.sides))}
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
			e.start(ctx, rec.Session, ch)
		}
		select {
		case ch <- st:
		case <-ctx.Done():
			return nil
		}
	}
}

// session replays one captured session until its queue closes or ctx
// ends. It runs each statement on the control while one goroutine per
// candidate, which lives as long as the session, runs it on that
// candidate; the next statement starts when every target has finished
// this one, so that the targets see the same statements at the same time.
func (e *engine) session(ctx context.Context, name string, ch <-chan *stmt) {
	defer e.wg.Done()
	ctl := &sessionState{e: e, name: name, i: 0}
	defer ctl.close()
	peers := make([]peer, len(e.sides)-1)
	var pwg sync.WaitGroup
	for k := range peers {
		p := peer{work: make(chan *stmt), done: make(chan struct{}, 1)}
		peers[k] = p
		pwg.Add(1)
		go func(s *sessionState) {
			defer pwg.Done()
			defer s.close()
			for st := range p.work {
				st.res[s.i] = s.run(ctx, st)
				p.done <- struct{}{}
			}
		}(&sessionState{e: e, name: name, i: k + 1})
	}
	defer func() {
		for _, p := range peers {
			close(p.work)
		}
		pwg.Wait()
	}()
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
		for _, p := range peers {
			p.work <- st
		}
		st.res[0] = ctl.run(ctx, st)
		for _, p := range peers {
			<-p.done
		}
		if e.sem != nil {
			<-e.sem
		}
		if ctx.Err() != nil {
			continue // cut short by the interrupt: not a result
		}
		e.tally.add(st, st.res)
	}
}

// peer is a session's goroutine for one candidate: it runs each statement
// sent on work and then says so on done.
type peer struct {
	work chan *stmt
	done chan struct{}
}

// sessionState is a session's connection to one target and the state to
// restore on a new connection.
type sessionState struct {
	e    *engine
	name string
	i    int // the target
	c    *conn
	sets []string // SET statements that succeeded, in order
}

const maxSets = 64

func (s *sessionState) close() {
	if s.c != nil {
		s.c.close()
		s.c = nil
	}
}

// run runs st, connecting (and restoring the session's state) first when
// needed. A lost connection is dropped; the next statement reconnects.
// Every read and write is bounded by the statement timeout, and cut
// short when the replay's context ends.
func (s *sessionState) run(ctx context.Context, st *stmt) result {
	if s.c == nil {
		c, err := s.open(ctx)
		if err != nil {
			return result{errCode: -1, errMsg: "connect: " + err.Error(), lost: true, warnings: -1}
		}
		s.c = c
	}
	c := s.c
	if db := st.rec.DB; db != "" && db != c.db && !s.e.sides[s.i].fixedDB {
		if _, err := c.w.Query("USE " + escape.Ident(db)); err != nil {
			var r result
			r.setError(err, c.w.Broken())
			if r.lost {
				s.close()
			}
			return r
		}
		c.db = db
	}
	r := c.run(s.e.seed, st.rec.SQL, st.rec.Prepared, st.args, st.info.OrderKeys)
	switch {
	case r.lost:
		s.close()
	case r.errCode != 0:
	case st.info.Verb == "USE":
		if db, ok := useOf(st); ok {
			c.db = db
		}
	case st.info.Session && len(s.sets) < maxSets:
		s.sets = append(s.sets, st.rec.SQL)
	}
	return r
}

// open connects the session to its target and repeats its SET statements.
// The connection waits as Options.IO says; through the loop of the
// task ctx carries, with I/O loops.
func (s *sessionState) open(ctx context.Context) (*conn, error) {
	c, err := s.e.sides[s.i].connect(ctx, s.e.plan.IO)
	if err != nil {
		return nil, err
	}
	for _, q := range s.sets {
		// A SET that fails here failed the same way when it first ran on
		// this target, and was compared then.
		_, _ = c.w.Query(q)
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

// paramArgs turns a capture's parameters into statement arguments.
func paramArgs(params []any) ([]any, error) {
	args := make([]any, len(params))
	for i, p := range params {
		switch v := p.(type) {
		case nil:
		case json.Number:
			if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
				args[i] = n
			} else if u, err := strconv.ParseUint(string(v), 10, 64); err == nil {
				args[i] = u
			} else if f, err := v.Float64(); err == nil {
				args[i] = f
			} else {
				return nil, err
			}
		case string, bool, float64:
			args[i] = v
		case map[string]any:
			h, _ := v["hex"].(string)
			b, err := hex.DecodeString(h)
			if err != nil {
				return nil, fmt.Errorf("parameter %d: %w", i+1, err)
			}
			args[i] = b
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
	return progress.Every(ctx, e.opts.ProgressInterval, func() {
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
	})
}
