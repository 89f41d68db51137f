package capture

import (
	"encoding/binary"
	"strconv"
	"time"
)

// Capability flags and commands of the client protocol.
const (
	capConnectWithDB   = 0x00000008
	capCompress        = 0x00000020
	capSSL             = 0x00000800
	capSecureConn      = 0x00008000
	capPluginAuthLenec = 0x00200000
	capDeprecateEOF    = 0x01000000
	capQueryAttributes = 0x08000000

	comQuit         = 0x01
	comInitDB       = 0x02
	comQuery        = 0x03
	comStmtPrepare  = 0x16
	comStmtExecute  = 0x17
	comStmtLongData = 0x18
	comStmtClose    = 0x19
	comStmtReset    = 0x1a

	statusMoreResults  = 0x0008
	statusCursorExists = 0x0040
)

// pending is a command waiting for its response.
type pending struct {
	cmd     byte
	payload []byte
	start   time.Time
	// filled as the response is read
	rec      *Record
	columns  int64 // columns left to read
	gotCols  bool  // column definitions done
	rows     int64
	params   int // prepare: parameter definitions left
	prepCols int // prepare: column definitions left
	prepID   uint32
}

// stmtInfo is a prepared statement the capture saw prepared.
type stmtInfo struct {
	sql      string
	nparams  int
	types    []byte // two bytes per parameter, from the last execute that sent them
	longData map[int][]byte
}

// mysqlConn decodes one connection's client protocol from both directions.
type mysqlConn struct {
	f       *streamFactory
	client  string
	session string
	db      string
	phase   int // 0 unknown, 1 greeting seen, 2 handshake answered, 3 commands
	caps    uint32
	srvCaps uint32
	skip    string // why this connection cannot be read (TLS, compression)
	in, out framer
	queue   []*pending
	stmts   map[uint32]*stmtInfo
	lastID  uint32
	emitted bool
	closed  bool
}

const (
	phaseUnknown = iota
	phaseGreeting
	phaseAuth
	phaseCommand
)

func newMySQLConn(f *streamFactory, client string) *mysqlConn {
	return &mysqlConn{f: f, client: client, session: client, stmts: map[uint32]*stmtInfo{}}
}

// framer cuts a byte stream into MySQL packets.
type framer struct {
	buf  []byte
	big  []byte // a packet of 16 MiB or more being joined
	lost bool   // bytes were lost: wait for a chunk that starts a packet
}

// maxPending bounds the bytes one direction buffers (a result row or a
// statement larger than this is skipped).
const maxPending = 80 << 20

func (fr *framer) push(b []byte, fn func(seq byte, payload []byte) error) error {
	if fr.lost {
		fr.buf, fr.big, fr.lost = fr.buf[:0], nil, false
	}
	fr.buf = append(fr.buf, b...)
	for len(fr.buf) >= 4 {
		n := int(fr.buf[0]) | int(fr.buf[1])<<8 | int(fr.buf[2])<<16
		if len(fr.buf) < 4+n {
			if len(fr.buf) > maxPending {
				fr.buf = fr.buf[:0]
			}
			break
		}
		seq := fr.buf[3]
		payload := fr.buf[4 : 4+n]
		if n == 0xffffff || fr.big != nil {
			fr.big = append(fr.big, payload...)
			if n == 0xffffff {
				fr.buf = fr.buf[4+n:]
				continue
			}
			payload = fr.big
			fr.big = nil
		}
		if err := fn(seq, payload); err != nil {
			return err
		}
		fr.buf = fr.buf[4+n:]
	}
	// Keep the buffer from growing without bound through re-slicing.
	if cap(fr.buf) > 1<<20 && len(fr.buf) < 1<<16 {
		fr.buf = append([]byte(nil), fr.buf...)
	}
	return nil
}

func (mc *mysqlConn) lost(toServer bool) {
	if toServer {
		mc.in.lost = true
	} else {
		mc.out.lost = true
	}
	// Responses can no longer be matched with their commands.
	mc.flushQueue()
}

func (mc *mysqlConn) feed(toServer bool, b []byte, seen time.Time) error {
	if mc.skip != "" || len(b) == 0 {
		return nil
	}
	if toServer {
		return mc.in.push(b, func(seq byte, p []byte) error { return mc.clientPacket(seq, p, seen) })
	}
	return mc.out.push(b, func(seq byte, p []byte) error { return mc.serverPacket(seq, p, seen) })
}

func (mc *mysqlConn) clientPacket(seq byte, p []byte, seen time.Time) error {
	switch {
	case mc.phase == phaseGreeting && seq == 1:
		mc.handshakeResponse(p)
		return nil
	case mc.phase == phaseAuth:
		return nil // authentication exchange
	case seq != 0 || len(p) == 0:
		return nil
	}
	mc.phase = phaseCommand
	switch p[0] {
	case comQuit:
		return mc.quit(seen)
	case comStmtClose:
		if len(p) >= 5 {
			delete(mc.stmts, binary.LittleEndian.Uint32(p[1:]))
		}
		return nil
	case comStmtLongData:
		if len(p) >= 7 {
			if st := mc.stmts[binary.LittleEndian.Uint32(p[1:])]; st != nil {
				if st.longData == nil {
					st.longData = map[int][]byte{}
				}
				i := int(binary.LittleEndian.Uint16(p[5:]))
				st.longData[i] = append(st.longData[i], p[7:]...)
			}
		}
		return nil
	}
	mc.queue = append(mc.queue, &pending{cmd: p[0], payload: append([]byte(nil), p...), start: seen})
	if len(mc.queue) > 64 {
		// Responses went missing: give up on the oldest.
		if err := mc.finish(mc.queue[0], seen, false); err != nil {
			return err
		}
		mc.queue = mc.queue[1:]
	}
	return nil
}

// handshakeResponse reads the client's capabilities and database; its user
// name and password hash are not kept.
func (mc *mysqlConn) handshakeResponse(p []byte) {
	mc.phase = phaseAuth
	if len(p) < 32 {
		return
	}
	mc.caps = binary.LittleEndian.Uint32(p)
	if mc.caps&capSSL != 0 {
		mc.skip = "TLS"
		mc.f.c.Stats.Ignored++
		return
	}
	if mc.caps&capCompress != 0 && mc.srvCaps&capCompress != 0 {
		mc.skip = "compression"
		mc.f.c.Stats.Ignored++
		return
	}
	rest := p[32:]
	_, rest = cstring(rest) // user
	switch {
	case mc.caps&capPluginAuthLenec != 0:
		n, w := lenenc(rest)
		if w == 0 || int(n) > len(rest)-w {
			return
		}
		rest = rest[w+int(n):]
	case mc.caps&capSecureConn != 0:
		if len(rest) == 0 || int(rest[0]) > len(rest)-1 {
			return
		}
		rest = rest[1+int(rest[0]):]
	default:
		_, rest = cstring(rest)
	}
	if mc.caps&capConnectWithDB != 0 {
		mc.db, _ = cstring(rest)
	}
}

func (mc *mysqlConn) serverPacket(seq byte, p []byte, seen time.Time) error {
	if len(p) == 0 {
		return nil
	}
	if mc.phase == phaseUnknown && seq == 0 && p[0] == 10 {
		// Greeting: protocol 10, version, connection id, ...
		_, rest := cstring(p[1:])
		if len(rest) >= 4 {
			mc.session = strconv.FormatUint(uint64(binary.LittleEndian.Uint32(rest)), 10)
			mc.phase = phaseGreeting
			if len(rest) >= 4+9+2 {
				mc.srvCaps = uint32(binary.LittleEndian.Uint16(rest[13:]))
				if len(rest) >= 4+9+2+1+2+2 {
					mc.srvCaps |= uint32(binary.LittleEndian.Uint16(rest[18:])) << 16
				}
			}
		}
		return nil
	}
	if mc.phase == phaseAuth {
		if p[0] == 0x00 {
			mc.phase = phaseCommand
		} else if p[0] == 0xff {
			mc.skip = "authentication failed"
		}
		return nil
	}
	if len(mc.queue) == 0 {
		return nil
	}
	q := mc.queue[0]
	done, err := mc.response(q, p, seen)
	if err != nil || !done {
		return err
	}
	mc.queue = mc.queue[1:]
	return nil
}

func (mc *mysqlConn) deprecateEOF() bool { return mc.caps&capDeprecateEOF != 0 }

// isTerminator reports an EOF packet, or the OK packet that ends a result
// set when CLIENT_DEPRECATE_EOF is on (a row cannot start with 0xfe unless
// it is 16 MiB or more).
func isTerminator(p []byte) bool { return p[0] == 0xfe && len(p) < 0xffffff }

// response reads one packet of q's response; it reports whether the
// response is complete.
func (mc *mysqlConn) response(q *pending, p []byte, seen time.Time) (bool, error) {
	if q.rec == nil {
		q.rec = mc.begin(q)
	}
	switch q.cmd {
	case comStmtPrepare:
		return mc.prepareResponse(q, p), nil
	case comQuery, comStmtExecute:
	default:
		return true, nil // OK or ERR of a command that is not a statement
	}
	if !q.gotCols && q.columns == 0 {
		switch p[0] {
		case 0x00:
			return mc.endOfResult(q, p, seen)
		case 0xff:
			return true, mc.finishErr(q, p, seen)
		case 0xfb:
			return false, nil // LOAD DATA LOCAL: the file follows
		}
		n, w := lenenc(p)
		q.columns = int64(n)
		if w > 0 && len(p) == w+1 && p[w] == 0 {
			// MariaDB's metadata cache: the column definitions the client
			// already has from the prepare are not sent again.
			q.columns, q.gotCols = 0, true
		}
		return false, nil
	}
	if !q.gotCols {
		q.columns--
		if q.columns == 0 {
			q.gotCols = true
			if mc.deprecateEOF() {
				return false, nil
			}
			q.columns = -1 // the EOF after the definitions comes next
		}
		return false, nil
	}
	if q.columns == -1 {
		q.columns = 0
		if isTerminator(p) && len(p) >= 5 && binary.LittleEndian.Uint16(p[3:])&statusCursorExists != 0 {
			return true, mc.finish(q, seen, true)
		}
		return false, nil
	}
	switch {
	case p[0] == 0xff:
		return true, mc.finishErr(q, p, seen)
	case isTerminator(p):
		return mc.endOfResult(q, p, seen)
	}
	q.rows++
	return false, nil
}

// endOfResult handles an OK or EOF ending a result; more may follow.
func (mc *mysqlConn) endOfResult(q *pending, p []byte, seen time.Time) (bool, error) {
	var status uint16
	if p[0] == 0xfe && len(p) == 5 {
		status = binary.LittleEndian.Uint16(p[3:])
	} else {
		_, w1 := lenenc(p[1:])
		if w1 > 0 {
			_, w2 := lenenc(p[1+w1:])
			if w2 > 0 && len(p) >= 1+w1+w2+2 {
				status = binary.LittleEndian.Uint16(p[1+w1+w2:])
			}
		}
	}
	if status&statusMoreResults != 0 {
		q.gotCols, q.columns = false, 0
		return false, nil
	}
	return true, mc.finish(q, seen, true)
}

func (mc *mysqlConn) prepareResponse(q *pending, p []byte) bool {
	if q.params == 0 && q.prepCols == 0 && q.prepID == 0 {
		if p[0] != 0x00 || len(p) < 12 {
			return true // ERR: nothing was prepared
		}
		q.prepID = binary.LittleEndian.Uint32(p[1:])
		cols := int(binary.LittleEndian.Uint16(p[5:]))
		params := int(binary.LittleEndian.Uint16(p[7:]))
		mc.stmts[q.prepID] = &stmtInfo{sql: string(q.payload[1:]), nparams: params}
		mc.lastID = q.prepID
		eof := 1
		if mc.deprecateEOF() {
			eof = 0
		}
		if params > 0 {
			q.params = params + eof
		}
		if cols > 0 {
			q.prepCols = cols + eof
		}
		return q.params == 0 && q.prepCols == 0
	}
	if q.params > 0 {
		q.params--
	} else if q.prepCols > 0 {
		q.prepCols--
	}
	return q.params == 0 && q.prepCols == 0
}

// begin makes the record of a statement command when its response starts.
func (mc *mysqlConn) begin(q *pending) *Record {
	r := &Record{Session: mc.session, TS: q.start.UnixMicro(), DB: mc.db}
	p := q.payload
	switch q.cmd {
	case comQuery:
		body := p[1:]
		if mc.caps&capQueryAttributes != 0 {
			n, w := lenenc(body)
			if w == 0 || n != 0 {
				r.Kind = "skip"
				return r
			}
			_, w2 := lenenc(body[w:])
			body = body[w+w2:]
		}
		r.SQL = string(body)
	case comInitDB:
		mc.db = string(p[1:])
		r.Kind = "skip"
	case comStmtExecute:
		if len(p) < 5 {
			r.Kind = "skip"
			return r
		}
		id := binary.LittleEndian.Uint32(p[1:])
		if id == 0xffffffff {
			id = mc.lastID
		}
		st := mc.stmts[id]
		if st == nil {
			// Prepared before the capture began.
			mc.f.c.Stats.Ignored++
			r.Kind = "skip"
			return r
		}
		params, err := decodeParams(p[5:], st)
		if err != nil {
			mc.f.c.bad(0, "session %s: COM_STMT_EXECUTE: %v", mc.session, err)
			r.Kind = "skip"
			return r
		}
		r.SQL, r.Prepared, r.Params = st.sql, true, params
		st.longData = nil
	default:
		r.Kind = "skip"
	}
	return r
}

func (mc *mysqlConn) finishErr(q *pending, p []byte, seen time.Time) error {
	if len(p) >= 3 {
		q.rec.Error = int(binary.LittleEndian.Uint16(p[1:]))
	}
	return mc.finish(q, seen, true)
}

// finish hands on q's statement; timed is false when its response was not
// seen.
func (mc *mysqlConn) finish(q *pending, seen time.Time, timed bool) error {
	if q.rec == nil {
		q.rec = mc.begin(q)
	}
	r := q.rec
	if r.Kind == "skip" || r.SQL == "" {
		return nil
	}
	if timed {
		r.DurationUS = i64(seen.Sub(q.start).Microseconds())
		r.RowsSent = i64(q.rows)
	}
	if r.Error == 0 && r.DB == "" {
		r.DB = mc.db
	}
	if db, ok := useDB(r.SQL); ok && r.Error == 0 {
		mc.db = db
	}
	mc.emitted = true
	return mc.f.c.add(r)
}

// flushQueue hands on every command still waiting, untimed.
func (mc *mysqlConn) flushQueue() {
	for _, q := range mc.queue {
		if err := mc.finish(q, time.Time{}, false); err != nil && mc.f.err == nil {
			mc.f.err = err
		}
	}
	mc.queue = nil
}

func (mc *mysqlConn) quit(seen time.Time) error {
	mc.flushQueue()
	if mc.closed {
		return nil
	}
	mc.closed = true
	if !mc.emitted {
		return nil
	}
	return mc.f.c.add(&Record{Session: mc.session, TS: seen.UnixMicro(), Kind: KindQuit})
}

func (mc *mysqlConn) close() error {
	if mc.skip != "" && !mc.emitted {
		return nil
	}
	return mc.quit(time.Time{})
}

// cstring reads a NUL-terminated string.
func cstring(b []byte) (string, []byte) {
	for i, c := range b {
		if c == 0 {
			return string(b[:i]), b[i+1:]
		}
	}
	return string(b), nil
}

// lenenc reads a length-encoded integer; width 0 means b is too short.
func lenenc(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	switch b[0] {
	case 0xfc:
		if len(b) < 3 {
			return 0, 0
		}
		return uint64(binary.LittleEndian.Uint16(b[1:])), 3
	case 0xfd:
		if len(b) < 4 {
			return 0, 0
		}
		return uint64(b[1]) | uint64(b[2])<<8 | uint64(b[3])<<16, 4
	case 0xfe:
		if len(b) < 9 {
			return 0, 0
		}
		return binary.LittleEndian.Uint64(b[1:]), 9
	case 0xfb, 0xff:
		return 0, 1
	}
	return uint64(b[0]), 1
}
