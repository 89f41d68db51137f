package replay

import (
	"context"
	"database/sql/driver"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/target"
)

// sniffer wraps a connection's socket and follows the MySQL packets the
// server sends, remembering the start of the last one: after a statement,
// that is the OK or EOF packet that ends its response, which holds the
// warning count and the affected rows that database/sql does not expose.
// It costs a few comparisons per read.
type sniffer struct {
	net.Conn
	need int // bytes of the current packet's payload still to come
	hdr  [4]byte
	nhdr int
	last [16]byte // start of the last packet's payload
	nlst int
	plen int // length of the last packet's payload
}

func (s *sniffer) Read(p []byte) (int, error) {
	n, err := s.Conn.Read(p)
	b := p[:n]
	for len(b) > 0 {
		if s.need > 0 {
			k := min(s.need, len(b))
			if room := len(s.last) - s.nlst; room > 0 && s.plen-s.need < len(s.last) {
				c := copy(s.last[s.nlst:], b[:min(k, room)])
				s.nlst += c
			}
			s.need -= k
			b = b[k:]
			continue
		}
		c := copy(s.hdr[s.nhdr:], b)
		s.nhdr += c
		b = b[c:]
		if s.nhdr == 4 {
			s.nhdr = 0
			s.plen = int(s.hdr[0]) | int(s.hdr[1])<<8 | int(s.hdr[2])<<16
			s.need = s.plen
			s.nlst = 0
		}
	}
	return n, err
}

// status reads the warning count and affected rows of the packet that
// ended the last response; ok is false when it was not an OK or EOF.
func (s *sniffer) status() (warnings int, affected int64, ok bool) {
	p := s.last[:s.nlst]
	if len(p) == 0 || s.need > 0 {
		return 0, 0, false
	}
	switch {
	case p[0] == 0xfe && s.plen == 5 && len(p) >= 3:
		return int(binary.LittleEndian.Uint16(p[1:])), 0, true
	case p[0] == 0x00 || (p[0] == 0xfe && s.plen < 0xffffff):
		aff, w1 := lenenc(p[1:])
		if w1 == 0 {
			return 0, 0, false
		}
		_, w2 := lenenc(p[1+w1:])
		o := 1 + w1 + w2 + 2
		if w2 == 0 || len(p) < o+2 {
			return 0, 0, false
		}
		return int(binary.LittleEndian.Uint16(p[o:])), int64(aff), true
	}
	return 0, 0, false
}

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
	}
	return uint64(b[0]), 1
}

// sniffSlot carries the sniffer from the dial function back to Connect's
// caller through the context.
type sniffSlot struct{ s *sniffer }

type slotKey struct{}

// side is one target of a replay: a connector that dials through a
// sniffer.
type side struct {
	name      string
	t         *target.Target
	connector driver.Connector
	sniff     bool // false under TLS, where the bytes are encrypted
	fixedDB   bool
}

func newSide(name string, t *target.Target) (*side, error) {
	eps := t.Endpoints()
	cfg := t.Config(eps[0], t.DB)
	cfg.InterpolateParams = false
	sd := &side{name: name, t: t, sniff: t.TLS == "" || t.TLS == "false"}
	if sd.sniff {
		cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			s := &sniffer{Conn: c}
			if slot, ok := ctx.Value(slotKey{}).(*sniffSlot); ok {
				slot.s = s
			}
			return s, nil
		}
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", t.Redacted(), err)
	}
	sd.connector = conn
	return sd, nil
}

// conn is one session's connection to one target.
type conn struct {
	dc    driver.Conn
	sn    *sniffer
	db    string
	stmts map[string]driver.Stmt
}

func (sd *side) connect(ctx context.Context) (*conn, error) {
	slot := &sniffSlot{}
	dc, err := sd.connector.Connect(context.WithValue(ctx, slotKey{}, slot))
	if err != nil {
		return nil, err
	}
	return &conn{dc: dc, sn: slot.s, db: sd.t.DB, stmts: map[string]driver.Stmt{}}, nil
}

func (c *conn) close() {
	for _, st := range c.stmts {
		st.Close()
	}
	c.dc.Close()
}

// maxPrepared bounds a session's prepared statements per connection.
const maxPrepared = 256

// result is what one statement did on one target.
type result struct {
	dur      time.Duration
	errCode  int    // MySQL error number; -1 for a lost connection or another failure
	errMsg   string // the error's message
	lost     bool   // the connection broke
	warnings int    // -1: unknown
	affected int64
	rows     int64
	cols     []column
	seqHash  uint64 // rows in order
	setHash  uint64 // rows in any order
	keyHash  uint64 // ORDER BY keys in order
	keysOK   bool   // keyHash was computed
	sample   [][]string
}

type column struct{ name, typ string }

// sampleRows and sampleWidth bound the rows kept for examples.
const (
	sampleRows  = 5
	sampleWidth = 64
)

// run executes one statement and reads its whole result. keys are the
// indexes of the ORDER BY columns in the result, resolved from names once
// the columns are known.
func (c *conn) run(ctx context.Context, seed maphash.Seed, sql string, prepared bool, args []driver.NamedValue, orderKeys []string) (res result) {
	res.warnings = -1
	start := time.Now()
	var rows driver.Rows
	var err error
	if prepared {
		st, ok := c.stmts[sql]
		if !ok {
			st, err = c.dc.(driver.ConnPrepareContext).PrepareContext(ctx, sql)
			if err == nil {
				if len(c.stmts) >= maxPrepared {
					for k, old := range c.stmts {
						old.Close()
						delete(c.stmts, k)
						break
					}
				}
				c.stmts[sql] = st
			}
		}
		if err == nil {
			rows, err = st.(driver.StmtQueryContext).QueryContext(ctx, args)
		}
	} else {
		rows, err = c.dc.(driver.QueryerContext).QueryContext(ctx, sql, nil)
	}
	if err != nil {
		res.dur = time.Since(start)
		res.setError(err)
		return res
	}
	names := rows.Columns()
	res.cols = make([]column, len(names))
	tn, _ := rows.(driver.RowsColumnTypeDatabaseTypeName)
	for i, n := range names {
		if n == "Tables_in_"+c.db {
			// SHOW TABLES names its column after the database, which may
			// have another name on each target.
			n = "Tables_in_(database)"
		}
		res.cols[i].name = n
		if tn != nil {
			res.cols[i].typ = tn.ColumnTypeDatabaseTypeName(i)
		}
	}
	keyIdx := resolveKeys(orderKeys, names)
	res.keysOK = keyIdx != nil
	var h, kh maphash.Hash
	h.SetSeed(seed)
	kh.SetSeed(seed)
	dest := make([]driver.Value, len(names))
	for {
		err = rows.Next(dest)
		if err != nil {
			break
		}
		h.Reset()
		for _, v := range dest {
			hashValue(&h, v)
		}
		rh := h.Sum64()
		res.seqHash = mix(res.seqHash ^ rh)
		res.setHash += mix(rh)
		if keyIdx != nil {
			kh.Reset()
			for _, i := range keyIdx {
				hashValue(&kh, dest[i])
			}
			res.keyHash = mix(res.keyHash ^ kh.Sum64())
		}
		if res.rows < sampleRows {
			res.sample = append(res.sample, sampleRow(dest))
		}
		res.rows++
	}
	closeErr := rows.Close()
	res.dur = time.Since(start)
	if err != io.EOF {
		res.setError(err)
		return res
	}
	if closeErr != nil {
		res.setError(closeErr)
		return res
	}
	if c.sn != nil {
		if w, aff, ok := c.sn.status(); ok {
			res.warnings, res.affected = w, aff
		}
	}
	return res
}

func (r *result) setError(err error) {
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me):
		r.errCode, r.errMsg = int(me.Number), me.Message
	default:
		r.errCode, r.errMsg, r.lost = -1, err.Error(), true
	}
}

// resolveKeys maps ORDER BY items to result columns; nil when one cannot
// be mapped.
func resolveKeys(keys []string, names []string) []int {
	if len(keys) == 0 {
		return nil
	}
	idx := make([]int, len(keys))
	for i, k := range keys {
		idx[i] = -1
		if k == "" {
			return nil
		}
		if k[0] == '#' {
			n, err := strconv.Atoi(k[1:])
			if err != nil || n < 1 || n > len(names) {
				return nil
			}
			idx[i] = n - 1
			continue
		}
		for j, name := range names {
			if equalFold(name, k) {
				idx[i] = j
				break
			}
		}
		if idx[i] < 0 {
			return nil
		}
	}
	return idx
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

var nullMark = []byte{0xff, 0x00, 0xfe}

// hashValue writes one value, typed and length-prefixed, so that no two
// different rows write the same bytes.
func hashValue(h *maphash.Hash, v driver.Value) {
	var lb [9]byte
	switch x := v.(type) {
	case nil:
		h.Write(nullMark)
		return
	case []byte:
		lb[0] = 's'
		binary.LittleEndian.PutUint64(lb[1:], uint64(len(x)))
		h.Write(lb[:])
		h.Write(x)
		return
	case string:
		lb[0] = 's'
		binary.LittleEndian.PutUint64(lb[1:], uint64(len(x)))
		h.Write(lb[:])
		h.WriteString(x)
		return
	case int64:
		lb[0] = 'i'
		binary.LittleEndian.PutUint64(lb[1:], uint64(x))
	case uint64:
		lb[0] = 'u'
		binary.LittleEndian.PutUint64(lb[1:], x)
	case float64:
		s := strconv.FormatFloat(x, 'g', -1, 64)
		lb[0] = 'f'
		binary.LittleEndian.PutUint64(lb[1:], uint64(len(s)))
		h.Write(lb[:])
		h.WriteString(s)
		return
	case time.Time:
		s := x.Format(time.RFC3339Nano)
		lb[0] = 't'
		binary.LittleEndian.PutUint64(lb[1:], uint64(len(s)))
		h.Write(lb[:])
		h.WriteString(s)
		return
	default:
		s := fmt.Sprint(x)
		lb[0] = 'o'
		binary.LittleEndian.PutUint64(lb[1:], uint64(len(s)))
		h.Write(lb[:])
		h.WriteString(s)
		return
	}
	h.Write(lb[:])
}

// mix is splitmix64's finaliser: it spreads a hash so that sums of hashes
// (the order-free checksum) do not cancel.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func sampleRow(dest []driver.Value) []string {
	out := make([]string, len(dest))
	for i, v := range dest {
		out[i] = showValue(v)
	}
	return out
}

func showValue(v driver.Value) string {
	var s string
	switch x := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		if !isText(x) {
			s = "0x" + hex.EncodeToString(x[:min(len(x), sampleWidth/2)])
		} else {
			s = string(x)
		}
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	default:
		s = fmt.Sprint(x)
	}
	if len(s) > sampleWidth {
		s = s[:sampleWidth] + "..."
	}
	return s
}

func isText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}
