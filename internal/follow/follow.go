package follow

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/shakedown/shakedown/internal/check"
	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
)

// Session settings on the target: times in UTC as the log's reader gives
// them, a 0 in an AUTO_INCREMENT column kept, and no foreign key checks
// (the rows come from a server that checked them, and the workers' order
// across tables is not the source's).
var targetParams = map[string]string{
	"time_zone":          "'+00:00'",
	"sql_mode":           "'NO_AUTO_VALUE_ON_ZERO'",
	"foreign_key_checks": "0",
}

// readTimeout bounds a wait for the source's next packet; the source sends
// a heartbeat every heartbeat when it has nothing else.
const (
	heartbeat   = 2 * time.Second
	readTimeout = 30 * time.Second
	queryBound  = 30 * time.Second
)

// follower is one run of Run.
type follower struct {
	opts    Options
	srcT    *target.Target
	src     *sql.DB
	srcFlav flavour.Name
	dst     *schema.Side
	coll    flavour.Collations
	pairs   []Pair
	dbmap   map[string]string // source db -> target db
	tables  map[string]*table // by source db.table
	saved   *Saved
	stop    Position // with UntilCaughtUp: where the source was
	holdAt  Position // a hold's position: stop applying there
	// inflight receives the outcome of the batch being applied in the
	// background (nil: none).
	inflight chan applied
	started  time.Time

	failedAt Position // the saved position at the last stream failure (loop's alone)

	mu         sync.Mutex // guards the figures below, read by the ticker
	stats      Stats
	lastTick   time.Time
	lastEvents int64
	lastRows   int64
	lags       []float64
	sourceAt   Position
}

// Run follows the source's binary log into the target from opts.From or
// the position saved there, until ctx ends, opts.Duration has passed, or
// (with opts.UntilCaughtUp) the source's position at the start is
// applied. The Summary is non-nil whenever following began. An ended ctx
// (a Ctrl-C) is a normal stop, not an error: the state saved is
// StateStopped (or StateCaughtUp), at the last position applied whole.
func Run(ctx context.Context, src, dst *target.Target, opts Options) (*Summary, error) {
	opts.defaults()
	if !opts.AllowWrite {
		return nil, errors.New("follow: the target is written; add --allow-write")
	}
	f := &follower{opts: opts, srcT: src, tables: map[string]*table{}, dbmap: map[string]string{}, started: time.Now()}
	f.pairs = pairsOf(src, dst, opts.Databases)
	for _, p := range f.pairs {
		if p.Source == "" || p.Target == "" {
			return nil, fmt.Errorf("%w: name the database to follow in SOURCE's URL, or give --databases", ErrPrerequisites)
		}
		f.dbmap[p.Source] = p.Target
	}
	if err := f.connect(ctx, src, dst); err != nil {
		return nil, err
	}
	defer f.src.Close()
	defer f.dst.DB.Close()
	if err := f.position(ctx); err != nil {
		return nil, err
	}
	sum := &Summary{Source: src.Redacted(), Target: dst.Redacted(), Databases: f.pairs, From: f.saved.Position, Notes: []string{}}
	err := f.loop(ctx)
	f.mu.Lock()
	st := f.stats
	lags := f.lags
	f.mu.Unlock()
	sum.To, sum.Seconds = f.saved.Position, time.Since(f.started).Seconds()
	sum.Events, sum.Txns, sum.Rows, sum.Skipped, sum.DDL, sum.Reconnects = st.Events, st.Txns, st.Rows, st.Skipped, st.DDL, st.Reconnects
	sum.lagQuantiles(lags)
	sum.State = f.saved.State
	return sum, err
}

// connect opens both sides and checks what following needs before
// anything is written.
func (f *follower) connect(ctx context.Context, src, dst *target.Target) error {
	pool, _, srv, err := src.ConnectSession(ctx, "", 2, map[string]string{"time_zone": "'+00:00'"})
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	f.src, f.srcFlav = pool, srv.Flavour
	qctx, cancel := context.WithTimeout(ctx, queryBound)
	defer cancel()
	var dbs []string
	for _, p := range f.pairs {
		dbs = append(dbs, p.Source)
	}
	missing, err := check.FollowPrerequisites(qctx, f.src, f.srcFlav, dbs)
	if err != nil {
		pool.Close()
		return err
	}
	if len(missing) > 0 {
		pool.Close()
		return prerequisiteError("source", missing)
	}
	tpool, tt, tsrv, err := dst.ConnectSession(ctx, "", f.opts.Workers+2, targetParams)
	if err != nil {
		pool.Close()
		return fmt.Errorf("target: %w", err)
	}
	f.dst = &schema.Side{Role: "target", Target: tt, DB: tpool, Server: tsrv}
	if err := f.checkTarget(qctx); err != nil {
		pool.Close()
		tpool.Close()
		return err
	}
	return nil
}

func prerequisiteError(side string, missing []check.Prerequisite) error {
	var b strings.Builder
	for _, m := range missing {
		fmt.Fprintf(&b, "\n  %s: %s\n    fix: %s", m.Setting, m.Problem, m.Fix)
	}
	return fmt.Errorf("%w (the %s; nothing was written):%s", ErrPrerequisites, side, b.String())
}

// checkTarget refuses followed tables that have triggers on the target, and
// reads the collations DDL is mapped to.
func (f *follower) checkTarget(ctx context.Context) error {
	var err error
	if f.coll, err = flavour.ReadCollations(ctx, f.dst.DB); err != nil {
		return fmt.Errorf("target: %w", err)
	}
	if !f.dst.Server.Flavour.Triggers() {
		return nil
	}
	var missing []check.Prerequisite
	for _, p := range f.pairs {
		rows, err := f.dst.DB.QueryContext(ctx, "SELECT EVENT_OBJECT_TABLE, TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ? ORDER BY 1, 2", p.Target)
		if err != nil {
			return fmt.Errorf("target: read triggers: %w", err)
		}
		for rows.Next() {
			var tbl, name string
			if err := rows.Scan(&tbl, &name); err != nil {
				rows.Close()
				return fmt.Errorf("target: read triggers: %w", err)
			}
			missing = append(missing, check.Prerequisite{
				Setting: "trigger " + p.Target + "." + name,
				Problem: fmt.Sprintf("table %s.%s has trigger %s on the target: it would fire on every applied row and repeat what the source's triggers already wrote into the binary log", p.Target, tbl, name),
				Fix:     fmt.Sprintf("keep its definition (SHOW CREATE TRIGGER %[1]s.%[2]s on the target), DROP TRIGGER %[1]s.%[2]s there while it is followed, and create it again at the switch", escape.Ident(p.Target), escape.Ident(name)),
			})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("target: read triggers: %w", err)
		}
	}
	if len(missing) > 0 {
		return prerequisiteError("target", missing)
	}
	return nil
}

// position settles where following starts: opts.From, or the saved
// position, on a source that is still the server it was read from.
func (f *follower) position(ctx context.Context) error {
	qctx, cancel := context.WithTimeout(ctx, queryBound)
	defer cancel()
	var serverID uint32
	if err := f.src.QueryRowContext(qctx, "SELECT @@server_id").Scan(&serverID); err != nil {
		return fmt.Errorf("source: read server_id: %w", err)
	}
	name := nameOf(f.pairs)
	if !f.opts.From.IsZero() {
		f.saved = &Saved{Name: name, Source: f.srcT.Endpoints()[0].String(), ServerID: serverID, Databases: f.pairs, Position: f.opts.From, State: StateFollowing}
	} else {
		s, err := Load(qctx, f.dst.DB, name)
		if err != nil {
			return err
		}
		if s.ServerID != serverID {
			return fmt.Errorf("%w: the position saved for %s was read from the server with server_id %d; this source has server_id %d, so its binary log is another history: copy again", ErrPositionGone, name, s.ServerID, serverID)
		}
		if err := f.sameDomain(qctx, s); err != nil {
			return err
		}
		f.saved = s
		f.saved.State = StateFollowing
	}
	if err := f.positionExists(qctx); err != nil {
		return err
	}
	// Only now, when following can start, is the target written: a
	// refused start leaves no schema behind.
	if err := ensureSchema(qctx, f.dst.DB); err != nil {
		return err
	}
	if f.opts.UntilCaughtUp {
		p, err := SourcePosition(qctx, f.src)
		if err != nil {
			return err
		}
		f.stop = p
	}
	f.stats.Position = f.saved.Position
	return save(qctx, f.dst.DB, f.saved)
}

// sameDomain refuses a MariaDB source that now writes its transactions
// under a GTID domain the saved position does not know: its binary log
// is another history from there.
func (f *follower) sameDomain(ctx context.Context, s *Saved) error {
	if !f.srcFlav.IsMariaDB() || s.Position.GTID == "" {
		return nil
	}
	var domain string
	if err := f.src.QueryRowContext(ctx, "SELECT @@GLOBAL.gtid_domain_id").Scan(&domain); err != nil {
		return fmt.Errorf("source: read gtid_domain_id: %w", err)
	}
	var known []string
	for _, g := range strings.Split(s.Position.GTID, ",") {
		d, _, _ := strings.Cut(strings.TrimSpace(g), "-")
		if d == domain {
			return nil
		}
		known = append(known, d)
	}
	return fmt.Errorf("%w: the source writes its transactions under GTID domain %s now; the position saved for %s knows domain %s only, so the source's binary log is another history from there: copy again",
		ErrPositionGone, domain, s.Name, strings.Join(known, ", "))
}

// positionExists says whether the source still has the saved position's
// binary log file.
func (f *follower) positionExists(ctx context.Context) error {
	rows, err := f.src.QueryContext(ctx, "SHOW BINARY LOGS")
	if err != nil {
		return fmt.Errorf("source: SHOW BINARY LOGS: %w", err)
	}
	defer rows.Close()
	var files []string
	for rows.Next() {
		file, err := target.FirstColumn(rows)
		if err != nil {
			return fmt.Errorf("source: SHOW BINARY LOGS: %w", err)
		}
		files = append(files, file)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("source: SHOW BINARY LOGS: %w", err)
	}
	for _, fl := range files {
		if fl == f.saved.Position.File {
			return nil
		}
	}
	oldest := "none"
	if len(files) > 0 {
		oldest = files[0]
	}
	return fmt.Errorf("%w: the source no longer has binary log %s (its oldest is %s): the changes since %s are gone; copy again", ErrPositionGone, f.saved.Position.File, oldest, f.saved.Position)
}

// loop runs streams until one ends the follow, starting a new one from the
// saved position after each failure, with back-off.
func (f *follower) loop(ctx context.Context) error {
	tick := make(chan struct{})
	defer close(tick)
	go f.ticker(ctx, tick)
	var failing time.Time
	backoff := 500 * time.Millisecond
	for {
		done, err := f.stream(ctx)
		if ctx.Err() != nil && interrupted(err) {
			// Stopped (a Ctrl-C, the caller's deadline): what that broke
			// off is no failure; the next run applies it again from the
			// saved position.
			return f.finish(nil)
		}
		if done || ctx.Err() != nil {
			return f.finish(err)
		}
		var stopErr *stopError
		if errors.As(err, &stopErr) {
			return f.finish(stopErr.err)
		}
		// Time spent failing counts from the first failure since a
		// position was last saved, not since the first failure ever.
		if f.progressed() {
			failing, backoff = time.Time{}, 500*time.Millisecond
		}
		if failing.IsZero() {
			failing = time.Now()
		}
		if time.Since(failing) > f.opts.RetryFor {
			return f.finish(fmt.Errorf("gave up after %s of failures: %w", f.opts.RetryFor, err))
		}
		f.logf("follow: %v; starting again from %s in %s", err, f.saved.Position, backoff)
		select {
		case <-ctx.Done():
			return f.finish(nil)
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
		f.mu.Lock()
		f.stats.Reconnects++
		f.mu.Unlock()
	}
}

// interrupted says err is what ending the follow's context does to a
// stream: nothing, a context error, or a failure that would have been
// retried.
func interrupted(err error) bool {
	var stopErr *stopError
	return err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &stopErr)
}

// stopError ends the follow: retrying cannot help.
type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }
func (e *stopError) Unwrap() error { return e.err }

// finish saves the final state and returns err.
func (f *follower) finish(err error) error {
	switch {
	case errors.Is(err, ErrStoppedAtDDL):
		f.saved.State = StateDDL
	case err != nil:
		f.saved.State = StateFailed
	case f.opts.UntilCaughtUp && f.saved.Position.Reached(f.stop):
		f.saved.State = StateCaughtUp
	default:
		f.saved.State = StateStopped
	}
	ctx, cancel := context.WithTimeout(context.Background(), queryBound)
	defer cancel()
	f.fillSaved()
	if serr := save(ctx, f.dst.DB, f.saved); serr != nil && err == nil {
		err = serr
	}
	return err
}

// progressed says a position was saved since the last call: the stream
// that failed had worked. (Not f.stats.Position: flush moves it with the
// saved one.)
func (f *follower) progressed() bool {
	moved := f.saved.Position != f.failedAt
	f.failedAt = f.saved.Position
	return moved
}

func (f *follower) logf(format string, args ...any) {
	if f.opts.Log != nil {
		fmt.Fprintf(f.opts.Log, format+"\n", args...)
	}
}

// serverID is the id the follower registers with the source.
func (f *follower) serverID() uint32 {
	if f.opts.ServerID != 0 {
		return f.opts.ServerID
	}
	h := fnv.New32a()
	h.Write([]byte(nameOf(f.pairs)))
	return 1<<30 | h.Sum32()&(1<<30-1)
}

// syncer is a binary log client on the source's first endpoint.
func (f *follower) syncer() (*replication.BinlogSyncer, error) {
	ep := f.srcT.Endpoints()[0]
	cfg := f.srcT.Config(ep, "")
	host, portText, ok := strings.Cut(cfg.Addr, ":")
	if cfg.Net != "tcp" || !ok {
		return nil, &stopError{fmt.Errorf("source: following needs a TCP address (host:port), not %s", ep)}
	}
	port, _ := strconv.Atoi(portText)
	flavor := mysql.MySQLFlavor
	if f.srcFlav.IsMariaDB() {
		flavor = mysql.MariaDBFlavor
	}
	return replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID:                f.serverID(),
		Flavor:                  flavor,
		Host:                    host,
		Port:                    uint16(port),
		User:                    cfg.User,
		Password:                cfg.Passwd,
		TLSConfig:               cfg.TLS,
		UseDecimal:              true,
		TimestampStringLocation: time.UTC,
		HeartbeatPeriod:         heartbeat,
		ReadTimeout:             readTimeout,
		DisableRetrySync:        true,
		FillZeroLogPos:          true,
		Logger:                  slog.New(slog.NewTextHandler(io.Discard, nil)),
	}), nil
}

// closeSyncer closes s without waiting more than a few seconds on a
// source that does not answer.
func closeSyncer(s *replication.BinlogSyncer) {
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

// start opens a stream at the saved position: by GTID where one was saved.
func (f *follower) start(s *replication.BinlogSyncer) (*replication.BinlogStreamer, error) {
	p := f.saved.Position
	if p.GTID != "" {
		flavor := mysql.MySQLFlavor
		if f.srcFlav.IsMariaDB() {
			flavor = mysql.MariaDBFlavor
		}
		set, err := mysql.ParseGTIDSet(flavor, p.GTID)
		if err != nil {
			return nil, &stopError{fmt.Errorf("the saved GTID set %q: %w", p.GTID, err)}
		}
		return s.StartSyncGTID(set)
	}
	return s.StartSync(mysql.Position{Name: p.File, Pos: p.Pos})
}

// gone says err is the source refusing a position it no longer has.
func gone(err error) bool {
	var me *mysql.MyError
	return errors.As(err, &me) && (me.Code == target.ERMasterFatalReadingBinlog || me.Code == target.ERMasterHasPurgedGTIDs)
}
