// Package wire is a lean MySQL client protocol for the per-query hot path:
// COM_QUERY, COM_STMT_PREPARE/EXECUTE/CLOSE and reading (and discarding)
// result sets, on a socket used with blocking system calls. The connection
// phase (handshake, authentication plugins, session set-up) is left to
// go-sql-driver/mysql, which dials through this package and then hands the
// socket over.
//
// A Conn is used by one goroutine. Interrupt may be called from any.
package wire

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"

	"github.com/go-sql-driver/mysql"
)

const (
	comQuit        = 0x01
	comQuery       = 0x03
	comPing        = 0x0e
	comStmtPrepare = 0x16
	comStmtExecute = 0x17
	comStmtClose   = 0x19

	capClientMySQL      = 1
	capDeprecateEOF     = 1 << 24
	extCapCacheMetadata = 1 << 4

	statusMoreResults = 0x0008
	maxPayload        = 1<<24 - 1
)

// ErrUnsupported means the connection uses something this package does not
// speak (TLS, compression); use database/sql instead.
var ErrUnsupported = errors.New("wire: connection options not supported by the fast path")

// Conn is one connection.
type Conn struct {
	s    *sock
	dc   driver.Conn // the driver's view, closed by Close
	caps uint32
	ext  uint32
	rbuf []byte
	rpos int
	rend int
	wbuf []byte
	seq  byte
	stop func() bool
	dead error
	pkt  []byte // last packet read when it spanned more than rbuf
}

// Result is what a statement returned.
type Result struct {
	// HasRows is set when the statement returned a result set.
	HasRows bool
	Rows    int64
	// Affected is the number of affected rows (statements without a result set).
	Affected int64
	InsertID int64
}

// Options tune a connection.
type Options struct {
	// Blocking selects blocking system calls instead of Go's poller; see
	// the sock type. Use it only with a few threads per core.
	Blocking bool
}

// Dial connects with cfg (TLS and compression are refused with
// ErrUnsupported). Cancelling ctx after Dial returns interrupts whatever the
// connection is waiting for; the Conn is then broken.
func Dial(ctx context.Context, cfg *mysql.Config, opts Options) (*Conn, error) {
	if cfg.TLS != nil || cfg.TLSConfig != "" && cfg.TLSConfig != "false" {
		return nil, ErrUnsupported
	}
	cfg = cfg.Clone()
	var s *sock
	cfg.DialFunc = func(ctx context.Context, network, addr string) (netConn net.Conn, err error) {
		s, err = dialSock(ctx, network, addr, opts.Blocking)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	c := &Conn{s: s, dc: dc, rbuf: make([]byte, 16<<10), wbuf: make([]byte, 0, 4<<10)}
	if err := c.learnCaps(); err != nil {
		dc.Close()
		return nil, err
	}
	s.stopSniffing()
	c.stop = context.AfterFunc(ctx, s.interrupt)
	return c, nil
}

// learnCaps reads the negotiated capabilities from the handshake response the
// driver sent: 4 bytes of flags, then (MariaDB, when CLIENT_MYSQL is off) the
// extended flags at payload offset 28.
func (c *Conn) learnCaps() error {
	out := c.s.sniffOut
	if len(out) < 4+32 {
		return errors.New("wire: handshake response not seen")
	}
	p := out[4:]
	c.caps = binary.LittleEndian.Uint32(p)
	if c.caps&capClientMySQL == 0 {
		c.ext = binary.LittleEndian.Uint32(p[28:])
	}
	if c.caps&(1<<11) != 0 || c.caps&(1<<5) != 0 { // CLIENT_SSL, CLIENT_COMPRESS
		return ErrUnsupported
	}
	return nil
}

// Close ends the session (COM_QUIT) and closes the socket.
func (c *Conn) Close() error {
	if c.stop != nil {
		c.stop()
	}
	// The driver sends COM_QUIT, stops its watcher and closes the socket.
	err := c.dc.Close()
	c.s.Close()
	if c.dead != nil {
		return nil
	}
	return err
}

// Broken reports whether the connection has failed and must be dropped.
func (c *Conn) Broken() bool { return c.dead != nil }

func (c *Conn) fail(err error) error {
	if c.dead == nil {
		c.dead = err
	}
	return err
}

// ---- packets ----

// fill reads more bytes into rbuf, keeping unread bytes.
func (c *Conn) fill(need int) error {
	if c.rpos > 0 && c.rpos == c.rend {
		c.rpos, c.rend = 0, 0
	}
	if need > len(c.rbuf)-c.rpos {
		nb := make([]byte, max(need, 2*len(c.rbuf)))
		c.rend = copy(nb, c.rbuf[c.rpos:c.rend])
		c.rpos = 0
		c.rbuf = nb
	} else if need > len(c.rbuf)-c.rpos-(c.rend-c.rpos) && c.rpos > 0 {
		c.rend = copy(c.rbuf, c.rbuf[c.rpos:c.rend])
		c.rpos = 0
	}
	for c.rend-c.rpos < need {
		n, err := c.s.rawRead(c.rbuf[c.rend:])
		if err != nil {
			return c.fail(fmt.Errorf("read from server: %w", err))
		}
		c.rend += n
	}
	return nil
}

// readPacket returns the next payload. It stays valid until the next read.
func (c *Conn) readPacket() ([]byte, error) {
	if c.dead != nil {
		return nil, c.dead
	}
	if err := c.fill(4); err != nil {
		return nil, err
	}
	h := c.rbuf[c.rpos:]
	n := int(uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16)
	c.seq = h[3] + 1
	if err := c.fill(4 + n); err != nil {
		return nil, err
	}
	p := c.rbuf[c.rpos+4 : c.rpos+4+n]
	c.rpos += 4 + n
	if n < maxPayload {
		return p, nil
	}
	// A payload of 16 MiB or more continues in the next packets.
	c.pkt = append(c.pkt[:0], p...)
	for {
		more, err := c.readPacket()
		if err != nil {
			return nil, err
		}
		c.pkt = append(c.pkt, more...)
		if len(more) < maxPayload {
			return c.pkt, nil
		}
	}
}

// writePacket sends buf, whose first 4 bytes are room for the header.
func (c *Conn) writePacket(buf []byte) error {
	n := len(buf) - 4
	if n >= maxPayload {
		return fmt.Errorf("wire: statement of %d bytes is larger than one packet", n)
	}
	buf[0], buf[1], buf[2], buf[3] = byte(n), byte(n>>8), byte(n>>16), c.seq
	c.seq++
	if err := c.s.rawWrite(buf); err != nil {
		return c.fail(fmt.Errorf("write to server: %w", err))
	}
	return nil
}

func (c *Conn) startCommand(cmd byte) []byte {
	c.seq = 0
	// Bytes left over from an earlier reply would be a protocol bug; drop them.
	c.rpos, c.rend = 0, 0
	return append(c.wbuf[:0], 0, 0, 0, 0, cmd)
}

func serverError(p []byte) error {
	e := &mysql.MySQLError{}
	if len(p) >= 3 {
		e.Number = binary.LittleEndian.Uint16(p[1:3])
	}
	rest := p[3:]
	if len(rest) > 0 && rest[0] == '#' && len(rest) >= 6 {
		copy(e.SQLState[:], rest[1:6])
		rest = rest[6:]
	}
	e.Message = string(rest)
	return e
}

func lenenc(p []byte) (uint64, int) {
	if len(p) == 0 {
		return 0, 0
	}
	switch p[0] {
	case 0xfb:
		return 0, 1
	case 0xfc:
		if len(p) < 3 {
			return 0, 0
		}
		return uint64(p[1]) | uint64(p[2])<<8, 3
	case 0xfd:
		if len(p) < 4 {
			return 0, 0
		}
		return uint64(p[1]) | uint64(p[2])<<8 | uint64(p[3])<<16, 4
	case 0xfe:
		if len(p) < 9 {
			return 0, 0
		}
		return binary.LittleEndian.Uint64(p[1:]), 9
	}
	return uint64(p[0]), 1
}

func appendLenenc(b []byte, n uint64) []byte {
	switch {
	case n < 251:
		return append(b, byte(n))
	case n < 1<<16:
		return append(b, 0xfc, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(b, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	}
	return append(b, 0xfe, byte(n), byte(n>>8), byte(n>>16), byte(n>>24), byte(n>>32), byte(n>>40), byte(n>>48), byte(n>>56))
}

// okPacket parses an OK (or a 0xfe-headed end-of-rows OK) packet.
func okPacket(p []byte) (affected, insertID uint64, status uint16) {
	p = p[1:]
	affected, n := lenenc(p)
	p = p[n:]
	insertID, n = lenenc(p)
	p = p[n:]
	if len(p) >= 2 {
		status = binary.LittleEndian.Uint16(p)
	}
	return
}

// readResult reads a complete reply to COM_QUERY or COM_STMT_EXECUTE,
// discarding any rows. binary is set for COM_STMT_EXECUTE.
func (c *Conn) readResult(binaryRows bool) (Result, error) {
	var res Result
	var firstErr error
	for {
		p, err := c.readPacket()
		if err != nil {
			return res, err
		}
		var status uint16
		switch p[0] {
		case 0x00:
			aff, id, st := okPacket(p)
			res.Affected += int64(aff)
			res.InsertID = int64(id)
			status = st
		case 0xff:
			return res, serverError(p)
		case 0xfb:
			return res, c.fail(errors.New("wire: LOAD DATA LOCAL is not supported on this path"))
		default:
			st, err := c.readRows(p, binaryRows, &res)
			if err != nil {
				if _, ok := err.(*mysql.MySQLError); ok && firstErr == nil {
					firstErr = err
					continue
				}
				return res, err
			}
			status = st
		}
		if status&statusMoreResults == 0 {
			return res, firstErr
		}
	}
}

// readRows reads the columns and rows of one result set; first is the
// column-count packet. It returns the status flags of the end packet.
func (c *Conn) readRows(first []byte, binaryRows bool, res *Result) (uint16, error) {
	ncols, n := lenenc(first)
	if n == 0 {
		return 0, c.fail(errors.New("wire: malformed column count"))
	}
	metadata := true
	if binaryRows && c.ext&extCapCacheMetadata != 0 && len(first) > n {
		metadata = first[n] != 0
	}
	if metadata {
		for i := uint64(0); i < ncols; i++ {
			if _, err := c.readPacket(); err != nil {
				return 0, err
			}
		}
		if c.caps&capDeprecateEOF == 0 {
			if _, err := c.readPacket(); err != nil {
				return 0, err
			}
		}
	}
	res.HasRows = true
	for {
		p, err := c.readPacket()
		if err != nil {
			return 0, err
		}
		switch {
		case p[0] == 0xff:
			return 0, serverError(p)
		case p[0] == 0xfe && len(p) < maxPayload:
			if c.caps&capDeprecateEOF != 0 {
				_, _, st := okPacket(p)
				return st, nil
			}
			if len(p) >= 5 {
				return binary.LittleEndian.Uint16(p[3:]), nil
			}
			return 0, nil
		}
		res.Rows++
	}
}

// Query runs sql as text.
func (c *Conn) Query(sql string) (Result, error) {
	if c.dead != nil {
		return Result{}, c.dead
	}
	b := c.startCommand(comQuery)
	b = append(b, sql...)
	c.wbuf = b[:0]
	if err := c.writePacket(b); err != nil {
		return Result{}, err
	}
	return c.readResult(false)
}

// Ping sends COM_PING.
func (c *Conn) Ping() error {
	if c.dead != nil {
		return c.dead
	}
	if err := c.writePacket(c.startCommand(comPing)); err != nil {
		return err
	}
	p, err := c.readPacket()
	if err != nil {
		return err
	}
	if p[0] == 0xff {
		return serverError(p)
	}
	return nil
}

// Stmt is a server-side prepared statement.
type Stmt struct {
	c       *Conn
	id      uint32
	nparams int
}

// Prepare makes a server-side prepared statement.
func (c *Conn) Prepare(sql string) (*Stmt, error) {
	if c.dead != nil {
		return nil, c.dead
	}
	b := c.startCommand(comStmtPrepare)
	b = append(b, sql...)
	c.wbuf = b[:0]
	if err := c.writePacket(b); err != nil {
		return nil, err
	}
	p, err := c.readPacket()
	if err != nil {
		return nil, err
	}
	if p[0] == 0xff {
		return nil, serverError(p)
	}
	if p[0] != 0x00 || len(p) < 12 {
		return nil, c.fail(errors.New("wire: malformed prepare reply"))
	}
	st := &Stmt{c: c, id: binary.LittleEndian.Uint32(p[1:])}
	ncols := int(binary.LittleEndian.Uint16(p[5:]))
	st.nparams = int(binary.LittleEndian.Uint16(p[7:]))
	for _, n := range []int{st.nparams, ncols} {
		if n == 0 {
			continue
		}
		for i := 0; i < n; i++ {
			if _, err := c.readPacket(); err != nil {
				return nil, err
			}
		}
		if c.caps&capDeprecateEOF == 0 {
			if _, err := c.readPacket(); err != nil {
				return nil, err
			}
		}
	}
	return st, nil
}

// Field types used for parameters.
const (
	typeDouble   = 0x05
	typeLongLong = 0x08
	typeNull     = 0x06
	typeString   = 0xfe
	typeBlob     = 0xfc
	unsignedFlag = 0x80
)

// Exec runs the statement with args (int, int64, uint32, uint64, float64,
// string, []byte or nil) and discards any rows.
func (s *Stmt) Exec(args ...any) (Result, error) {
	c := s.c
	if c.dead != nil {
		return Result{}, c.dead
	}
	if len(args) != s.nparams {
		return Result{}, fmt.Errorf("wire: statement takes %d arguments, got %d", s.nparams, len(args))
	}
	b := c.startCommand(comStmtExecute)
	b = binary.LittleEndian.AppendUint32(b, s.id)
	b = append(b, 0, 1, 0, 0, 0) // no cursor, iteration count 1
	if len(args) > 0 {
		nullAt := len(b)
		for i := 0; i < (len(args)+7)/8; i++ {
			b = append(b, 0)
		}
		b = append(b, 1) // types follow
		typesAt := len(b)
		for range args {
			b = append(b, 0, 0)
		}
		for i, a := range args {
			var t byte
			switch v := a.(type) {
			case nil:
				b[nullAt+i/8] |= 1 << (i % 8)
				t = typeNull
			case int:
				t = typeLongLong
				b = binary.LittleEndian.AppendUint64(b, uint64(v))
			case int64:
				t = typeLongLong
				b = binary.LittleEndian.AppendUint64(b, uint64(v))
			case int32:
				t = typeLongLong
				b = binary.LittleEndian.AppendUint64(b, uint64(int64(v)))
			case uint32:
				t = typeLongLong
				b = binary.LittleEndian.AppendUint64(b, uint64(v))
			case uint64:
				t = typeLongLong
				b[typesAt+2*i+1] = unsignedFlag
				b = binary.LittleEndian.AppendUint64(b, v)
			case float64:
				t = typeDouble
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
			case string:
				t = typeString
				b = appendLenenc(b, uint64(len(v)))
				b = append(b, v...)
			case []byte:
				t = typeString
				b = appendLenenc(b, uint64(len(v)))
				b = append(b, v...)
			default:
				return Result{}, fmt.Errorf("wire: unsupported argument type %T", a)
			}
			b[typesAt+2*i] = t
		}
	}
	c.wbuf = b[:0]
	if err := c.writePacket(b); err != nil {
		return Result{}, err
	}
	return c.readResult(true)
}

// Close releases the statement on the server (no reply is sent).
func (s *Stmt) Close() error {
	c := s.c
	if c.dead != nil {
		return nil
	}
	b := c.startCommand(comStmtClose)
	b = binary.LittleEndian.AppendUint32(b, s.id)
	c.wbuf = b[:0]
	return c.writePacket(b)
}
