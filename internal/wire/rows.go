package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/shakedown/shakedown/internal/wire/lenenc"
)

// Column is a result column as the server describes it.
type Column struct {
	Name     string
	Type     byte // the protocol's field type
	Flags    uint16
	Charset  uint16
	Decimals byte
}

// Field types and flags of column definitions.
const (
	typeDecimal    = 0x00
	typeTimestamp  = 0x07
	typeInt24      = 0x09
	typeDate       = 0x0a
	typeTime       = 0x0b
	typeYear       = 0x0d
	typeNewDate    = 0x0e
	typeVarchar    = 0x0f
	typeBit        = 0x10
	typeJSON       = 0xf5
	typeNewDecimal = 0xf6
	typeEnum       = 0xf7
	typeSet        = 0xf8
	typeTinyBlob   = 0xf9
	typeMediumBlob = 0xfa
	typeLongBlob   = 0xfb
	typeBlob       = 0xfc
	typeVarString  = 0xfd
	typeGeometry   = 0xff

	flagUnsigned = 0x0020
	flagEnum     = 0x0100
	flagSet      = 0x0800

	charsetBinary = 63
)

// TypeName is the column's SQL type as far as the protocol tells it:
// INT, BIGINT UNSIGNED, VARCHAR, VARBINARY, TEXT, BLOB, DECIMAL, ...
func (c Column) TypeName() string {
	bin := c.Charset == charsetBinary
	pick := func(text, binary string) string {
		if bin {
			return binary
		}
		return text
	}
	var n string
	switch c.Type {
	case typeTiny:
		n = "TINYINT"
	case typeShort:
		n = "SMALLINT"
	case typeInt24:
		n = "MEDIUMINT"
	case typeLong:
		n = "INT"
	case typeLongLong:
		n = "BIGINT"
	case typeFloat:
		n = "FLOAT"
	case typeDouble:
		n = "DOUBLE"
	case typeDecimal, typeNewDecimal:
		n = "DECIMAL"
	case typeNull:
		return "NULL"
	case typeTimestamp:
		return "TIMESTAMP"
	case typeDate, typeNewDate:
		return "DATE"
	case typeTime:
		return "TIME"
	case typeDatetime:
		return "DATETIME"
	case typeYear:
		return "YEAR"
	case typeBit:
		return "BIT"
	case typeJSON:
		return "JSON"
	case typeEnum:
		return "ENUM"
	case typeSet:
		return "SET"
	case typeTinyBlob:
		return pick("TINYTEXT", "TINYBLOB")
	case typeMediumBlob:
		return pick("MEDIUMTEXT", "MEDIUMBLOB")
	case typeLongBlob:
		return pick("LONGTEXT", "LONGBLOB")
	case typeBlob:
		return pick("TEXT", "BLOB")
	case typeVarchar, typeVarString:
		return pick("VARCHAR", "VARBINARY")
	case typeString:
		switch {
		case c.Flags&flagEnum != 0:
			return "ENUM"
		case c.Flags&flagSet != 0:
			return "SET"
		}
		return pick("CHAR", "BINARY")
	case typeGeometry:
		return "GEOMETRY"
	default:
		return "TYPE" + strconv.Itoa(int(c.Type))
	}
	if c.Flags&flagUnsigned != 0 {
		n += " UNSIGNED"
	}
	return n
}

// parseColumn reads a column definition (Protocol::ColumnDefinition41).
func parseColumn(p []byte) (Column, error) {
	var c Column
	for i := range 6 { // catalog, schema, table, org_table, name, org_name
		n, w := lenenc.Read(p)
		if w == 0 || p[0] == 0xfb || uint64(len(p)-w) < n {
			return c, errMalformed
		}
		if i == 4 {
			c.Name = string(p[w : w+int(n)])
		}
		p = p[w+int(n):]
	}
	// A length (0x0c), then charset 2, column length 4, type 1, flags 2,
	// decimals 1.
	if len(p) < 11 {
		return c, errMalformed
	}
	c.Charset = binary.LittleEndian.Uint16(p[1:])
	c.Type = p[7]
	c.Flags = binary.LittleEndian.Uint16(p[8:])
	c.Decimals = p[10]
	return c, nil
}

// RowReader takes result sets as they are read.
type RowReader interface {
	// Columns starts a result set. cols is valid until the next call.
	Columns(cols []Column)
	// Row takes one row: values[i] is nil for NULL, else the value as
	// text. Rows of prepared statements, which come in binary, are turned
	// into text (integers in decimal, temporal values as
	// 'YYYY-MM-DD hh:mm:ss.ffffff', floats in the shortest form that reads
	// back the same), so that two servers' rows compare alike whatever
	// their widths. values and their bytes are valid only during the call.
	Row(values [][]byte)
}

// SendQuery sends sql as text without waiting for the reply, which
// ReadReply then reads: a caller may send to several connections before
// reading any, so that the servers work at the same time.
func (c *Conn) SendQuery(sql string) error {
	if c.dead != nil {
		return c.dead
	}
	b := c.startCommand(comQuery)
	b = append(b, sql...)
	c.wbuf = b[:0]
	c.pending, c.pendingStmt = comQuery, nil
	return c.writePacket(b)
}

// SendExec sends the statement's execution with args without waiting for
// the reply, which ReadReply then reads.
func (s *Stmt) SendExec(args ...any) error {
	c := s.c
	if c.dead != nil {
		return c.dead
	}
	b, err := s.execPacket(args)
	if err != nil {
		return err
	}
	c.wbuf = b[:0]
	c.pending, c.pendingStmt = comStmtExecute, s
	return c.writePacket(b)
}

// NumParams is the number of the statement's placeholders.
func (s *Stmt) NumParams() int { return s.nparams }

// ReadReply reads the reply to what SendQuery or SendExec sent, handing
// every result set's columns and rows to r.
func (c *Conn) ReadReply(r RowReader) (Result, error) {
	var res Result
	if c.pending == 0 {
		return res, errors.New("wire: ReadReply without a command sent")
	}
	st, binaryRows := c.pendingStmt, c.pending == comStmtExecute
	c.pending, c.pendingStmt = 0, nil
	for {
		p, err := c.readPacket()
		if err != nil {
			return res, err
		}
		switch p[0] {
		case 0x00:
			c.ok(p, &res)
		case 0xff:
			return res, serverError(p)
		case 0xfb:
			return res, c.fail(errLocalFile)
		default:
			if err := c.readRowsInto(p, st, binaryRows, &res, r); err != nil {
				return res, err
			}
		}
		if c.status&statusMoreResults == 0 {
			return res, nil
		}
	}
}

// ok takes an OK packet into res.
func (c *Conn) ok(p []byte, res *Result) {
	aff, id, st := okPacket(p)
	res.Affected += int64(aff)
	res.InsertID = int64(id)
	c.status = st
	res.Warnings = okWarnings(p)
}

// okWarnings reads the warning count of an OK packet: after the header,
// two length-encoded integers and the status flags.
func okWarnings(p []byte) int {
	_, n1 := lenenc.Read(p[1:])
	if n1 == 0 {
		return 0
	}
	_, n2 := lenenc.Read(p[1+n1:])
	o := 1 + n1 + n2 + 2
	if n2 == 0 || len(p) < o+2 {
		return 0
	}
	return int(binary.LittleEndian.Uint16(p[o:]))
}

// readRowsInto reads one result set into r; first is its column-count
// packet and st, for an execution, the statement (whose columns stand in
// for metadata the server leaves out).
func (c *Conn) readRowsInto(first []byte, st *Stmt, binaryRows bool, res *Result, r RowReader) error {
	ncols, n := lenenc.Read(first)
	if n == 0 || ncols == 0 || ncols > 4096 {
		return c.fail(errMalformed)
	}
	metadata := true
	if binaryRows && c.ext&extCapCacheMetadata != 0 && len(first) > n {
		metadata = first[n] != 0
	}
	cols := c.cols[:0]
	if metadata {
		for range ncols {
			p, err := c.readPacket()
			if err != nil {
				return err
			}
			col, err := parseColumn(p)
			if err != nil {
				return c.fail(err)
			}
			cols = append(cols, col)
		}
		if c.caps&capDeprecateEOF == 0 {
			if _, err := c.readPacket(); err != nil {
				return err
			}
		}
		if st != nil {
			st.cols = append(st.cols[:0], cols...)
		}
	} else {
		if st == nil || len(st.cols) != int(ncols) {
			return c.fail(errors.New("wire: the server left out the columns of a statement it did not describe"))
		}
		cols = append(cols, st.cols...)
	}
	c.cols = cols
	r.Columns(cols)
	res.HasRows = true
	for {
		p, err := c.readPacket()
		if err != nil {
			return err
		}
		if (p[0] == 0xff || p[0] == 0xfe) && len(p) < maxPayload {
			return c.endOfRowsWarnings(p, res)
		}
		var vals [][]byte
		if binaryRows {
			vals, err = c.binaryValues(p, cols)
		} else {
			vals, err = c.textValues(p, len(cols))
		}
		if err != nil {
			return c.fail(err)
		}
		r.Row(vals)
		res.Rows++
	}
}

// textValues splits a text row into its values.
func (c *Conn) textValues(p []byte, ncols int) ([][]byte, error) {
	vals := c.vals[:0]
	for range ncols {
		if len(p) == 0 {
			return nil, errMalformed
		}
		if p[0] == 0xfb {
			vals = append(vals, nil)
			p = p[1:]
			continue
		}
		n, w := lenenc.Read(p)
		if w == 0 || uint64(len(p)-w) < n {
			return nil, errMalformed
		}
		vals = append(vals, p[w:w+int(n):w+int(n)])
		p = p[w+int(n):]
	}
	if len(p) != 0 {
		return nil, errMalformed
	}
	c.vals = vals
	return vals, nil
}

// binaryValues decodes a binary row (a 0x00 header, a NULL bitmap offset
// by 2 bits, then the values that are not NULL) into text in c.scratch.
func (c *Conn) binaryValues(p []byte, cols []Column) ([][]byte, error) {
	nb := (len(cols) + 9) / 8
	if len(p) < 1+nb || p[0] != 0x00 {
		return nil, errMalformed
	}
	nulls, p := p[1:1+nb], p[1+nb:]
	// Values point into scratch, which must not move once they do: size
	// it first (text is at most about 3x a value's binary width, plus 40
	// for temporal and numeric values).
	if need := 3*len(p) + 40*len(cols); cap(c.scratch) < need {
		c.scratch = make([]byte, 0, need)
	}
	buf := c.scratch[:0]
	vals := c.vals[:0]
	for i, col := range cols {
		if nulls[(i+2)/8]&(1<<((i+2)%8)) != 0 {
			vals = append(vals, nil)
			continue
		}
		start := len(buf)
		var err error
		buf, p, err = appendBinaryValue(buf, p, col)
		if err != nil {
			return nil, err
		}
		vals = append(vals, buf[start:len(buf):len(buf)])
	}
	if len(p) != 0 {
		return nil, errMalformed
	}
	c.vals, c.scratch = vals, buf
	return vals, nil
}

// appendBinaryValue appends the text of the binary value at the front of
// p and returns the rest of p.
func appendBinaryValue(b, p []byte, col Column) ([]byte, []byte, error) {
	unsigned := col.Flags&flagUnsigned != 0
	fixed := func(n int) ([]byte, error) {
		if len(p) < n {
			return nil, errMalformed
		}
		return p[:n], nil
	}
	switch col.Type {
	case typeTiny:
		v, err := fixed(1)
		if err != nil {
			return b, p, err
		}
		if unsigned {
			return strconv.AppendUint(b, uint64(v[0]), 10), p[1:], nil
		}
		return strconv.AppendInt(b, int64(int8(v[0])), 10), p[1:], nil
	case typeShort, typeYear:
		v, err := fixed(2)
		if err != nil {
			return b, p, err
		}
		x := binary.LittleEndian.Uint16(v)
		if col.Type == typeYear {
			return fmt.Appendf(b, "%04d", x), p[2:], nil
		}
		if unsigned {
			return strconv.AppendUint(b, uint64(x), 10), p[2:], nil
		}
		return strconv.AppendInt(b, int64(int16(x)), 10), p[2:], nil
	case typeLong, typeInt24:
		v, err := fixed(4)
		if err != nil {
			return b, p, err
		}
		x := binary.LittleEndian.Uint32(v)
		if unsigned {
			return strconv.AppendUint(b, uint64(x), 10), p[4:], nil
		}
		return strconv.AppendInt(b, int64(int32(x)), 10), p[4:], nil
	case typeLongLong:
		v, err := fixed(8)
		if err != nil {
			return b, p, err
		}
		x := binary.LittleEndian.Uint64(v)
		if unsigned {
			return strconv.AppendUint(b, x, 10), p[8:], nil
		}
		return strconv.AppendInt(b, int64(x), 10), p[8:], nil
	case typeFloat:
		v, err := fixed(4)
		if err != nil {
			return b, p, err
		}
		return strconv.AppendFloat(b, float64(math.Float32frombits(binary.LittleEndian.Uint32(v))), 'g', -1, 32), p[4:], nil
	case typeDouble:
		v, err := fixed(8)
		if err != nil {
			return b, p, err
		}
		return strconv.AppendFloat(b, math.Float64frombits(binary.LittleEndian.Uint64(v)), 'g', -1, 64), p[8:], nil
	case typeDate, typeNewDate, typeDatetime, typeTimestamp:
		return appendBinaryDatetime(b, p, col)
	case typeTime:
		return appendBinaryTime(b, p, col)
	}
	// Everything else is a length-encoded string: DECIMAL, the string and
	// blob types, BIT, ENUM, SET, JSON, GEOMETRY.
	n, w := lenenc.Read(p)
	if w == 0 || p[0] == 0xfb || uint64(len(p)-w) < n {
		return b, p, errMalformed
	}
	return append(b, p[w:w+int(n)]...), p[w+int(n):], nil
}

// appendFraction appends microseconds as the column's decimals ask, with
// all six digits when the column does not say (or says 0, or fewer
// digits than the value needs: a server that claims no fraction still
// has its value kept whole).
func appendFraction(b []byte, us uint32, decimals byte) []byte {
	digits := int(decimals)
	if digits < 1 || digits > 6 {
		if us == 0 {
			return b
		}
		digits = 6
	}
	if us%pow10[6-digits] != 0 {
		digits = 6
	}
	s := fmt.Sprintf("%06d", us)
	return append(append(b, '.'), s[:digits]...)
}

var pow10 = [...]uint32{1, 10, 100, 1000, 10000, 100000, 1000000}

// appendBinaryDatetime: a length (0, 4, 7 or 11), then year 2, month,
// day, hour, minute, second and microseconds 4, as many as the length
// holds.
func appendBinaryDatetime(b, p []byte, col Column) ([]byte, []byte, error) {
	if len(p) == 0 {
		return b, p, errMalformed
	}
	n := int(p[0])
	if (n != 0 && n != 4 && n != 7 && n != 11) || len(p) < 1+n {
		return b, p, errMalformed
	}
	v := p[1 : 1+n]
	var y uint16
	var mo, d, h, mi, s byte
	var us uint32
	if n >= 4 {
		y, mo, d = binary.LittleEndian.Uint16(v), v[2], v[3]
	}
	if n >= 7 {
		h, mi, s = v[4], v[5], v[6]
	}
	if n == 11 {
		us = binary.LittleEndian.Uint32(v[7:])
	}
	b = fmt.Appendf(b, "%04d-%02d-%02d", y, mo, d)
	if col.Type == typeDate || col.Type == typeNewDate {
		return b, p[1+n:], nil
	}
	b = fmt.Appendf(b, " %02d:%02d:%02d", h, mi, s)
	return appendFraction(b, us, col.Decimals), p[1+n:], nil
}

// appendBinaryTime: a length (0, 8 or 12), then the sign, days 4, hour,
// minute, second and microseconds 4.
func appendBinaryTime(b, p []byte, col Column) ([]byte, []byte, error) {
	if len(p) == 0 {
		return b, p, errMalformed
	}
	n := int(p[0])
	if (n != 0 && n != 8 && n != 12) || len(p) < 1+n {
		return b, p, errMalformed
	}
	v := p[1 : 1+n]
	var neg bool
	var hours uint64
	var mi, s byte
	var us uint32
	if n >= 8 {
		neg = v[0] == 1
		hours = uint64(binary.LittleEndian.Uint32(v[1:]))*24 + uint64(v[5])
		mi, s = v[6], v[7]
	}
	if n == 12 {
		us = binary.LittleEndian.Uint32(v[8:])
	}
	if neg {
		b = append(b, '-')
	}
	b = fmt.Appendf(b, "%02d:%02d:%02d", hours, mi, s)
	return appendFraction(b, us, col.Decimals), p[1+n:], nil
}
