package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/wire/lenenc"
)

// placeholders counts the placeholders in q with a lexer written apart
// from Interpolate's, one byte at a time, as a second opinion.
func placeholders(q string, noBackslash bool) int {
	const (
		code = iota
		quoted
		block
		line
	)
	state, quote, n := code, byte(0), 0
	for i := 0; i < len(q); i++ {
		ch := q[i]
		switch state {
		case code:
			switch {
			case ch == '\'' || ch == '"' || ch == '`':
				state, quote = quoted, ch
			case ch == '/' && i+1 < len(q) && q[i+1] == '*' && !strings.HasPrefix(q[i+2:], "!") && !strings.HasPrefix(q[i+2:], "M!"):
				state = block
				i++
			case ch == '#':
				state = line
			case ch == '-' && i+1 < len(q) && q[i+1] == '-' && (i+2 == len(q) || q[i+2] <= ' '):
				state = line
			case ch == '?':
				n++
			}
		case quoted:
			switch {
			case ch == '\\' && !noBackslash && quote != '`':
				i++
			case ch == quote && i+1 < len(q) && q[i+1] == quote:
				i++
			case ch == quote:
				state = code
			}
		case block:
			if ch == '*' && i+1 < len(q) && q[i+1] == '/' {
				state = code
				i++
			}
		case line:
			if ch == '\n' {
				state = code
			}
		}
	}
	return n
}

// FuzzInterpolate checks that Interpolate finds the placeholders the
// second lexer finds, and that no string argument, whatever its bytes, can
// end its literal early: the result has no placeholder left, though every
// argument holds a '?'.
func FuzzInterpolate(f *testing.F) {
	for _, s := range []struct {
		q, arg string
		nbe    bool
	}{
		{"SELECT /* why? */ ?", "x", false},
		{"SELECT ? -- what?\n, ?", "it's", false},
		{"SELECT '?', \"?\", `?`, ? # ?", "a\\", false},
		{"SELECT 'a\\'?', ?", "\\'", false},
		{"SELECT 'a\\'?', ?", "\\'", true},
		{"SELECT /*!50000 ? */ ?", "\x00\n\r\x1a\"", false},
		{"SELECT ?--?\n?", "--", true},
		{"INSERT INTO t VALUES (?, ?, '", "'", false},
	} {
		f.Add(s.q, s.arg, s.nbe)
	}
	f.Fuzz(func(t *testing.T, q, arg string, noBackslash bool) {
		n := placeholders(q, noBackslash)
		args := make([]any, n)
		for i := range args {
			args[i] = arg + "?"
		}
		out, err := interpolate(nil, q, args, noBackslash, time.UTC)
		if err != nil {
			t.Fatalf("%q with %d arguments: %v", q, n, err)
		}
		if got := placeholders(string(out), noBackslash); got != 0 {
			t.Fatalf("%q with %q gave %q, which has %d placeholders, want 0", q, arg, out, got)
		}
		if n > 0 {
			if _, err := interpolate(nil, q, args[1:], noBackslash, time.UTC); err == nil {
				t.Fatalf("%q with one argument too few: got nil error", q)
			}
		}
		if _, err := interpolate(nil, q, append(args, 1), noBackslash, time.UTC); err == nil {
			t.Fatalf("%q with one argument too many: got nil error", q)
		}
	})
}

// streamConn is a net.Conn whose reads come from a byte stream and whose
// writes vanish: a server that says exactly the stream, then closes.
type streamConn struct {
	net.Conn // nil: only Read, Write, Close and the deadlines are used
	r        *bytes.Reader
}

func (s streamConn) Read(p []byte) (int, error)       { return s.r.Read(p) }
func (s streamConn) Write(p []byte) (int, error)      { return len(p), nil }
func (s streamConn) Close() error                     { return nil }
func (s streamConn) SetDeadline(time.Time) error      { return nil }
func (s streamConn) SetReadDeadline(time.Time) error  { return nil }
func (s streamConn) SetWriteDeadline(time.Time) error { return nil }

func streamed(reply []byte, caps uint32) *Conn {
	return &Conn{
		s:    &sock{nc: streamConn{r: bytes.NewReader(reply)}},
		rbuf: make([]byte, 16<<10), loc: time.UTC,
		caps: caps, ext: extCapCacheMetadata,
	}
}

// packets frames payloads as packets numbered from seq.
func packets(seq byte, payloads ...[]byte) []byte {
	var b []byte
	for _, p := range payloads {
		b = append(b, byte(len(p)), byte(len(p)>>8), byte(len(p)>>16), seq)
		b = append(b, p...)
		seq++
	}
	return b
}

func column(name string) []byte {
	var p []byte
	for _, f := range []string{"def", "db", "t", "t", name, name} {
		p = append(lenenc.Append(p, uint64(len(f))), f...)
	}
	return append(p, 0x0c, 45, 0, 0, 4, 0, 0, 0xfd, 0, 0, 0, 0, 0)
}

var (
	okPkt     = []byte{0, 1, 0, 2, 0, 0, 0}
	eofOK     = []byte{0xfe, 0, 0, 2, 0, 0, 0}
	errPkt    = append([]byte{0xff, 0xe2, 0x04, '#', '2', '1', '0', '0', '0'}, "Subquery returns more than 1 row"...)
	textRow   = []byte{1, '1', 3, 'a', 'b', 'c'}
	binaryRow = []byte{0, 0, 1, '1', 3, 'a', 'b', 'c'}
)

// FuzzReply feeds the packet reader whatever a server might send in reply
// to each command: it must return (the stream ends, so it cannot wait),
// never panic, and leave the connection broken after any error that is
// not the server's own.
func FuzzReply(f *testing.F) {
	greeting := []byte{10}
	greeting = append(greeting, "10.11.99-MariaDB\x00"...)
	greeting = binary.LittleEndian.AppendUint32(greeting, 7)
	greeting = append(greeting, "abcdefgh\x00"...)
	greeting = append(greeting, 0xfe, 0xf7, 45, 2, 0, 0xff, 0x81, 21, 0, 0, 0, 0, 0, 0, 0x1d, 0, 0, 0)
	greeting = append(greeting, "ijklmnopqrst\x00mysql_native_password\x00"...)
	for _, s := range []struct {
		op    byte
		caps  uint32
		reply []byte
	}{
		{0, capDeprecateEOF, packets(1, okPkt)},
		{0, capDeprecateEOF, packets(1, []byte{2}, column("a"), column("b"), textRow, textRow, eofOK)},
		{0, capDeprecateEOF, packets(1, []byte{2}, column("a"), column("b"), textRow, errPkt)},
		{0, 0, packets(1, []byte{1}, column("a"), []byte{0xfe, 0, 0, 2, 0}, textRow, []byte{0xfe, 0, 0, 2, 0})},
		{0, capDeprecateEOF, packets(1, []byte{1}, column("a"), append([]byte{0xfe, 0, 0, 0x0a, 0}, 0, 0), okPkt)},
		{1, capDeprecateEOF, packets(1, []byte{0, 1, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0}, column("?"), column("a"), column("b"))},
		{2, capDeprecateEOF, packets(1, []byte{2, 1}, column("a"), column("b"), binaryRow, eofOK)},
		{2, capDeprecateEOF, packets(1, []byte{2, 0}, binaryRow, binaryRow, errPkt)},
		{3, capDeprecateEOF, packets(1, okPkt)},
		{4, 0, packets(0, greeting, okPkt)},
		{4, 0, packets(0, greeting, []byte{0xfe, 'c', 'l', 'i', 'e', 'n', 't', '_', 'e', 'd', '2', '5', '5', '1', '9', 0, 1, 2, 3}, okPkt)},
		{4, 0, packets(0, []byte{0xff, 0x10, 0x04, 'T', 'o', 'o', ' ', 'm', 'a', 'n', 'y'})},
	} {
		f.Add(s.op, s.caps, s.reply)
	}
	f.Fuzz(func(t *testing.T, op byte, caps uint32, reply []byte) {
		c := streamed(reply, caps)
		var err error
		switch op % 5 {
		case 0:
			_, err = c.Query("SELECT a, b FROM t")
		case 1:
			_, err = c.Prepare("SELECT a, b FROM t WHERE id = ?")
		case 2:
			_, err = (&Stmt{c: c, id: 1}).Exec()
		case 3:
			err = c.Ping()
		case 4:
			cfg := mysql.NewConfig()
			cfg.User, cfg.Passwd, cfg.DBName = "u", "p", "d"
			st, serr := settingsOf(cfg)
			if serr != nil {
				t.Fatal(serr)
			}
			c.caps = 0
			_ = c.connect(cfg, st, nil)
			return // a failed connection phase closes the socket whatever the error
		}
		var me *mysql.MySQLError
		if err != nil && !errors.As(err, &me) && !c.Broken() {
			t.Fatalf("error %v left the connection usable", err)
		}
	})
}

// typedColumn is a column definition of field type typ with flags.
func typedColumn(name string, typ byte, flags uint16, decimals byte) []byte {
	p := column(name)
	p[len(p)-6] = typ
	p[len(p)-5], p[len(p)-4] = byte(flags), byte(flags>>8)
	p[len(p)-3] = decimals
	return p
}

// FuzzRows feeds ReadReply result sets as text (text set) or as binary
// rows of a prepared statement: it must return, never panic, hand the
// reader only as many values as there are columns, and leave the
// connection broken after any error that is not the server's own.
// fuzzColumns and fuzzBinaryRow are a result set of most field types
// and a binary row of it.
var (
	fuzzColumns = [][]byte{
		typedColumn("t", typeTiny, 0, 0), typedColumn("u", typeLongLong, flagUnsigned, 0),
		typedColumn("f", typeFloat, 0, 31), typedColumn("d", typeDouble, 0, 31),
		typedColumn("dt", typeDatetime, 0, 6), typedColumn("tm", typeTime, 0, 3),
		typedColumn("y", typeYear, flagUnsigned, 0), typedColumn("s", typeVarString, 0, 0),
	}
	fuzzBinaryRow = []byte{0, 0, 0, // header, NULL bitmap of 8+2 bits
		0xff,                   // t = -1
		1, 0, 0, 0, 0, 0, 0, 0, // u = 1
		0, 0, 0xc0, 0x3f, // f = 1.5
		0, 0, 0, 0, 0, 0, 0xf0, 0x3f, // d = 1
		11, 0xe8, 0x07, 2, 29, 13, 14, 15, 0x78, 0, 0, 0, // dt
		12, 1, 1, 0, 0, 0, 2, 3, 4, 0xe8, 3, 0, 0, // tm = -26:03:04.001
		0xe8, 0x07, // y = 2024
		3, 'a', 'b', 'c', // s
	}
)

func FuzzRows(f *testing.F) {
	cols := fuzzColumns
	set := func(first []byte, rows ...[]byte) []byte {
		ps := append([][]byte{first}, cols...)
		ps = append(ps, rows...)
		return packets(1, append(ps, eofOK)...)
	}
	f.Add(true, uint32(capDeprecateEOF), packets(1, []byte{2}, column("a"), column("b"), textRow, []byte{0xfb, 0}, eofOK))
	f.Add(true, uint32(capDeprecateEOF), packets(1, []byte{0, 0, 0, 2, 0, 3, 0}))
	f.Add(false, uint32(capDeprecateEOF), set([]byte{8, 1}, fuzzBinaryRow, append([]byte{0, 0xfc, 3}, fuzzBinaryRow[3:]...)))
	f.Add(false, uint32(capDeprecateEOF), packets(1, []byte{8, 0}, fuzzBinaryRow, errPkt))
	f.Fuzz(func(t *testing.T, text bool, caps uint32, reply []byte) {
		c := streamed(reply, caps)
		var err error
		if text {
			err = c.SendQuery("SELECT a, b FROM t")
		} else {
			st := &Stmt{c: c, id: 1}
			for _, p := range cols {
				col, cerr := parseColumn(p)
				if cerr != nil {
					t.Fatal(cerr)
				}
				st.cols = append(st.cols, col)
			}
			err = st.SendExec()
		}
		if err != nil {
			t.Fatal(err)
		}
		var r countingReader
		_, err = c.ReadReply(&r)
		if r.bad {
			t.Fatalf("a row of %d values for %d columns", r.got, r.want)
		}
		var me *mysql.MySQLError
		if err != nil && !errors.As(err, &me) && !c.Broken() {
			t.Fatalf("error %v left the connection usable", err)
		}
	})
}

// countingReader checks that rows match their columns.
type countingReader struct {
	want, got int
	bad       bool
}

func (r *countingReader) Columns(cols []Column) { r.want = len(cols) }
func (r *countingReader) Row(values [][]byte) {
	if len(values) != r.want {
		r.got, r.bad = len(values), true
	}
}
