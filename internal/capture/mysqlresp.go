package capture

import (
	"encoding/binary"
	"strconv"
	"time"

	"github.com/shakedown/shakedown/internal/wire/lenenc"
)

// serverPacket reads one packet the server sent: the greeting, the end of
// the login, or part of the response to the oldest command waiting.
func (mc *mysqlConn) serverPacket(seq byte, p []byte, seen time.Time) error {
	if len(p) == 0 {
		return nil
	}
	if mc.eofAfter >= 0 {
		want := mc.eofAfter
		mc.eofAfter = -1
		if int(seq) == want {
			mc.capsKnown = true
			if isEOF(p) {
				return nil // the EOF that ends a prepare's definitions
			}
			mc.caps |= capDeprecateEOF
		}
	}
	if mc.phase == phaseUnknown && seq == 0 && p[0] == 10 && (!mc.midStream || isGreeting(p)) {
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
			mc.skip = skipAuthFailed
			mc.c.Stats.Packets.skip(skipAuthFailed, 1)
		}
		return nil
	}
	if len(mc.queue) == 0 {
		// It answers a command sent before the capture began.
		mc.c.Stats.Packets.skip(skipOldResponse, 1)
		return nil
	}
	q := mc.queue[0]
	if !q.started {
		if seq != q.seq+1 {
			// The end of a response to an earlier command.
			mc.c.Stats.Packets.skip(skipOldResponse, 1)
			return nil
		}
		q.started = true
	}
	done, err := mc.response(q, seq, p, seen)
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

// isEOF reports an EOF packet proper: 0xfe, warnings and status. The OK
// packet that stands for it under CLIENT_DEPRECATE_EOF is longer.
func isEOF(p []byte) bool { return p[0] == 0xfe && len(p) == 5 }

// response reads one packet of q's response; it reports whether the
// response is complete.
func (mc *mysqlConn) response(q *pending, seq byte, p []byte, seen time.Time) (bool, error) {
	if q.rec == nil {
		q.rec = mc.begin(q)
	}
	switch q.cmd {
	case comStmtPrepare:
		return mc.prepareResponse(q, seq, p), nil
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
		n, w := lenenc.Read(p)
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
			if mc.capsKnown && mc.deprecateEOF() {
				return false, nil
			}
			q.columns = -1 // the EOF after the definitions may come next
		}
		return false, nil
	}
	if q.columns == -1 {
		q.columns = 0
		if isEOF(p) {
			mc.capsKnown = true
			if binary.LittleEndian.Uint16(p[3:])&statusCursorExists != 0 {
				return true, mc.finish(q, seen, true)
			}
			return false, nil
		}
		if !mc.capsKnown {
			// No EOF after the definitions: the client asked for none.
			mc.capsKnown = true
			mc.caps |= capDeprecateEOF
		}
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
	if isEOF(p) {
		status = binary.LittleEndian.Uint16(p[3:])
	} else {
		_, w1 := lenenc.Read(p[1:])
		if w1 > 0 {
			_, w2 := lenenc.Read(p[1+w1:])
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

func (mc *mysqlConn) prepareResponse(q *pending, seq byte, p []byte) bool {
	if !q.gotCols {
		if p[0] != 0x00 || len(p) < 12 {
			return true // ERR: nothing was prepared
		}
		q.gotCols = true
		q.prepID = binary.LittleEndian.Uint32(p[1:])
		cols := int(binary.LittleEndian.Uint16(p[5:]))
		params := int(binary.LittleEndian.Uint16(p[7:]))
		mc.stmts[q.prepID] = &stmtInfo{sql: string(q.payload[1:]), nparams: params}
		mc.lastID = q.prepID
		eof := 0
		if mc.capsKnown && !mc.deprecateEOF() {
			eof = 1
		}
		if params > 0 {
			q.params = params + eof
		}
		if cols > 0 {
			q.prepCols = cols + eof
		}
		q.rows = int64(params + cols) // definitions to come
		return mc.prepDone(q, seq)
	}
	if !mc.capsKnown && isEOF(p) {
		// An EOF ends the parameters' definitions: the columns' end with
		// one too.
		mc.capsKnown = true
		q.params = 0
		if q.prepCols > 0 {
			q.prepCols++
		}
		return mc.prepDone(q, seq)
	}
	if q.params > 0 {
		q.params--
	} else if q.prepCols > 0 {
		q.prepCols--
	}
	return mc.prepDone(q, seq)
}

// prepDone reports whether a prepare's response is complete; on a
// connection whose capabilities are unknown, an EOF may still follow.
func (mc *mysqlConn) prepDone(q *pending, seq byte) bool {
	done := q.params == 0 && q.prepCols == 0
	if done && !mc.capsKnown && q.rows > 0 {
		mc.eofAfter = int(seq+1) & 0xff
	}
	return done
}

// begin makes the record of a statement command when its response starts.
func (mc *mysqlConn) begin(q *pending) *Record {
	r := &Record{Session: mc.session, TS: q.start.UnixMicro(), DB: mc.db}
	mc.lastTS = r.TS
	p := q.payload
	switch q.cmd {
	case comQuery:
		body, ok := mc.queryText(p[1:])
		if !ok {
			mc.c.Stats.Packets.skip(skipQueryAttrs, 1)
			r.Kind = "skip"
			return r
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
			// Skipped, in the source's count as on its packet line.
			mc.c.Stats.Packets.skip(skipPreparedOld, 1)
			mc.c.skipCount(0, skipPreparedOld)
			r.Kind = "skip"
			return r
		}
		params, err := decodeParams(p[5:], st)
		if err != nil {
			mc.c.Stats.Packets.skip(skipParams, 1)
			mc.c.bad(0, "session %s: COM_STMT_EXECUTE: %v", mc.session, err)
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

// queryText is COM_QUERY's text, after the query attributes the client
// sends when both ends offered CLIENT_QUERY_ATTRIBUTES (MySQL 8.0.23 and
// later); ok is false when they cannot be read past.
func (mc *mysqlConn) queryText(body []byte) ([]byte, bool) {
	attrs := mc.caps&mc.srvCaps&capQueryAttributes != 0
	if !mc.capsKnown && len(body) >= 2 && body[0] < '\t' && body[1] == 1 {
		// Seen mid-stream: a statement cannot start with a control byte,
		// so this is the attribute count and the parameter set count.
		attrs = true
	}
	if !attrs {
		return body, true
	}
	sql, err := afterQueryAttrs(body)
	return sql, err == nil
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
	return mc.c.add(r)
}

// flushQueue hands on every command still waiting, untimed.
func (mc *mysqlConn) flushQueue() error {
	queue := mc.queue
	mc.queue = nil
	for _, q := range queue {
		if err := mc.finish(q, time.Time{}, false); err != nil {
			return err
		}
	}
	return nil
}

func (mc *mysqlConn) quit(seen time.Time) error {
	if err := mc.flushQueue(); err != nil {
		return err
	}
	if mc.closed {
		return nil
	}
	mc.closed = true
	if !mc.emitted {
		return nil
	}
	ts := mc.lastTS
	if !seen.IsZero() {
		ts = seen.UnixMicro()
	}
	return mc.c.add(&Record{Session: mc.session, TS: ts, Kind: KindQuit})
}

func (mc *mysqlConn) close() error {
	if err := mc.advance(farFuture); err != nil {
		return err
	}
	if mc.skip != "" && !mc.emitted {
		return nil
	}
	return mc.quit(time.Time{})
}

// isGreeting reports whether a server packet that a connection seen
// mid-stream starts with is the greeting (a capture that began between the
// TCP handshake and the greeting): protocol 10, a printable version, the
// connection id, eight bytes of scramble and a NUL.
func isGreeting(p []byte) bool {
	v, rest := cstring(p[1:])
	if len(v) == 0 || len(rest) < 13 || rest[12] != 0 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < ' ' || v[i] > '~' {
			return false
		}
	}
	return true
}
