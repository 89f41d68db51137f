package mirror

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/fingerprint"
	"github.com/shakedown/shakedown/internal/replay"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire"
)

// Reasons a statement is not mirrored, as counted per class.
const (
	notRead      = "not a read"
	inWrittenTx  = "in a transaction that wrote"
	otherCommand = "other command"
)

// maxHistory bounds the session statements kept for a twin that starts
// again; past it the oldest are forgotten.
const maxHistory = 256

// session is one client's connection: the client's side, the control's
// and a twin per candidate. Its serve goroutine owns everything but
// history, which twins read when they start again.
type session struct {
	m     *Mirror
	c     *clientConn
	ctl   *wire.Conn
	twins []*twin
	h     replay.Hasher
	// txWrote: the open transaction has written on the control.
	txWrote bool
	// lastOK: the last reply relayed was not an error.
	lastOK bool
	// stmts are the client's prepared statements by the control's ids;
	// lastStmt the id prepared last (MariaDB's 0xffffffff).
	stmts    map[uint32]*pstmt
	lastStmt uint32

	mu      sync.Mutex
	db      string
	history []string
}

// serve runs the session until the client leaves, breaks the protocol,
// or ctx ends; its twins run under twinCtx, which ends a little later, so
// that they compare what they hold. A malformed packet ends this session
// only.
func (s *session) serve(ctx, twinCtx context.Context) {
	defer s.c.nc.Close()
	id := s.m.ids.Add(1)
	g := s.m.greet
	g.connID = id
	h, err := s.c.greet(g, s.m.opts.Accounts, s.m.opts.TLS, s.m.requireTLS)
	if err != nil {
		if errors.Is(err, errPlainRefused) {
			s.m.tally.refusedPlain.Add(1)
		}
		return
	}
	cfg := s.m.ctl.Clone()
	cfg.DBName = h.db
	ctl, err := client.DialWire(ctx, cfg, wire.Options{As: &wire.Handshake{Caps: h.caps, Collation: h.collation}})
	if err != nil {
		// The control's own refusal (too many connections, say) goes to
		// the client as it is; a control that cannot be reached is named.
		s.c.writeServerError(fmt.Errorf("connect to the control: %w", err))
		return
	}
	s.ctl = ctl
	s.db = h.db
	if err := s.c.writeOK(h.caps, ctl.Status()); err != nil {
		ctl.Close()
		return
	}
	s.m.tally.sessions.Add(1)
	var wg sync.WaitGroup
	for _, cd := range s.m.cands {
		tw := &twin{s: s, cand: cd, q: make(chan item, s.m.opts.Queue)}
		s.twins = append(s.twins, tw)
		wg.Add(1)
		go func() {
			defer wg.Done()
			tw.run(twinCtx)
		}()
	}
	defer func() {
		// The control connection and the client's go first: a session
		// that ends gives them back at once, however long a stalled
		// candidate keeps its twins on what they hold.
		ctl.Close()
		s.c.nc.Close()
		for _, tw := range s.twins {
			close(tw.q)
		}
		wg.Wait()
	}()
	for {
		s.c.seq = 0
		p, err := s.c.readPacket()
		if err != nil {
			return
		}
		if !s.command(p) {
			return
		}
	}
}

// command relays one command packet and mirrors it as its kind says. It
// reports whether the session goes on.
func (s *session) command(p []byte) bool {
	t := s.m.tally
	t.through.Add(1)
	switch p[0] {
	case wire.ComQuit:
		return false
	case wire.ComQuery:
		return s.query(string(p[1:]), p)
	case wire.ComInitDB:
		ok := s.relay(p, nil)
		if ok && s.lastOK {
			s.setDB(string(p[1:]))
			s.toTwins(item{kind: itemInitDB, sql: string(p[1:])})
		}
		return ok
	case wire.ComStmtPrepare:
		return s.prepare(p)
	case wire.ComStmtExecute:
		return s.execute(p)
	case wire.ComStmtClose:
		return s.closeStmt(p)
	case wire.ComStmtReset:
		return s.resetStmt(p)
	case wire.ComStmtSendLongData:
		return s.longData(p)
	case wire.ComResetConnection:
		return s.resetConnection(p)
	case wire.ComChangeUser:
		// Refused: the mirror checks a client's account at connect only,
		// and its sessions on the control and the candidates are its own
		// accounts'; a client that must be another user connects again.
		t.notMirrored(otherCommand)
		s.c.seq = 1
		return s.c.writeError(target.ERNotSupportedYet, "42000", "mirror: COM_CHANGE_USER is not supported through the mirror: connect again as the other user") == nil
	case wire.ComBinlogDump, wire.ComBinlogDumpGTID, wire.ComRegisterSlave:
		// Not relayed: the reply would be an exchange the mirror does not
		// follow.
		t.notMirrored(otherCommand)
		s.c.seq = 1
		return s.c.writeError(target.ERNotSupportedYet, "42000", "mirror: this command is not supported through the mirror yet") == nil
	}
	t.notMirrored(otherCommand)
	return s.relay(p, nil)
}

// query relays a COM_QUERY and mirrors it when it is a read or changes
// session state.
func (s *session) query(sql string, p []byte) bool {
	info := s.m.analyze(sql)
	cl := s.m.tally.class(info, sql)
	isRead := info.ReadOnly && !info.Session
	switch {
	case info.Session:
		ok := s.relay(p, nil)
		if ok && s.lastOK {
			s.remember(info, sql)
			s.toTwins(item{kind: itemSession, sql: sql, info: info, cl: cl})
		}
		cl.through.Add(1)
		return ok
	case !isRead && (!s.m.opts.Writes || adminStatement(info)):
		if s.m.opts.Writes {
			cl.skip(notSent)
		} else {
			cl.skip(notRead)
		}
		ok := s.relay(p, nil)
		s.afterWrite(info)
		return ok
	case s.txWrote && !s.m.opts.Writes:
		cl.skip(inWrittenTx)
		return s.relay(p, nil)
	}
	// A read, or with --writes any statement but the administration's.
	if !s.roomFor(cl) {
		ok := s.relay(p, nil)
		if !isRead {
			s.afterWrite(info)
		}
		return ok
	}
	ok := s.relayCompared(p, item{kind: itemRead, sql: sql, info: info, cl: cl, db: s.getDB()})
	if !isRead {
		s.afterWrite(info)
	}
	return ok
}

// afterWrite follows the transaction after a statement that is not a
// read was relayed: the transaction has written unless the statement
// only opened or ended one.
func (s *session) afterWrite(info *fingerprint.Info) {
	if st := s.ctl.Status(); st&wire.StatusInTrans == 0 {
		s.txWrote = false
	} else if !txControl(info.Verb) {
		s.txWrote = true
	}
}

// roomFor reports whether a twin has room for a read of cl now; when none
// has, the read is counted dropped on each.
func (s *session) roomFor(cl *class) bool {
	for _, tw := range s.twins {
		if len(tw.q) < cap(tw.q) {
			return true
		}
	}
	cl.through.Add(1)
	for _, tw := range s.twins {
		cl.cand[tw.cand.i].dropped.Add(1)
	}
	s.m.tally.dropped.Add(int64(len(s.twins)))
	return false
}

// relayCompared relays p, the command of it (a read or an execution of
// one), decoding the control's result for the comparison on the way, and
// queues it with that result for the twins.
func (s *session) relayCompared(p []byte, it item) bool {
	// Counted before the client has its reply, so that a reader of the
	// figures who has it sees the statement through, if not yet queued.
	it.cl.through.Add(1)
	s.h.Start(s.m.seed, it.db, it.info)
	start := time.Now()
	wr, err := s.ctl.Relay(p, s.c.w, &s.h)
	dur := time.Since(start)
	ok := s.finishRelay(err)
	it.control = s.h.Finish(wr, err, err != nil && s.ctl.Broken(), dur)
	if !ok || s.ctl.Broken() {
		return ok
	}
	if s.ctl.Status()&wire.StatusInTrans == 0 {
		s.txWrote = false
	}
	s.toTwins(it)
	return ok
}

// txControl reports whether a statement of verb only opens or ends a
// transaction (and writes nothing itself).
func txControl(verb string) bool {
	switch verb {
	case "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE SAVEPOINT", "START TRANSACTION":
		return true
	}
	return false
}

// relay relays p with no comparison; it reports whether the session goes
// on, and leaves in lastOK whether the reply was a success.
func (s *session) relay(p []byte, r wire.RowReader) bool {
	_, err := s.ctl.Relay(p, s.c.w, r)
	return s.finishRelay(err)
}

// finishRelay flushes the reply to the client and tells whether the
// session goes on after err, Relay's error. An ERR reply is the control's
// answer, relayed like any other; a broken control connection or client
// ends the session (the client sees the connection close, as it would see
// the control's).
func (s *session) finishRelay(err error) bool {
	s.lastOK = err == nil
	var me *mysql.MySQLError
	if err != nil && !errors.As(err, &me) {
		return false
	}
	if err != nil && s.ctl.Broken() {
		s.c.flush()
		return false
	}
	return s.c.flush() == nil
}

// toTwins queues it on every twin without waiting: a full queue drops it,
// counted. A dropped session statement or reset makes the twin start
// again; a dropped prepare is made good when the statement is next
// executed, a dropped close once the twin has done the items queued
// before it, and a dropped statement reset changes nothing the twin uses
// (it sends no long data and opens no cursor).
func (s *session) toTwins(it item) {
	for _, tw := range s.twins {
		it.seq = tw.queued + 1
		select {
		case tw.q <- it:
			tw.queued++
			if it.kind.compared() {
				s.m.tally.mirrored.Add(1)
				it.cl.cand[tw.cand.i].mirrored.Add(1)
			}
		default:
			switch it.kind {
			case itemRead, itemExec:
				s.m.tally.dropped.Add(1)
				it.cl.cand[tw.cand.i].dropped.Add(1)
			case itemPrepare, itemStmtReset:
			case itemClose:
				if !tw.closes.add(it.stmt, tw.queued) {
					tw.resync.Store(true)
				}
			default:
				tw.resync.Store(true)
			}
		}
	}
}

// remember keeps a session statement for twins that start again.
func (s *session) remember(info *fingerprint.Info, sql string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if info.Verb == "USE" {
		s.db = useDB(sql)
		return
	}
	if len(s.history) >= maxHistory {
		s.history = s.history[1:]
	}
	s.history = append(s.history, sql)
}

// useDB is the database a USE statement names.
func useDB(sql string) string {
	f := strings.Fields(strings.TrimRight(strings.TrimSpace(sql), ";"))
	if len(f) < 2 {
		return ""
	}
	return strings.Trim(f[1], "`")
}

func (s *session) setDB(db string) {
	s.mu.Lock()
	s.db = db
	s.mu.Unlock()
}

func (s *session) getDB() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.db
}

// state is the session's default database and history, for a twin that
// starts again.
func (s *session) state() (string, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.db, append([]string(nil), s.history...)
}
