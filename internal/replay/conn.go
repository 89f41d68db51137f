package replay

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/maphash"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire"
)

// side is one target of a replay.
type side struct {
	name    string
	t       *target.Target
	cfg     *mysql.Config
	fixedDB bool
}

func newSide(name string, t *target.Target, timeout time.Duration) *side {
	cfg := t.Config(t.Endpoints()[0], t.DB)
	// Every read and write of a statement is bounded by the statement
	// timeout: set once on the socket, free per statement.
	cfg.ReadTimeout, cfg.WriteTimeout = timeout, timeout
	return &side{name: name, t: t, cfg: cfg}
}

// conn is one session's connection to one target.
type conn struct {
	w     *wire.Conn
	db    string
	stmts map[string]*wire.Stmt
	rows  rowHasher
}

// connect opens a connection. ctx bounds the connect (with the target's
// connect timeout) and, after it, every statement: when ctx ends, the
// connection is interrupted.
func (sd *side) connect(ctx context.Context, io wire.Options) (*conn, error) {
	w, err := client.DialWire(ctx, sd.cfg, io)
	if err != nil {
		return nil, err
	}
	return &conn{w: w, db: sd.t.DB, stmts: map[string]*wire.Stmt{}}, nil
}

func (c *conn) close() {
	for _, st := range c.stmts {
		st.Close()
	}
	c.w.Close()
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
	kept     keptRows
}

type column struct{ name, typ string }

// sampleRows and sampleWidth bound the rows shown as examples.
const (
	sampleRows  = 5
	sampleWidth = 64
)

// run executes one statement and reads its whole result, hashing every
// row. orderKeys are the statement's ORDER BY items, resolved to result
// columns once the columns are known.
func (c *conn) run(seed maphash.Seed, sql string, prepared bool, args []any, orderKeys []string) result {
	start := time.Now()
	var err error
	if prepared {
		st, ok := c.stmts[sql]
		if !ok {
			st, err = c.w.Prepare(sql)
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
			err = st.SendExec(args...)
		}
	} else {
		err = c.w.SendQuery(sql)
	}
	h := &c.rows
	h.start(seed, c.db, orderKeys)
	var wr wire.Result
	if err == nil {
		wr, err = c.w.ReadReply(h)
	}
	// The result is compared before the connection's next statement.
	return h.finish(wr, err, err != nil && (c.w.Broken() || target.EndsSession(err)), time.Since(start), true)
}

// finish ends the statement h read: wr and err are what its reply ended
// with, broken whether the connection was lost with it. A lent result's
// kept rows are h's until its next start; else they are the result's own.
func (h *rowHasher) finish(wr wire.Result, err error, broken bool, dur time.Duration, lent bool) result {
	res := h.res
	h.res = result{}
	res.dur = dur
	if err != nil {
		res.setError(err, broken)
		return res
	}
	res.warnings, res.affected = wr.Warnings, wr.Affected
	h.kept.all = int64(len(h.kept.rows)) == res.rows
	res.kept = h.kept
	if !lent {
		res.kept = h.kept.owned()
	}
	return res
}

// rowHasher reads a statement's result sets into a result: its columns,
// row count, checksums and its first rows (keptRows).
type rowHasher struct {
	res    result
	kept   keptRows // the rows kept so far, room reused statement after statement
	db     string
	keys   []string
	keyIdx []int
	h, kh  maphash.Hash
	seeded bool
	seed   maphash.Seed
}

func (r *rowHasher) start(seed maphash.Seed, db string, keys []string) {
	r.res = result{warnings: -1}
	r.kept.reset()
	r.db, r.keys, r.keyIdx = db, keys, nil
	if !r.seeded || r.seed != seed {
		r.h.SetSeed(seed)
		r.kh.SetSeed(seed)
		r.seed, r.seeded = seed, true
	}
}

func (r *rowHasher) Columns(cols []wire.Column) {
	// Several result sets (a CALL) add up: their columns follow each other.
	if r.res.cols == nil {
		r.res.cols = make([]column, 0, len(cols))
	}
	for _, col := range cols {
		n := col.Name
		if len(n) > 10 && n[:10] == "Tables_in_" && n[10:] == r.db {
			// SHOW TABLES names its column after the database, which may
			// have another name on each target.
			n = "Tables_in_(database)"
		}
		r.res.cols = append(r.res.cols, column{name: n, typ: col.TypeName()})
	}
	r.keyIdx = nil
	if len(r.keys) > 0 {
		names := make([]string, len(cols))
		for i, c := range r.res.cols[len(r.res.cols)-len(cols):] {
			names[i] = c.name
		}
		r.keyIdx = resolveKeys(r.keys, names)
	}
	r.res.keysOK = r.keyIdx != nil
}

func (r *rowHasher) Row(values [][]byte) {
	res := &r.res
	r.h.Reset()
	for _, v := range values {
		hashValue(&r.h, v)
	}
	rh := r.h.Sum64()
	res.seqHash = mix(res.seqHash ^ rh)
	res.setHash += mix(rh)
	if r.keyIdx != nil {
		r.kh.Reset()
		for _, i := range r.keyIdx {
			hashValue(&r.kh, values[i])
		}
		res.keyHash = mix(res.keyHash ^ r.kh.Sum64())
	}
	if r.kept.room() {
		r.kept.add(rh, values, r.seed)
	}
	res.rows++
}

// setError records err; broken says the connection is lost with it.
func (r *result) setError(err error, broken bool) {
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me) && !broken:
		r.errCode, r.errMsg = int(me.Number), me.Message
	default:
		r.errCode, r.errMsg, r.lost = -1, err.Error(), broken
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

// hashValue writes one value, length-prefixed, so that no two different
// rows write the same bytes.
func hashValue(h *maphash.Hash, v []byte) {
	if v == nil {
		h.Write(nullMark)
		return
	}
	var lb [9]byte
	lb[0] = 's'
	binary.LittleEndian.PutUint64(lb[1:], uint64(len(v)))
	h.Write(lb[:])
	h.Write(v)
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

// showPrefix is a value as shown, from its first keptPrefix bytes (or
// all of it) and whether the whole value is binary: text cut at
// sampleWidth bytes, binary as hex.
func showPrefix(b []byte, binary bool) string {
	var s string
	if binary {
		s = "0x" + hex.EncodeToString(b[:min(len(b), sampleWidth/2)])
	} else {
		s = string(b[:min(len(b), keptPrefix)])
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
