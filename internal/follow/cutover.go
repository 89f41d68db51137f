package follow

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/verify"
)

// Verify modes of a cutover.
const (
	VerifyFull = "full" // verify's chunked comparison, rows where chunks differ
	VerifyNone = "none"
)

// CutoverOptions control a cutover.
type CutoverOptions struct {
	// Follow is the follower's options when none is at work on the target:
	// the cutover then runs one itself, from the saved position.
	Follow Options
	// MaxLag is the lag the follower must be under before the source is
	// made read-only (default 1s); LagWait bounds the waits for it and for
	// the final position (default 5m).
	MaxLag, LagWait time.Duration
	// AllowSetGlobal must be set: the source's read_only is set.
	AllowSetGlobal bool
	// KeepReadOnly leaves the source read-only at the end.
	KeepReadOnly bool
	// KillWriters ends the source's sessions that have written in an open
	// transaction, once it is read-only.
	KillWriters bool
	// Verify is VerifyFull (default) or VerifyNone.
	Verify string
	// Rehearse (the default in the command) makes the source writable
	// again at the end; otherwise it stays read-only and the follower
	// this cutover ran stops.
	Rehearse bool
	Log      io.Writer
}

// Validate checks the options as the flags set them.
func (o *CutoverOptions) Validate() error {
	switch {
	case !o.AllowSetGlobal:
		return usage.Errorf("cutover: it sets read_only = ON on SOURCE for the switch (and restores it after a rehearsal); add --allow-set-global")
	case o.Verify != "" && o.Verify != VerifyFull && o.Verify != VerifyNone:
		return usage.Errorf("cutover: --verify must be full or none, got %q", o.Verify)
	case o.MaxLag < 0 || o.LagWait < 0:
		return usage.Errorf("cutover: --max-lag and --lag-wait must not be negative")
	}
	return o.Follow.Validate("cutover")
}

// CutoverStep is one step of the timeline, timed from the cutover's start.
type CutoverStep struct {
	Name    string  `json:"name"`
	At      float64 `json:"at_seconds"`
	Seconds float64 `json:"seconds"`
	Detail  string  `json:"detail"`
}

// CutoverResult is a cutover's timeline and outcome.
type CutoverResult struct {
	Source    string        `json:"source"`
	Target    string        `json:"target"`
	Databases []Pair        `json:"databases"`
	Rehearsal bool          `json:"rehearsal"`
	Steps     []CutoverStep `json:"steps"`
	// WriteUnavailable is from read_only on to the verify's end: how long
	// the application could not write.
	WriteUnavailable float64  `json:"write_unavailable_seconds"`
	ReadOnlyBefore   string   `json:"read_only_before"`
	ReadOnlyRestored bool     `json:"read_only_restored"`
	FinalPosition    Position `json:"final_position"`
	Verify           string   `json:"verify"`
	Verified         bool     `json:"verified"`
	Equal            bool     `json:"equal"`
	DifferingRows    int64    `json:"differing_rows"`
	Rows             int64    `json:"rows_compared"`
	KilledWriters    int      `json:"killed_writers"`
	// WrittenAfter is the source's position after the verify where it
	// moved past FinalPosition: something wrote under read_only.
	WrittenAfter *Position `json:"written_after_read_only,omitempty"`
	Notes        []string  `json:"notes"`
}

// cutover is one run of Cutover.
type cutover struct {
	opts    CutoverOptions
	res     *CutoverResult
	started time.Time
	src     *sql.DB
}

func (c *cutover) step(name, format string, args ...any) {
	now := time.Since(c.started).Seconds()
	prev := 0.0
	if n := len(c.res.Steps); n > 0 {
		prev = c.res.Steps[n-1].At
	}
	s := CutoverStep{Name: name, At: now, Seconds: now - prev, Detail: fmt.Sprintf(format, args...)}
	c.res.Steps = append(c.res.Steps, s)
	if c.opts.Log != nil {
		fmt.Fprintf(c.opts.Log, "cutover: %8.3f s  %s\n", s.At, s.Detail)
	}
}

// Cutover rehearses (or, without Rehearse, makes) the switch from src to
// dst: it waits for the follower's lag to fall under MaxLag, makes the
// source read-only, waits for the follower to apply the source's final
// position, verifies the followed databases, and makes the source writable
// again. The result is non-nil whenever the source was touched; the
// source's read_only is restored also when ctx ends.
func Cutover(ctx context.Context, src, dst *target.Target, opts CutoverOptions) (res *CutoverResult, err error) {
	if opts.MaxLag <= 0 {
		opts.MaxLag = time.Second
	}
	if opts.LagWait <= 0 {
		opts.LagWait = 5 * time.Minute
	}
	if opts.Verify == "" {
		opts.Verify = VerifyFull
	}
	fo := opts.Follow
	fo.defaults()
	pairs := pairsOf(src, dst, fo.Databases)
	c := &cutover{opts: opts, started: time.Now(), res: &CutoverResult{
		Source: src.Redacted(), Target: dst.Redacted(), Databases: pairs, Rehearsal: opts.Rehearse, Verify: opts.Verify, Notes: []string{},
	}}
	spool, _, _, err := src.ConnectSession(ctx, "", 2, nil)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	defer spool.Close()
	c.src = spool
	dpool, _, _, err := dst.ConnectSession(ctx, "", 2, nil)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	defer dpool.Close()
	w := NewWatcher(spool, dpool, targetNames(pairs))

	stopFollower, err := c.follower(ctx, w, src, dst, fo)
	if err != nil {
		return nil, err
	}
	defer stopFollower()
	if err := c.waitLag(ctx, w); err != nil {
		return nil, err
	}
	restore, err := c.readOnly(ctx)
	if err != nil {
		return c.res, err
	}
	defer func() {
		if rerr := restore(); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	if err := c.catchUp(ctx, w); err != nil {
		return c.res, err
	}
	if err := c.verify(ctx, src, dst, pairs); err != nil {
		return c.res, err
	}
	c.checkQuiet(ctx)
	return c.res, nil
}

// follower finds the follower at work on dst, or starts one in this
// process; the function returned stops the one started here.
func (c *cutover) follower(ctx context.Context, w *Watcher, src, dst *target.Target, fo Options) (func(), error) {
	s, err := w.Saved(ctx)
	if err != nil {
		return nil, err
	}
	if s.Alive(time.Now()) {
		// Its lag is measured at the next step: the one it saved is its
		// last batch's, which an idle source leaves growing old.
		c.step("follower", "a follower is at work on the target, at %s", s.Position)
		return func() {}, nil
	}
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	fo.From = Position{}
	go func() {
		_, err := Run(fctx, src, dst, fo)
		done <- err
	}()
	stop := func() {
		cancel()
		<-done
	}
	deadline := time.Now().Add(time.Minute)
	for !w.Alive(ctx) {
		select {
		case err := <-done:
			cancel()
			return nil, fmt.Errorf("start a follower for the cutover: %w", err)
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, errors.New("the follower this cutover started did not begin within a minute")
		}
	}
	s, _ = w.Saved(ctx)
	c.step("follower", "no follower was at work on the target: one runs in this process, from %s", s.Position)
	c.res.Notes = append(c.res.Notes, "the follower this cutover started stops with it: run shakedown follow to keep the target current")
	return stop, nil
}

// waitLag waits for the follower's lag to fall to MaxLag.
func (c *cutover) waitLag(ctx context.Context, w *Watcher) error {
	deadline := time.Now().Add(c.opts.LagWait)
	for {
		s, err := w.Saved(ctx)
		if err != nil {
			return err
		}
		if !s.Alive(time.Now()) {
			return fmt.Errorf("the follower stopped (state %s) before the switch; nothing was changed on the source", s.State)
		}
		lag, err := c.lag(ctx, s)
		if err != nil {
			return err
		}
		if lag <= c.opts.MaxLag.Seconds() {
			c.step("lag", "follower lag %.1f s, within --max-lag %s", lag, c.opts.MaxLag)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the follower is still behind by more than --max-lag %s after %s (at %s); nothing was changed on the source", c.opts.MaxLag, c.opts.LagWait, s.Position)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// lag is how far behind the source the follower is: 0 when it has applied
// the source's position now, else the age of the last change it applied.
func (c *cutover) lag(ctx context.Context, s *Saved) (float64, error) {
	qctx, cancel := context.WithTimeout(ctx, queryBound)
	defer cancel()
	p, err := SourcePosition(qctx, c.src)
	if err != nil {
		return 0, err
	}
	if s.Position.Reached(p) {
		return 0, nil
	}
	if s.EventTime.UnixMilli() <= 0 {
		return math.Inf(1), nil // nothing applied yet: unknown
	}
	return time.Since(s.EventTime).Seconds(), nil
}

// readOnly makes the source read-only and returns what restores it (on a
// context of its own, so that a Ctrl-C still restores it).
func (c *cutover) readOnly(ctx context.Context) (func() error, error) {
	qctx, cancel := context.WithTimeout(ctx, queryBound)
	defer cancel()
	var before string
	if err := c.src.QueryRowContext(qctx, "SELECT @@GLOBAL.read_only").Scan(&before); err != nil {
		return nil, fmt.Errorf("source: read read_only: %w", err)
	}
	c.res.ReadOnlyBefore = onOff(before)
	if _, err := c.src.ExecContext(qctx, "SET GLOBAL read_only = ON"); err != nil {
		return nil, fmt.Errorf("source: SET GLOBAL read_only = ON (needs SUPER or READ_ONLY ADMIN): %w", err)
	}
	c.res.WriteUnavailable = 0
	c.step("read_only", "SET GLOBAL read_only = ON on the source (it was %s): the application cannot write from now", c.res.ReadOnlyBefore)
	if c.opts.KillWriters {
		c.killWriters(qctx)
	}
	keep := c.opts.KeepReadOnly || !c.opts.Rehearse
	return func() error {
		if keep {
			c.res.Notes = append(c.res.Notes, "the source stays read_only = ON: point the application at the target (cutover never changes DNS or a load balancer)")
			return nil
		}
		rctx, cancel := context.WithTimeout(context.Background(), queryBound)
		defer cancel()
		if _, err := c.src.ExecContext(rctx, "SET GLOBAL read_only = "+c.res.ReadOnlyBefore); err != nil {
			return fmt.Errorf("source: restore read_only = %s: %w; set it by hand", c.res.ReadOnlyBefore, err)
		}
		c.res.ReadOnlyRestored = true
		c.step("restore", "SET GLOBAL read_only = %s on the source: writable again", c.res.ReadOnlyBefore)
		return nil
	}, nil
}

// killWriters ends the sessions with an open transaction that has
// written: their commit would fail under read_only anyway.
func (c *cutover) killWriters(ctx context.Context) {
	rows, err := c.src.QueryContext(ctx, "SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX WHERE trx_rows_modified > 0 AND trx_mysql_thread_id <> CONNECTION_ID()")
	if err != nil {
		c.res.Notes = append(c.res.Notes, fmt.Sprintf("--kill-writers: could not list the open write transactions: %v", err))
		return
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if rows.Scan(&id) == nil {
			ids = append(ids, id)
		}
	}
	rows.Close()
	for _, id := range ids {
		if _, err := c.src.ExecContext(ctx, fmt.Sprintf("KILL %d", id)); err == nil {
			c.res.KilledWriters++
		}
	}
	c.step("kill_writers", "ended %d session(s) with an open transaction that had written", c.res.KilledWriters)
}

// catchUp waits for the follower to apply the source's final position.
func (c *cutover) catchUp(ctx context.Context, w *Watcher) error {
	qctx, cancel := context.WithTimeout(ctx, queryBound)
	p, err := SourcePosition(qctx, c.src)
	cancel()
	if err != nil {
		return err
	}
	c.res.FinalPosition = p
	c.step("final_position", "the source's final position: %s", p)
	if _, err := w.Reach(ctx, p, c.opts.LagWait); err != nil {
		return err
	}
	c.step("caught_up", "the follower applied it")
	return nil
}

// checkQuiet reads the source's position once more, after the verify:
// past the final position, something wrote on the source under read_only
// (an account with SUPER or READ ONLY ADMIN, an event, a replication
// thread), and the target has those writes only while a follower runs.
func (c *cutover) checkQuiet(ctx context.Context) {
	qctx, cancel := context.WithTimeout(ctx, queryBound)
	p, err := SourcePosition(qctx, c.src)
	cancel()
	if err != nil {
		c.res.Notes = append(c.res.Notes, fmt.Sprintf("could not read the source's position after the verify, to see that nothing wrote under read_only: %v", err))
		return
	}
	if p == c.res.FinalPosition {
		return
	}
	c.res.WrittenAfter = &p
	c.step("source_written", "the source's binary log moved on to %s after the final position: something still writes under read_only = ON", p)
	c.res.Notes = append(c.res.Notes, "the source was written after read_only = ON (an account with SUPER or READ ONLY ADMIN, an event, or a replication thread): "+
		"find the writer (SHOW PROCESSLIST, the binary log after the final position) before the switch; the target has those writes only while a follower runs")
}

// verify compares the followed databases.
func (c *cutover) verify(ctx context.Context, src, dst *target.Target, pairs []Pair) error {
	defer func() {
		c.res.WriteUnavailable = time.Since(c.started).Seconds() - c.stepAt("read_only")
	}()
	if c.opts.Verify == VerifyNone {
		c.step("verify", "not verified (--verify none)")
		return nil
	}
	c.res.Equal = true
	for _, p := range pairs {
		s, d := *src, *dst
		s.DB, d.DB = p.Source, p.Target
		ss, ds, err := verify.Sides(ctx, &s, &d, 6)
		if err != nil {
			return err
		}
		rep, err := verify.Run(ctx, ss, ds, verify.Options{Threads: 4})
		ss.DB.Close()
		ds.DB.Close()
		if err != nil {
			return fmt.Errorf("verify %s: %w", p.Target, err)
		}
		c.res.Equal = c.res.Equal && rep.Equal
		c.res.DifferingRows += rep.DifferingRows
		for _, t := range rep.Tables {
			c.res.Rows += t.RowsSource
		}
	}
	c.res.Verified = true
	verdict := "equal"
	if !c.res.Equal {
		verdict = fmt.Sprintf("NOT equal: %d rows differ", c.res.DifferingRows)
	}
	c.step("verify", "verify of %s: %s (%d rows compared)", strings.Join(targetNames(pairs), ", "), verdict, c.res.Rows)
	return nil
}

func (c *cutover) stepAt(name string) float64 {
	for _, s := range c.res.Steps {
		if s.Name == name {
			return s.At
		}
	}
	return 0
}

func onOff(v string) string {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "1", "ON":
		return "ON"
	}
	return "OFF"
}

// Text is the timeline as the command prints it.
func (r *CutoverResult) Text() string {
	var b strings.Builder
	kind := "cutover rehearsal"
	if !r.Rehearsal {
		kind = "cutover"
	}
	fmt.Fprintf(&b, "%s %s -> %s\n", kind, r.Source, r.Target)
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "  %8.3f s  %s\n", s.At, s.Detail)
	}
	fmt.Fprintf(&b, "write-unavailable window: %.3f s (from read_only on to the verify's end)\n", r.WriteUnavailable)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	b.WriteString("cutover changes no DNS, proxy or load balancer: moving the application is yours to do\n")
	return b.String()
}
