package follow

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/schema"
)

// table is what applying a followed table's rows needs: its columns in
// the order the binary log gives them, its key, and the statements'
// beginnings.
type table struct {
	src, dst string // "db"."table" on each side, quoted
	name     string // db.table on the source, for messages
	cols     []*schema.Column
	key      []int // positions of the key's columns
	// whole: the table has more than one unique key, so its changes are
	// applied on one connection in order (a REPLACE may remove a row of
	// another key).
	whole   bool
	written []int // the columns a REPLACE sets (generated ones are not)
	replace string
	// latin1 marks the latin1 text columns of a target that keeps their
	// text as utf8 (TiDB): the log's latin1 bytes are sent converted.
	latin1 []bool
}

// loadTables reads the target's definitions of the tables of database db
// (the source's name dbSrc) into tables, keyed by dbSrc.table.
func (f *follower) loadTables(ctx context.Context, dbSrc, db string) error {
	defs, err := schema.Load(ctx, f.dst, []string{db})
	if err != nil {
		return fmt.Errorf("target: read the tables of %s: %w", db, err)
	}
	for _, def := range defs {
		t, err := newTable(dbSrc, def, f.dst.Server.Flavour)
		if err != nil {
			return err
		}
		f.tables[dbSrc+"."+def.Name] = t
	}
	return nil
}

func newTable(dbSrc string, def *schema.Table, dst flavour.Name) (*table, error) {
	t := &table{
		src:    escape.Qualified(dbSrc, def.Name),
		dst:    escape.Qualified(def.DB, def.Name),
		name:   dbSrc + "." + def.Name,
		cols:   def.Columns,
		latin1: make([]bool, len(def.Columns)),
	}
	pos := map[string]int{}
	for i, c := range def.Columns {
		pos[strings.ToLower(c.Name)] = i
		t.latin1[i] = strings.EqualFold(c.Charset, "latin1") && !dst.StoresCharset(c.Charset)
	}
	var key *schema.Index
	uniques := 0
	for _, ix := range def.Indexes {
		if !ix.Unique {
			continue
		}
		uniques++
		if ix.Primary {
			key = ix
		} else if key == nil && !ix.Nullable {
			key = ix
		}
	}
	if key == nil {
		return nil, fmt.Errorf("%w: table %s has no primary key and no unique key of NOT NULL columns: its rows cannot be found to change them; add a primary key", ErrPrerequisites, t.name)
	}
	for _, c := range key.Columns {
		t.key = append(t.key, pos[strings.ToLower(c)])
	}
	t.whole = uniques > 1
	var names []string
	for i, c := range def.Columns {
		if !c.Generated {
			t.written = append(t.written, i)
			names = append(names, escape.Ident(c.Name))
		}
	}
	t.replace = "REPLACE INTO " + t.dst + " (" + strings.Join(names, ",") + ") VALUES "
	return t, nil
}

// value turns a value as the binary log reader decodes it into one the
// driver sends as the source stored it: text as bytes (sent as _binary,
// so no character set conversion touches it; latin1 text converted to
// utf8 for a target that keeps it so), unsigned integers that the
// log gave as negative (it has no signedness unless binlog_row_metadata is
// FULL) back to their unsigned value, exact decimals as text.
func (t *table) value(i int, v any) (any, error) {
	if i >= len(t.cols) {
		return nil, fmt.Errorf("table %s: the binary log has a column %d, the target's table has %d columns", t.name, i+1, len(t.cols))
	}
	c := t.cols[i]
	switch x := v.(type) {
	case string:
		if c.DataType == "json" && !c.IsJSONText {
			return x, nil
		}
		if t.latin1[i] {
			return latin1Text([]byte(x)), nil
		}
		return []byte(x), nil
	case decimal.Decimal:
		return x.String(), nil
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), nil
	case int8:
		if c.Unsigned && x < 0 {
			return uint64(uint8(x)), nil
		}
		return int64(x), nil
	case int16:
		if c.Unsigned && x < 0 {
			return uint64(uint16(x)), nil
		}
		return int64(x), nil
	case int32:
		if c.Unsigned && x < 0 {
			if c.DataType == "mediumint" {
				return uint64(x) & 0xFFFFFF, nil
			}
			return uint64(uint32(x)), nil
		}
		return int64(x), nil
	case int64:
		if c.Unsigned && x < 0 {
			return uint64(x), nil
		}
		return x, nil
	case int:
		return int64(x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("table %s column %s: the binary log holds %v, which no server stores", t.name, c.Name, x)
		}
		return x, nil
	case []byte:
		if t.latin1[i] {
			return latin1Text(x), nil
		}
		return x, nil
	case nil, uint8, uint16, uint32, uint64:
		return v, nil
	default:
		return nil, fmt.Errorf("table %s column %s: a value of type %T the follower cannot apply (a partial JSON update? set binlog_row_value_options='')", t.name, c.Name, v)
	}
}

// route is the worker a row with these values goes to.
func (t *table) route(row []any, workers int) int {
	if workers == 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(t.dst))
	if !t.whole {
		var buf [8]byte
		for _, k := range t.key {
			if k < len(row) {
				h.Write([]byte{0})
				h.Write(keyBytes(row[k], buf[:0]))
			}
		}
	}
	return int(h.Sum32() % uint32(workers))
}

// keyBytes is a key value's bytes for hashing and comparing: the same
// value gives the same bytes.
func keyBytes(v any, buf []byte) []byte {
	switch x := v.(type) {
	case nil:
		return append(buf, 0xff)
	case []byte:
		return x
	case string:
		return []byte(x)
	case int64:
		return strconv.AppendInt(buf, x, 10)
	case uint64:
		return strconv.AppendUint(buf, x, 10)
	}
	return fmt.Append(buf, v)
}

// sameKey says two images of a row have the same key.
func (t *table) sameKey(a, b []any) bool {
	var ba, bb [8]byte
	for _, k := range t.key {
		if k >= len(a) || k >= len(b) || !bytes.Equal(keyBytes(a[k], ba[:0]), keyBytes(b[k], bb[:0])) {
			return false
		}
	}
	return true
}

// latin1High is what MariaDB's and MySQL's latin1 (cp1252, with its five
// unassigned bytes kept as the C1 controls) means by 0x80..0x9F; the
// bytes above are ISO 8859-1, each byte its own code point.
var latin1High = [32]rune{
	0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
	0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
}

// latin1Text is latin1 bytes as the text they mean, in UTF-8.
func latin1Text(b []byte) string {
	var s strings.Builder
	s.Grow(len(b) + len(b)/4)
	for _, c := range b {
		switch {
		case c < 0x80:
			s.WriteByte(c)
		case c < 0xA0:
			s.WriteRune(latin1High[c-0x80])
		default:
			s.WriteRune(rune(c))
		}
	}
	return s.String()
}
