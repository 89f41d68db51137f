package mirror

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/fingerprint"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire"
	"github.com/shakedown/shakedown/internal/wire/lenenc"
)

// Prepared statements. A statement id is valid only on the connection
// that prepared it, so each side keeps its own: the session knows the
// client's statements by the control's ids (the ones the client uses),
// and each twin prepares the reads among them on its candidate and maps
// the control's id to its own. An execution of a read is relayed to the
// control, its binary result decoded on the way into the comparison's
// reader as a text result is, and queued for the twins with its
// parameters as the client sent them (the types the client bound with
// it, or, when it bound none, those it bound before: the protocol sends
// types only when they change).

// Reasons an execution is not mirrored, besides a text statement's.
const (
	stmtCursor   = "execution with a cursor"
	stmtLongData = "execution with long data"
	stmtSession  = "prepared session statement"
	stmtUnknown  = "prepared statement unknown or malformed"
)

// lastPrepared is the statement id MariaDB reads as the one the
// connection prepared last.
const lastPrepared = 0xffffffff

// pstmt is a statement the client prepared on the control. The session's
// serve goroutine owns it; types is replaced, never changed in place, as
// items on the twins' queues hold it.
type pstmt struct {
	id     uint32
	sql    string
	info   *fingerprint.Info
	cl     *class
	params int
	// read: the statement is a read; mirrored: the twins prepare it (a
	// read, or with --writes any statement but a SET or the
	// administration's).
	read, mirrored bool
	// types are the parameters' types as last bound (nil before).
	types []byte
	// longData: COM_STMT_SEND_LONG_DATA came since the last execution;
	// its values are on the control only.
	longData bool
}

// stmtArgs are one execution's parameters in the binary protocol: the
// NULL bitmap, the types, the values.
type stmtArgs struct {
	nulls, types, values []byte
}

// prepare relays a COM_STMT_PREPARE and, once the control has prepared
// the statement, knows it by the control's id; a read is prepared on the
// twins too.
func (s *session) prepare(p []byte) bool {
	sql := string(p[1:])
	info := s.m.analyze(sql)
	ok := s.relay(p, nil)
	if !ok || !s.lastOK {
		return ok
	}
	id, params := s.ctl.Prepared()
	st := &pstmt{id: id, sql: sql, info: info, cl: s.m.tally.class(info, sql), params: params,
		read: info.ReadOnly && !info.Session}
	st.mirrored = st.read || s.m.opts.Writes && !info.Session && !adminStatement(info)
	if s.stmts == nil {
		s.stmts = map[uint32]*pstmt{}
	}
	s.stmts[id] = st
	s.lastStmt = id
	if st.mirrored {
		s.toTwins(item{kind: itemPrepare, stmt: id, sql: sql})
	}
	return ok
}

// stmtOf is the statement a COM_STMT_EXECUTE, _CLOSE, _RESET or
// _SEND_LONG_DATA packet names, nil when the session does not know it.
func (s *session) stmtOf(p []byte) *pstmt {
	if len(p) < 5 {
		return nil
	}
	id := binary.LittleEndian.Uint32(p[1:])
	if id == lastPrepared {
		id = s.lastStmt
	}
	return s.stmts[id]
}

// execute relays a COM_STMT_EXECUTE and mirrors it when its statement is
// a read, as query does a text read.
func (s *session) execute(p []byte) bool {
	st := s.stmtOf(p)
	if st == nil {
		s.m.tally.notMirrored(stmtUnknown)
		return s.relay(p, nil)
	}
	// The types, when bound, are kept whether or not this execution is
	// mirrored: the next ones may bind none.
	if t := boundTypes(p, st.params); t != nil && !bytes.Equal(t, st.types) {
		st.types = bytes.Clone(t)
	}
	cl := st.cl
	longData := st.longData
	st.longData = false
	switch {
	case st.info.Session:
		// Its state would be on the control only: counted, so that the
		// twins' differences after it can be read as what they may be.
		cl.skip(stmtSession)
		return s.relay(p, nil)
	case !st.mirrored:
		if s.m.opts.Writes {
			cl.skip(notSent)
		} else {
			cl.skip(notRead)
		}
		ok := s.relay(p, nil)
		s.afterWrite(st.info)
		return ok
	case s.txWrote && !s.m.opts.Writes:
		cl.skip(inWrittenTx)
		return s.relay(p, nil)
	case longData:
		cl.skip(stmtLongData)
		return s.relay(p, nil)
	}
	args, cursor, err := parseExecute(p, st.params, st.types)
	if err != nil || cursor {
		// The control answers it as it will; the twins have nothing to
		// run, or could not read its rows without the client's fetches.
		if err != nil {
			cl.skip(stmtUnknown)
		} else {
			cl.skip(stmtCursor)
		}
		ok := s.relay(p, nil)
		if !st.read {
			s.afterWrite(st.info)
		}
		return ok
	}
	if !s.roomFor(cl) {
		ok := s.relay(p, nil)
		if !st.read {
			s.afterWrite(st.info)
		}
		return ok
	}
	it := item{kind: itemExec, stmt: st.id, sql: st.sql, info: st.info, cl: cl, db: s.getDB()}
	if st.params > 0 {
		// One copy, off the client's buffer, which the next packet
		// reuses; the types are the statement's own.
		buf := make([]byte, len(args.nulls)+len(args.values))
		n := copy(buf, args.nulls)
		copy(buf[n:], args.values)
		it.args = &stmtArgs{nulls: buf[:n:n], types: st.types, values: buf[n:]}
	}
	ok := s.relayCompared(p, it)
	if !st.read {
		s.afterWrite(st.info)
	}
	return ok
}

// closeStmt relays a COM_STMT_CLOSE (which has no reply) and closes the
// twins' statement too.
func (s *session) closeStmt(p []byte) bool {
	st := s.stmtOf(p)
	ok := s.relay(p, nil)
	if st != nil {
		delete(s.stmts, st.id)
		if st.mirrored {
			s.toTwins(item{kind: itemClose, stmt: st.id})
		}
	}
	return ok
}

// resetStmt relays a COM_STMT_RESET and resets the twins' statement.
func (s *session) resetStmt(p []byte) bool {
	st := s.stmtOf(p)
	ok := s.relay(p, nil)
	if st != nil && ok && s.lastOK {
		st.longData = false
		if st.mirrored {
			s.toTwins(item{kind: itemStmtReset, stmt: st.id})
		}
	}
	return ok
}

// longData relays a COM_STMT_SEND_LONG_DATA (no reply): the statement's
// next execution has a value the twins never see, and is not mirrored.
func (s *session) longData(p []byte) bool {
	if st := s.stmtOf(p); st != nil {
		st.longData = true
	}
	return s.relay(p, nil)
}

// resetConnection relays a COM_RESET_CONNECTION; once the control has
// reset the session, the twins reset theirs and the session forgets its
// statements, its history and its transaction (the default database
// stays, as on the server).
func (s *session) resetConnection(p []byte) bool {
	ok := s.relay(p, nil)
	if !ok || !s.lastOK {
		return ok
	}
	clear(s.stmts)
	s.txWrote = false
	s.mu.Lock()
	s.history = nil
	s.mu.Unlock()
	s.toTwins(item{kind: itemReset})
	return ok
}

// Field types of parameters whose binary values have a fixed width or a
// length byte; all others are length-encoded strings.
const (
	typeTiny      = 0x01
	typeShort     = 0x02
	typeLong      = 0x03
	typeFloat     = 0x04
	typeDouble    = 0x05
	typeNull      = 0x06
	typeTimestamp = 0x07
	typeLongLong  = 0x08
	typeInt24     = 0x09
	typeDate      = 0x0a
	typeTime      = 0x0b
	typeDatetime  = 0x0c
	typeYear      = 0x0d
)

var errMalformedExecute = errors.New("malformed COM_STMT_EXECUTE")

// parseExecute reads a COM_STMT_EXECUTE of a statement of params
// parameters whose types were last bound as prev. It returns the
// parameters, pointing into p (types is p's when the packet binds them,
// else prev), and whether the client asked for a cursor. Every value is
// checked to be as long as its type says, so that the twins never send a
// packet the client did not.
func parseExecute(p []byte, params int, prev []byte) (stmtArgs, bool, error) {
	var a stmtArgs
	// The command, the statement id, the flags, the iteration count.
	if len(p) < 10 {
		return a, false, errMalformedExecute
	}
	cursor := p[5] != 0
	p = p[10:]
	if params == 0 {
		return a, cursor, nil
	}
	nb := (params + 7) / 8
	if len(p) < nb+1 {
		return a, cursor, errMalformedExecute
	}
	a.nulls, p = p[:nb], p[nb:]
	bound := p[0] == 1
	p = p[1:]
	if bound {
		if len(p) < 2*params {
			return a, cursor, errMalformedExecute
		}
		a.types, p = p[:2*params], p[2*params:]
	} else {
		if len(prev) != 2*params {
			return a, cursor, errMalformedExecute // no types ever bound
		}
		a.types = prev
	}
	values := p
	for i := range params {
		if a.nulls[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		n, err := valueLen(a.types[2*i], p)
		if err != nil {
			return a, cursor, err
		}
		p = p[n:]
	}
	if len(p) != 0 {
		return a, cursor, errMalformedExecute
	}
	a.values = values
	return a, cursor, nil
}

// boundTypes are the parameters' types a COM_STMT_EXECUTE of a statement
// of params parameters binds, nil when it binds none (or is too short to
// say).
func boundTypes(p []byte, params int) []byte {
	nb := (params + 7) / 8
	at := 10 + nb
	if params == 0 || len(p) < at+1+2*params || p[at] != 1 {
		return nil
	}
	return p[at+1 : at+1+2*params]
}

// valueLen is the length of the binary value of type t at the front of p.
func valueLen(t byte, p []byte) (int, error) {
	var n int
	switch t {
	case typeNull:
		return 0, nil
	case typeTiny:
		n = 1
	case typeShort, typeYear:
		n = 2
	case typeLong, typeInt24, typeFloat:
		n = 4
	case typeLongLong, typeDouble:
		n = 8
	case typeDate, typeDatetime, typeTimestamp, typeTime:
		if len(p) == 0 {
			return 0, errMalformedExecute
		}
		n = 1 + int(p[0])
	default:
		l, w := lenenc.Read(p)
		if w == 0 || uint64(len(p)-w) < l {
			return 0, errMalformedExecute
		}
		n = w + int(l)
	}
	if len(p) < n {
		return 0, errMalformedExecute
	}
	return n, nil
}

// twinStmt is a statement prepared on the candidate, or the candidate's
// refusal to prepare it (which its executions then meet, and which is
// compared as their result).
type twinStmt struct {
	st  *wire.Stmt
	err error
}

// prepare prepares sql on the candidate as the control's statement id.
// It returns nil when the connection broke (the twin has then lost it).
func (tw *twin) prepare(ctx context.Context, id uint32, sql string) *twinStmt {
	if ts := tw.stmts[id]; ts != nil {
		return ts
	}
	st, err := tw.conn.Prepare(sql)
	if err != nil && (tw.conn.Broken() || target.EndsSession(err)) {
		tw.lose(ctx)
		return nil
	}
	ts := &twinStmt{st: st, err: err}
	if tw.stmts == nil {
		tw.stmts = map[uint32]*twinStmt{}
	}
	tw.stmts[id] = ts
	return ts
}

// closeStmt closes the candidate's statement for the control's id.
func (tw *twin) closeStmt(id uint32) {
	ts := tw.stmts[id]
	delete(tw.stmts, id)
	if ts != nil && ts.st != nil {
		ts.st.Close()
	}
}

// resetStmt resets the candidate's statement for the control's id.
func (tw *twin) resetStmt(ctx context.Context, id uint32) {
	ts := tw.stmts[id]
	if ts == nil || ts.st == nil {
		return
	}
	if err := ts.st.Reset(); err != nil && (tw.conn.Broken() || target.EndsSession(err)) {
		tw.lose(ctx)
	}
}

// resetConn resets the twin's session as the client reset the control's;
// a candidate that cannot (an older server) starts again instead, from
// the session's history, which the reset emptied.
func (tw *twin) resetConn(ctx context.Context) {
	clear(tw.stmts)
	if err := tw.conn.ResetConnection(); err != nil {
		if tw.conn.Broken() || target.EndsSession(err) {
			tw.lose(ctx)
			return
		}
		tw.resync.Store(true)
	}
}

// exec runs a mirrored execution on the candidate's statement and records
// the comparison; the statement is prepared first if the twin has not
// (its prepare was dropped, or the twin started again since).
func (tw *twin) exec(ctx context.Context, it item) {
	ts := tw.prepare(ctx, it.stmt, it.sql)
	if ts == nil {
		if ctx.Err() == nil {
			it.cl.cand[tw.cand.i].lost.Add(1)
		}
		return
	}
	c := tw.conn
	tw.h.Start(tw.s.m.seed, it.db, it.info)
	start := time.Now()
	var wr wire.Result
	err := ts.err
	if err == nil {
		if it.args != nil {
			err = ts.st.SendExecBound(it.args.nulls, it.args.types, it.args.values)
		} else {
			err = ts.st.SendExecBound(nil, nil, nil)
		}
		if err == nil {
			wr, err = c.ReadReply(&tw.h)
		}
	}
	tw.finish(ctx, it, start, wr, err)
}

// pendingCloses are the statements whose COM_STMT_CLOSE found a twin's
// queue full, each with the sequence number of the last item queued
// before it: the twin closes it once it has done that item (the
// executions queued before the close must still find the statement).
// Past maxPendingCloses the twin starts again instead.
type pendingCloses struct {
	mu  sync.Mutex
	pcs []pendingClose
}

type pendingClose struct {
	id    uint32
	after uint64
}

const maxPendingCloses = 1024

// add keeps the close of id after item number after; false when the list
// is full.
func (pc *pendingCloses) add(id uint32, after uint64) bool {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if len(pc.pcs) >= maxPendingCloses {
		return false
	}
	pc.pcs = append(pc.pcs, pendingClose{id, after})
	return true
}

// due returns the ids to close before the item numbered seq, and forgets
// them; ids is reused.
func (pc *pendingCloses) due(seq uint64, ids []uint32) []uint32 {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	ids = ids[:0]
	kept := pc.pcs[:0]
	for _, c := range pc.pcs {
		if c.after < seq {
			ids = append(ids, c.id)
		} else {
			kept = append(kept, c)
		}
	}
	pc.pcs = kept
	return ids
}
