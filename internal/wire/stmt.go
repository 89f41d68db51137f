package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/shakedown/shakedown/internal/wire/lenenc"
)

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

// QueryArgs runs query as text with args interpolated as Conn.Interpolate
// does, straight into the command buffer: no copy of the statement and no
// allocation.
func (c *Conn) QueryArgs(query string, args []any) (Result, error) {
	if c.dead != nil {
		return Result{}, c.dead
	}
	if c.noInterp != "" && len(args) > 0 {
		return Result{}, c.errNoInterp()
	}
	b, err := interpolate(c.startCommand(comQuery), query, args, c.status&statusNoBackslashEscapes != 0, c.loc)
	if err != nil {
		return Result{}, err
	}
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
	if p[0] == 0x00 {
		_, _, c.status = okPacket(p)
	}
	return nil
}

// ResetConnection sends COM_RESET_CONNECTION: the server ends the
// session's transaction and drops its variables, temporary tables, locks
// and prepared statements (their Stmts must not be used again), keeping
// the user and the default database.
func (c *Conn) ResetConnection() error {
	if c.dead != nil {
		return c.dead
	}
	if err := c.writePacket(c.startCommand(ComResetConnection)); err != nil {
		return err
	}
	return c.readOK("COM_RESET_CONNECTION")
}

// readOK reads the reply to a command that answers OK or ERR (named by
// command, for the error of any other reply) and keeps its status.
func (c *Conn) readOK(command string) error {
	p, err := c.readPacket()
	if err != nil {
		return err
	}
	if p[0] == 0xff {
		return serverError(p)
	}
	if p[0] != 0x00 {
		return c.fail(errors.New("wire: malformed reply to " + command))
	}
	_, _, c.status = okPacket(p)
	return nil
}

// Stmt is a server-side prepared statement.
type Stmt struct {
	c       *Conn
	id      uint32
	nparams int
	// cols are the result's columns, kept for servers that send them only
	// once (MariaDB's metadata cache).
	cols []Column
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
	if p[0] != 0x00 || len(p) < 9 {
		return nil, c.fail(errors.New("wire: malformed prepare reply"))
	}
	st := &Stmt{c: c, id: binary.LittleEndian.Uint32(p[1:])}
	ncols := int(binary.LittleEndian.Uint16(p[5:]))
	st.nparams = int(binary.LittleEndian.Uint16(p[7:]))
	for k, n := range []int{st.nparams, ncols} {
		if n == 0 {
			continue
		}
		for range n {
			p, err := c.readPacket()
			if err != nil {
				return nil, err
			}
			if k == 1 && c.ext&extCapCacheMetadata != 0 {
				col, err := parseColumn(p)
				if err != nil {
					return nil, c.fail(err)
				}
				st.cols = append(st.cols, col)
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
	typeTiny     = 0x01
	typeShort    = 0x02
	typeLong     = 0x03
	typeFloat    = 0x04
	typeDouble   = 0x05
	typeNull     = 0x06
	typeLongLong = 0x08
	typeDatetime = 0x0c
	typeString   = 0xfe
	unsignedFlag = 0x80
)

// Exec runs the statement with args and discards any rows. An argument is
// nil, a typed nil pointer or a nil []byte (NULL), bool, any integer type,
// float32, float64, string, []byte, time.Time (a DATETIME with
// microseconds, in the configuration's Loc, UTC by default), a
// driver.Valuer (sql.NullInt64 and its kin) or a pointer to any of these.
func (s *Stmt) Exec(args ...any) (Result, error) {
	c := s.c
	if c.dead != nil {
		return Result{}, c.dead
	}
	b, err := s.execPacket(args)
	if err != nil {
		return Result{}, err
	}
	c.wbuf = b[:0]
	if err := c.writePacket(b); err != nil {
		return Result{}, err
	}
	return c.readResult(true)
}

// execPacket builds the COM_STMT_EXECUTE packet for args.
func (s *Stmt) execPacket(args []any) ([]byte, error) {
	c := s.c
	if len(args) != s.nparams {
		return nil, fmt.Errorf("wire: statement takes %d arguments, got %d", s.nparams, len(args))
	}
	b := c.startCommand(comStmtExecute)
	b = binary.LittleEndian.AppendUint32(b, s.id)
	b = append(b, 0, 1, 0, 0, 0) // no cursor, iteration count 1
	if len(args) > 0 {
		nullAt := len(b)
		for range (len(args) + 7) / 8 {
			b = append(b, 0)
		}
		b = append(b, 1) // types follow
		typesAt := len(b)
		for range args {
			b = append(b, 0, 0)
		}
		for i, a := range args {
			var t, flag byte
			var err error
			b, t, flag, err = c.appendParam(b, a)
			if err != nil {
				return nil, err
			}
			if t == typeNull {
				b[nullAt+i/8] |= 1 << (i % 8)
			}
			b[typesAt+2*i], b[typesAt+2*i+1] = t, flag
		}
	}
	return b, nil
}

// appendParam appends a's value in the binary protocol and returns its
// type and flag.
func (c *Conn) appendParam(b []byte, a any) ([]byte, byte, byte, error) {
	for range 2 {
		switch v := a.(type) {
		case nil:
			return b, typeNull, 0, nil
		case int:
			return binary.LittleEndian.AppendUint64(b, uint64(v)), typeLongLong, 0, nil
		case int64:
			return binary.LittleEndian.AppendUint64(b, uint64(v)), typeLongLong, 0, nil
		case string:
			return append(lenenc.Append(b, uint64(len(v))), v...), typeString, 0, nil
		case []byte:
			if v == nil {
				return b, typeNull, 0, nil
			}
			return append(lenenc.Append(b, uint64(len(v))), v...), typeString, 0, nil
		case float64:
			return binary.LittleEndian.AppendUint64(b, math.Float64bits(v)), typeDouble, 0, nil
		case uint64:
			return binary.LittleEndian.AppendUint64(b, v), typeLongLong, unsignedFlag, nil
		case int32:
			return binary.LittleEndian.AppendUint32(b, uint32(v)), typeLong, 0, nil
		case uint32:
			return binary.LittleEndian.AppendUint32(b, v), typeLong, unsignedFlag, nil
		case uint:
			return binary.LittleEndian.AppendUint64(b, uint64(v)), typeLongLong, unsignedFlag, nil
		case int16:
			return binary.LittleEndian.AppendUint16(b, uint16(v)), typeShort, 0, nil
		case uint16:
			return binary.LittleEndian.AppendUint16(b, v), typeShort, unsignedFlag, nil
		case int8:
			return append(b, byte(v)), typeTiny, 0, nil
		case uint8:
			return append(b, v), typeTiny, unsignedFlag, nil
		case bool:
			var x byte
			if v {
				x = 1
			}
			return append(b, x), typeTiny, 0, nil
		case float32:
			return binary.LittleEndian.AppendUint32(b, math.Float32bits(v)), typeFloat, 0, nil
		case time.Time:
			t, err := datetime(v, c.loc)
			if err != nil {
				return b, 0, 0, err
			}
			return appendDatetime(b, t), typeDatetime, 0, nil
		}
		var err error
		if a, err = toBase(a); err != nil {
			return b, 0, 0, err
		}
	}
	return b, 0, 0, fmt.Errorf("wire: unsupported argument type %T", a)
}

// appendDatetime appends t as the binary protocol's DATETIME: a length,
// then as many fields as are not zero (year month day, time, microseconds).
func appendDatetime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, 0)
	}
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	us := t.Nanosecond() / 1000
	switch {
	case us != 0:
		b = append(b, 11)
	case h != 0 || mi != 0 || s != 0:
		b = append(b, 7)
	default:
		b = append(b, 4)
	}
	n := b[len(b)-1]
	b = binary.LittleEndian.AppendUint16(b, uint16(y))
	b = append(b, byte(mo), byte(d))
	if n >= 7 {
		b = append(b, byte(h), byte(mi), byte(s))
	}
	if n == 11 {
		b = binary.LittleEndian.AppendUint32(b, uint32(us))
	}
	return b
}

// Close releases the statement on the server (no reply is sent).
func (s *Stmt) Close() error {
	c := s.c
	if c.dead != nil || c.s.interrupted.Load() {
		return nil
	}
	b := c.startCommand(comStmtClose)
	b = binary.LittleEndian.AppendUint32(b, s.id)
	c.wbuf = b[:0]
	return c.writePacket(b)
}

// SendExecBound sends the statement's execution with parameters already
// in the binary protocol, as another client's COM_STMT_EXECUTE carried
// them (a proxy's): nulls is the NULL bitmap, types the parameters' types
// (two bytes each), values their values. It sends them as a first
// execution (types bound, no cursor) and does not wait for the reply,
// which ReadReply then reads. The caller vouches that the values are as
// long as their types say; the server refuses them otherwise.
func (s *Stmt) SendExecBound(nulls, types, values []byte) error {
	c := s.c
	if c.dead != nil {
		return c.dead
	}
	if len(types) != 2*s.nparams || len(nulls) != (s.nparams+7)/8 {
		return fmt.Errorf("wire: statement takes %d parameters, got %d types and a NULL bitmap of %d bytes", s.nparams, len(types)/2, len(nulls))
	}
	b := c.startCommand(comStmtExecute)
	b = binary.LittleEndian.AppendUint32(b, s.id)
	b = append(b, 0, 1, 0, 0, 0) // no cursor, iteration count 1
	if s.nparams > 0 {
		b = append(b, nulls...)
		b = append(b, 1) // types follow
		b = append(b, types...)
		b = append(b, values...)
	}
	if cap(b) <= 64<<10 {
		c.wbuf = b[:0]
	}
	c.pending, c.pendingStmt = comStmtExecute, s
	return c.writePacket(b)
}

// Reset sends COM_STMT_RESET (it drops the long data sent for the
// statement and closes its cursor) and reads the server's OK or ERR.
func (s *Stmt) Reset() error {
	c := s.c
	if c.dead != nil {
		return c.dead
	}
	b := c.startCommand(comStmtReset)
	b = binary.LittleEndian.AppendUint32(b, s.id)
	c.wbuf = b[:0]
	if err := c.writePacket(b); err != nil {
		return err
	}
	return c.readOK("COM_STMT_RESET")
}
