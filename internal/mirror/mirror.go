// Package mirror is a MySQL-protocol proxy that serves every client from
// the control and sends the clients' reads to candidates beside it,
// comparing the results and the latency per query class.
//
// The design, in the order a statement meets it:
//
//   - Each client connection is a session (session.go). The mirror greets
//     the client itself (client.go), offering the control's capability
//     flags less those it cannot relay faithfully yet (compression, LOCAL
//     INFILE, MySQL 8's query attributes and optional metadata), and TLS
//     of its own with Options.TLS (tls.go), and checks its
//     mysql_native_password against --accounts or the control URL's own
//     account. It then opens the session's control connection
//     with the client's own flags, collation and default database
//     (wire.Options.As), so that both hops agree on every packet's format.
//   - Every command packet goes to the control unchanged and the control's
//     reply comes back unchanged (wire.Conn.Relay), parsed only to find
//     its end and, for a statement that will be compared, decoded on the
//     way into the comparison's reader (replay.Hasher).
//   - A read (SELECT, SHOW, ...; not one inside a transaction that has
//     written on the control) is put, with the control's result, on a
//     bounded queue of each candidate's twin session (twin.go); SET, USE
//     and COM_INIT_DB go to the twins too, and are kept as the session's
//     history. Prepared reads are prepared on the twins too, their ids
//     mapped from the control's, and their executions mirrored with the
//     parameters the client sent (stmt.go); COM_RESET_CONNECTION resets
//     the twins. When a queue is full the statement is dropped and counted
//     per class: the client's path never waits on a candidate. A dropped
//     session statement makes the twin start again from the history.
//   - The twin runs the statement on the candidate, compares the results
//     with replay's comparison (replay.Compare) and records both
//     latencies per class (tally.go), in pairs; the latency ratio is
//     replay's verdict on the pairs (replay.PairedLatencyVerdict): the
//     median of the pairs' ratios, in its sign-test interval.
//   - A candidate that fails is marked down with a growing back-off
//     (twin.go): its twins drop their statements as "candidate down"
//     until a reconnect succeeds.
//   - The figures are cut into snapshot periods (period.go): every
//     Options.Snapshot, at Rotate and at the end, each period's own
//     counters and latency, so that a canary of weeks leaves a history.
//   - With Options.HTTP, a live page (page.go, in render's shell) and
//     /metrics for Prometheus (live.go), both read from Summary when
//     asked; neither shows a password.
//   - With Options.Writes (--writes), the writes and their transactions
//     go to the twins too, in order, compared as reads are (writes.go).
//
// Left for later slices: compression to clients, COM_CHANGE_USER (refused),
// executions with a cursor or long data and prepared SET statements
// (counted "not mirrored").
package mirror

import (
	"context"
	"crypto/tls"
	"fmt"
	"hash/maphash"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/fingerprint"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/wire"
)

// Candidate is one target the reads are mirrored to.
type Candidate struct {
	Name   string
	Target *target.Target
}

// Options are a mirror's settings.
type Options struct {
	// Listen is the address clients connect to (host:port); a port of 0
	// picks one. Only a loopback address unless TLS or InsecureListen.
	Listen         string
	InsecureListen bool
	Control        *target.Target
	Candidates     []Candidate
	// Accounts are the users clients may log in as, with their
	// passwords; nil means the control URL's own user and password.
	Accounts map[string]string
	// KeepLiterals keeps the literals of the statements in the samples of
	// differences; by default they show as ?.
	KeepLiterals bool
	// Queue bounds each twin session's queue (default 64 statements).
	Queue int
	// Timeout bounds each read and write of a candidate's statement
	// (default 10s); connects are bounded by the candidate's own connect
	// timeout.
	Timeout time.Duration
	// HTTP is the address of the live page and /metrics (host:port; ""
	// serves neither). Loopback only unless InsecureListen: the page
	// shows results' rows.
	HTTP string
	// Snapshot is the length of a snapshot period (0: one period, ended
	// by Rotate or at the end).
	Snapshot time.Duration
	// Writes mirrors the writes too, and the transactions around them
	// (writes.go): the candidates change, and must be throwaway copies
	// that follow does not feed. Listen refuses a candidate that is the
	// control's own server.
	Writes bool
	// TLS, when set, is offered to clients (LoadTLS reads it): optional
	// on a loopback Listen, required of every client beyond it, even
	// with InsecureListen. The sessions to the control and the
	// candidates are as their URLs say, whatever this is.
	TLS *tls.Config
}

// ErrHTTPNotLoopback refuses to show the page beyond the host: it holds
// results' rows.
var ErrHTTPNotLoopback error = &usage.Error{Msg: "mirror: --http names an address beyond this host: the page shows rows of the results; serve it on 127.0.0.1, or pass --insecure-listen"}

// ErrNotLoopback refuses to listen beyond the host without TLS.
var ErrNotLoopback error = &usage.Error{Msg: "mirror: --listen names an address beyond this host: clients would send their passwords' proofs and every result in clear; listen on 127.0.0.1, give the mirror a certificate with --tls-cert FILE --tls-key FILE (clients must then use TLS), or pass --insecure-listen"}

// Mirror is a listening mirror. Serve runs it; Summary reads its figures
// at any time, from any goroutine.
type Mirror struct {
	opts  Options
	ln    net.Listener
	ctl   *mysql.Config
	greet greeting
	seed  maphash.Seed
	cands []*candidate
	tally *tally
	fp    chan *fingerprint.Analyzer
	ids   atomic.Uint32
	start time.Time
	// requireTLS refuses clients without TLS (requiresTLS).
	requireTLS bool

	periods periods
	http    *liveServer

	mu       sync.Mutex
	sessions map[*session]struct{}
}

// Listen checks the options, connects to the control once (to learn its
// version and flags, and to fail early on a wrong URL), and listens.
func Listen(ctx context.Context, opts Options) (*Mirror, error) {
	if opts.Control == nil {
		return nil, usage.Errorf("mirror: --control URL is required")
	}
	if len(opts.Candidates) == 0 {
		return nil, usage.Errorf("mirror: --candidate NAME=URL is required")
	}
	if opts.Queue <= 0 {
		opts.Queue = 64
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	host, _, err := net.SplitHostPort(opts.Listen)
	if err != nil {
		return nil, usage.Errorf("mirror: --listen %s: want host:port (127.0.0.1:3307)", opts.Listen)
	}
	if !opts.InsecureListen && opts.TLS == nil && !loopback(host) {
		return nil, ErrNotLoopback
	}
	if opts.HTTP != "" {
		h, _, err := net.SplitHostPort(opts.HTTP)
		if err != nil {
			return nil, usage.Errorf("mirror: --http %s: want host:port (127.0.0.1:9104)", opts.HTTP)
		}
		if !opts.InsecureListen && !loopback(h) {
			return nil, ErrHTTPNotLoopback
		}
	}
	m := &Mirror{opts: opts, requireTLS: requiresTLS(host, opts), seed: maphash.MakeSeed(), sessions: map[*session]struct{}{}, start: time.Now()}
	m.periods.start = m.start
	m.ctl = opts.Control.Config(opts.Control.Endpoints()[0], opts.Control.DB)
	if m.opts.Accounts == nil {
		m.opts.Accounts = map[string]string{m.ctl.User: m.ctl.Passwd}
	}
	c, err := client.DialWire(ctx, m.ctl, wire.Options{})
	if err != nil {
		return nil, fmt.Errorf("connect to the control: %w", err)
	}
	caps, _ := c.ServerCapabilities()
	m.greet = greeting{version: c.ServerVersion(), caps: caps, collation: 45, status: c.Status() &^ wire.StatusInTrans}
	var ctlID []string
	if opts.Writes {
		ctlID, err = identity(c)
	}
	c.Close()
	if err != nil {
		return nil, fmt.Errorf("mirror: --writes: read the control's identity: %w", err)
	}
	names := make([]string, len(opts.Candidates))
	for i, cd := range opts.Candidates {
		names[i] = cd.Name
		cfg := cd.Target.Config(cd.Target.Endpoints()[0], cd.Target.DB)
		cfg.ReadTimeout, cfg.WriteTimeout = opts.Timeout, opts.Timeout
		if opts.Writes {
			if err := checkNotControl(ctx, ctlID, cd.Name, cfg); err != nil {
				return nil, err
			}
		}
		m.cands = append(m.cands, &candidate{name: cd.Name, cfg: cfg, i: i})
	}
	m.tally = newTally(names, opts.KeepLiterals)
	m.fp = make(chan *fingerprint.Analyzer, runtime.GOMAXPROCS(0))
	for range cap(m.fp) {
		m.fp <- fingerprint.NewAnalyzer()
	}
	var lc net.ListenConfig
	if m.ln, err = lc.Listen(ctx, "tcp", opts.Listen); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", opts.Listen, err)
	}
	if opts.HTTP != "" {
		if m.http, err = m.serveHTTP(ctx, opts.HTTP); err != nil {
			m.ln.Close()
			return nil, err
		}
	}
	return m, nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Addr is the address the mirror listens on.
func (m *Mirror) Addr() string { return m.ln.Addr().String() }

// drainGrace bounds how long twins go on comparing after the clients are
// cut off.
const drainGrace = 2 * time.Second

// Serve accepts clients until ctx ends, then closes every session and
// waits for them and their twins. The listener, and the live page's
// (--http), are closed when it returns.
func (m *Mirror) Serve(ctx context.Context) error {
	var wg sync.WaitGroup
	// The twins outlive ctx by drainGrace at most, to compare what their
	// queues still hold when the clients are cut off.
	twinCtx, cancelTwins := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelTwins()
	stop := context.AfterFunc(ctx, func() {
		time.AfterFunc(drainGrace, cancelTwins)
		m.ln.Close()
		m.mu.Lock()
		for s := range m.sessions {
			s.c.nc.Close()
		}
		m.mu.Unlock()
	})
	defer stop()
	var err error
	for {
		nc, aerr := m.ln.Accept()
		if aerr != nil {
			if ctx.Err() == nil {
				err = fmt.Errorf("accept clients: %w", aerr)
				m.ln.Close()
			}
			break
		}
		s := &session{m: m, c: newClientConn(nc)}
		m.mu.Lock()
		if ctx.Err() != nil {
			m.mu.Unlock()
			nc.Close()
			break
		}
		m.sessions[s] = struct{}{}
		m.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serve(ctx, twinCtx)
			m.mu.Lock()
			delete(m.sessions, s)
			m.mu.Unlock()
		}()
	}
	wg.Wait()
	if m.http != nil {
		m.http.close()
	}
	return err
}

// analyze fingerprints sql with one of the mirror's analyzers (each is
// for one goroutine at a time).
func (m *Mirror) analyze(sql string) *fingerprint.Info {
	a := <-m.fp
	info := a.Info(sql)
	m.fp <- a
	return info
}

// Summary is the mirror's figures so far.
func (m *Mirror) Summary() *Summary {
	return m.tally.summary(m.cands, time.Since(m.start))
}
