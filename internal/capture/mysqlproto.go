package capture

import (
	"encoding/binary"
	"time"

	"github.com/shakedown/shakedown/internal/wire/lenenc"
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

// isCommand reports the command bytes a client sends at the start of a
// command (sequence number 0): what a connection seen mid-stream is picked
// up at.
func isCommand(b byte) bool {
	switch b {
	case comQuit, comInitDB, comQuery, 0x04 /* field list */, 0x05, 0x06, 0x07, 0x09, 0x0a, 0x0c, 0x0d,
		0x0e /* ping */, 0x11 /* change user */, comStmtPrepare, comStmtExecute, comStmtLongData,
		comStmtClose, comStmtReset, 0x1b /* set option */, 0x1c /* fetch */, 0x1f /* reset connection */ :
		return true
	}
	return false
}

// pending is a command waiting for its response.
type pending struct {
	cmd     byte
	seq     byte // of the command's last packet: the response goes on from it
	payload []byte
	start   time.Time
	// filled as the response is read
	rec      *Record
	started  bool  // a packet of the response was read
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

// wirePacket is one MySQL packet, framed, waiting to be read.
type wirePacket struct {
	seq     byte
	last    byte // the sequence number of its last part (16 MiB or more)
	payload []byte
	ts      time.Time // when its last byte was captured
}

// mysqlConn decodes one connection's client protocol from both directions.
// Each direction arrives in order, but the two may be handed over in any
// order: packets wait, framed, until advance says both directions are
// complete up to a time, and are then read in the order of their times.
type mysqlConn struct {
	c       *Capturer
	client  string
	session string
	db      string
	phase   int // 0 unknown, 1 greeting seen, 2 handshake answered, 3 commands
	caps    uint32
	srvCaps uint32
	// capsKnown is false on a connection seen mid-stream: whether EOF
	// packets are sent is then told from the packets themselves.
	capsKnown bool
	midStream bool
	// eofAfter is the sequence number an EOF packet may still come with
	// after a prepare response, when capsKnown is false.
	eofAfter int
	skip     string // why this connection cannot be read (TLS, compression)
	in, out  framer
	queue    []*pending
	cq, sq   []wirePacket // framed, from the client and the server
	cmdLast  byte         // the sequence number of the command packet read last
	stmts    map[uint32]*stmtInfo
	lastID   uint32
	emitted  bool
	closed   bool
	// lastTS is the start of the statement handed on last: a connection
	// closed at the end of the capture, with no packet to time its end,
	// quits then.
	lastTS int64
}

const (
	phaseUnknown = iota
	phaseGreeting
	phaseAuth
	phaseCommand
)

func newMySQLConn(c *Capturer, client string) *mysqlConn {
	return &mysqlConn{c: c, client: client, session: client, stmts: map[uint32]*stmtInfo{}, eofAfter: -1}
}

// framer cuts a byte stream into MySQL packets.
type framer struct {
	buf   []byte
	big   []byte // a packet of 16 MiB or more being joined
	first byte   // the sequence number of big's first part
	// last is the sequence number of the last packet read: a response goes
	// on from a command's.
	last  byte
	since time.Time // when the bytes in buf began to arrive
	// lost: bytes were lost, or the stream was first seen mid-way; the next
	// chunk that starts a packet is waited for.
	lost bool
}

// maxPending bounds the bytes one direction buffers (a result row or a
// statement larger than this is skipped).
const maxPending = 80 << 20

// push cuts b into packets. While the framer is lost, a chunk is only taken
// if starts(chunk) says it begins with a packet.
func (fr *framer) push(b []byte, ts time.Time, starts func([]byte) bool, fn func(seq byte, payload []byte, ts time.Time)) {
	if fr.lost {
		fr.buf, fr.big = fr.buf[:0], nil
		if !starts(b) {
			return
		}
		fr.lost = false
	}
	if len(fr.buf) == 0 {
		fr.since = ts
	}
	fr.buf = append(fr.buf, b...)
	for len(fr.buf) >= 4 {
		n := int(fr.buf[0]) | int(fr.buf[1])<<8 | int(fr.buf[2])<<16
		if len(fr.buf) < 4+n {
			if len(fr.buf) > maxPending {
				fr.buf = fr.buf[:0]
				fr.lost = true
			}
			break
		}
		seq := fr.buf[3]
		fr.last = seq
		payload := fr.buf[4 : 4+n]
		if n == 0xffffff || fr.big != nil {
			if fr.big == nil {
				fr.first = seq
			}
			fr.big = append(fr.big, payload...)
			if n == 0xffffff {
				fr.buf = fr.buf[4+n:]
				continue
			}
			payload, seq = fr.big, fr.first
			fr.big = nil
		}
		fn(seq, payload, ts)
		fr.buf = fr.buf[4+n:]
		fr.since = ts
	}
	// Keep the buffer from growing without bound through re-slicing.
	if cap(fr.buf) > 1<<20 && len(fr.buf) < 1<<16 {
		fr.buf = append([]byte(nil), fr.buf...)
	}
}

// packetChain reports whether b is a run of MySQL packet headers and
// payloads whose sequence numbers go up by one from first (any, if first is
// negative), ending at the end of b or in a packet that goes on past it;
// ok(i, payload) vets each whole packet's payload.
func packetChain(b []byte, first int, ok func(i int, seq byte, payload []byte) bool) bool {
	if len(b) < 5 {
		return false
	}
	want := first
	for i := 0; len(b) > 0; i++ {
		if len(b) < 4 {
			return false
		}
		n := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
		seq := b[3]
		if want >= 0 && int(seq) != want {
			return false
		}
		want = int(seq+1) & 0xff
		if 4+n > len(b) {
			// Goes on in the next segment: only the start can be vetted.
			return ok(i, seq, b[4:])
		}
		if !ok(i, seq, b[4:4+n]) {
			return false
		}
		b = b[4+n:]
	}
	return true
}

// startsCommand reports whether a client chunk begins with a command.
func startsCommand(b []byte) bool {
	return packetChain(b, 0, func(i int, seq byte, p []byte) bool {
		return len(p) > 0 && isCommand(p[0])
	})
}

// startsResponse reports whether a server chunk begins with the first
// packet of a response to the oldest command waiting (or, with no command
// waiting, any run of whole packets, which wait for theirs).
func (mc *mysqlConn) startsResponse(b []byte) bool {
	first := -1
	if len(mc.queue) > 0 && !mc.queue[0].started {
		first = int(mc.queue[0].seq+1) & 0xff
	}
	return packetChain(b, first, func(i int, seq byte, p []byte) bool {
		return len(p) > 0 || first < 0
	})
}

func (mc *mysqlConn) lost(toServer bool) error {
	if toServer {
		mc.in.lost = true
	} else {
		mc.out.lost = true
	}
	// What came before the gap is read; responses after it can no longer
	// be matched with their commands.
	if err := mc.advance(farFuture); err != nil {
		return err
	}
	return mc.flushQueue()
}

// farFuture is a time after every packet's.
var farFuture = time.Unix(1<<40, 0)

// advance reads, in the order of their times, the packets of both
// directions up to until: the caller has handed over everything before it.
// At equal times a response goes on before the next command.
func (mc *mysqlConn) advance(until time.Time) error {
	for mc.skip == "" {
		c := len(mc.cq) > 0 && !mc.cq[0].ts.After(until)
		s := len(mc.sq) > 0 && !mc.sq[0].ts.After(until)
		if !c && !s {
			return nil
		}
		if c && s {
			ct, st := mc.cq[0].ts, mc.sq[0].ts
			c = ct.Before(st) || (ct.Equal(st) && len(mc.queue) == 0)
		}
		var err error
		if c {
			p := mc.cq[0]
			mc.cq = mc.cq[1:]
			mc.cmdLast = p.last
			err = mc.clientPacket(p.seq, p.payload, p.ts)
		} else {
			p := mc.sq[0]
			mc.sq = mc.sq[1:]
			err = mc.serverPacket(p.seq, p.payload, p.ts)
		}
		if err != nil {
			return err
		}
	}
	mc.cq, mc.sq = nil, nil
	return nil
}

func (mc *mysqlConn) feed(toServer bool, b []byte, seen time.Time) error {
	if mc.skip != "" || len(b) == 0 {
		return nil
	}
	fr, starts, q := &mc.out, mc.startsResponse, &mc.sq
	if toServer {
		fr, starts, q = &mc.in, startsCommand, &mc.cq
	}
	wasLost := fr.lost
	fr.push(b, seen, starts, func(seq byte, payload []byte, ts time.Time) {
		*q = append(*q, wirePacket{seq: seq, last: fr.last, payload: append([]byte(nil), payload...), ts: ts})
	})
	if wasLost && fr.lost {
		mc.c.Stats.Packets.skip(skipResync, 1)
	}
	return nil
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
	idle := len(mc.queue) == 0
	q := &pending{cmd: p[0], seq: mc.cmdLast, payload: append([]byte(nil), p...), start: seen}
	mc.queue = append(mc.queue, q)
	if len(mc.queue) > 64 {
		// Responses went missing: give up on the oldest.
		if err := mc.finish(mc.queue[0], seen, false); err != nil {
			return err
		}
		mc.queue = mc.queue[1:]
	}
	if !idle {
		return nil
	}
	// Nothing was waiting: a response the server is still in the middle
	// of answers a command the capture did not see.
	if len(mc.out.buf) > 0 && mc.out.since.Before(seen) {
		mc.out.buf, mc.out.big, mc.out.lost = mc.out.buf[:0], nil, true
		mc.c.Stats.Packets.skip(skipOldResponse, 1)
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
	mc.capsKnown = true
	if mc.caps&capSSL != 0 {
		mc.skip = skipTLS
		mc.c.Stats.Ignored++
		mc.c.Stats.Packets.skip(skipTLS, 1)
		return
	}
	if mc.caps&capCompress != 0 && mc.srvCaps&capCompress != 0 {
		mc.skip = skipCompressed
		mc.c.Stats.Ignored++
		mc.c.Stats.Packets.skip(skipCompressed, 1)
		return
	}
	rest := p[32:]
	_, rest = cstring(rest) // user
	switch {
	case mc.caps&capPluginAuthLenec != 0:
		n, w := lenenc.Read(rest)
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

// cstring reads a NUL-terminated string.
func cstring(b []byte) (string, []byte) {
	for i, c := range b {
		if c == 0 {
			return string(b[:i]), b[i+1:]
		}
	}
	return string(b), nil
}
