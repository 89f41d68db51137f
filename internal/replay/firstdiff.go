package replay

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"strings"

	"github.com/shakedown/shakedown/internal/fingerprint"
)

// A result keeps its first rows, bounded (keptRows), for its sample and
// for finding where two results part when their checksums differ: each
// row's hash and each value's first bytes. A reader keeps them in room
// it reuses statement after statement; a result that must outlive the
// reader's next statement (the mirror compares the control's result on
// another goroutine while the session reads the next one) has them
// copied once, at the statement's end, into memory of its own.
// Nothing else is kept: a result's rows past these are only hashed.

// The rows kept: at least the sample's, then while under both bounds.
const (
	keptMaxRows  = 1000
	keptMaxBytes = 64 << 10
	// keptPrefix is as much of a value as it is shown with (showValue).
	keptPrefix = sampleWidth + 1
	// maxValue is as long as a value's length is kept: any value longer
	// is longer than its first bytes, and has its hash.
	maxValue = 1 << 30
)

// keptValue is one value of a kept row. A long value (over keptPrefix
// bytes) has its hash after its first bytes, which tells two apart past
// them.
type keptValue struct {
	off    int32 // its first bytes in keptRows.bytes
	size   int32 // its length; -1 for NULL
	n      uint8 // how many of its bytes are kept
	binary bool  // a long value that is not text (a short one is judged from its bytes)
}

// keptRow is a kept row: its hash (the one the checksums sum) and its
// first value's index in keptRows.vals.
type keptRow struct {
	hash  uint64
	first int32
}

// keptRows are the first rows of a result.
type keptRows struct {
	rows  []keptRow
	vals  []keptValue
	bytes []byte
	all   bool // every row of the result is kept
}

// room reports whether another row is kept.
func (k *keptRows) room() bool {
	n := len(k.rows)
	return n < sampleRows || n < keptMaxRows && len(k.bytes) < keptMaxBytes
}

// add keeps a row whose hash is h; seed hashes its long values.
func (k *keptRows) add(h uint64, values [][]byte, seed maphash.Seed) {
	k.rows = append(k.rows, keptRow{hash: h, first: int32(len(k.vals))})
	for _, v := range values {
		kv := keptValue{off: int32(len(k.bytes)), size: int32(min(len(v), maxValue))}
		switch {
		case v == nil:
			kv.size = -1
		case len(v) > keptPrefix:
			kv.binary = !isText(v)
			k.bytes = binary.LittleEndian.AppendUint64(k.bytes, maphash.Bytes(seed, v))
			kv.off += 8
			v = v[:keptPrefix]
		}
		kv.n = uint8(len(v))
		k.bytes = append(k.bytes, v...)
		k.vals = append(k.vals, kv)
	}
}

// reset empties k, keeping its room, for the next statement.
func (k *keptRows) reset() {
	k.rows, k.vals, k.bytes, k.all = k.rows[:0], k.vals[:0], k.bytes[:0], false
}

// owned is a copy of k in memory of its own.
func (k *keptRows) owned() keptRows {
	out := keptRows{all: k.all}
	if len(k.rows) == 0 {
		return out
	}
	out.rows = append(make([]keptRow, 0, len(k.rows)), k.rows...)
	out.vals = append(make([]keptValue, 0, len(k.vals)), k.vals...)
	out.bytes = append(make([]byte, 0, len(k.bytes)), k.bytes...)
	return out
}

// row is the values of kept row i.
func (k *keptRows) row(i int) []keptValue {
	end := len(k.vals)
	if i+1 < len(k.rows) {
		end = int(k.rows[i+1].first)
	}
	return k.vals[k.rows[i].first:end]
}

// show is kept row i as text, each value as showValue shows it.
func (k *keptRows) show(i int) []string {
	vals := k.row(i)
	out := make([]string, len(vals))
	for j, v := range vals {
		out[j] = k.showValue(v)
	}
	return out
}

func (k *keptRows) showValue(v keptValue) string {
	if v.size < 0 {
		return "NULL"
	}
	b := k.bytes[v.off : v.off+int32(v.n)]
	return showPrefix(b, v.binary || int32(v.n) == v.size && !isText(b))
}

// same reports whether two kept values are the same value.
func (k *keptRows) same(v keptValue, o *keptRows, w keptValue) bool {
	switch {
	case v.size != w.size:
		return false
	case v.size < 0:
		return true
	case v.size > keptPrefix && !bytes.Equal(k.bytes[v.off-8:v.off], o.bytes[w.off-8:w.off]):
		return false
	}
	return bytes.Equal(k.bytes[v.off:v.off+int32(v.n)], o.bytes[w.off:w.off+int32(w.n)])
}

// sample is the first rows as text.
func (k *keptRows) sample() [][]string {
	n := min(len(k.rows), sampleRows)
	if n == 0 {
		return nil
	}
	out := make([][]string, n)
	for i := range out {
		out[i] = k.show(i)
	}
	return out
}

// FirstDifference is where a candidate's rows first part from the
// control's: the first row of each side that the other lacks (nil on a
// side that has none), with its position from 1, and the columns whose
// values differ between the two where both rows have the same columns.
// Where one side's rows are the other's and more, ExtraOn names that
// side, Extra counts its rows more, and its row is the first of them.
// SameFirst, when set, says that the kept rows (the first 1,000 or
// 64 KiB) are the same on both sides: the difference lies past them.
type FirstDifference struct {
	Control   *DiffRow `json:"control,omitempty"`
	Candidate *DiffRow `json:"candidate,omitempty"`
	Columns   []string `json:"columns,omitempty"`
	ExtraOn   string   `json:"extra_rows_on,omitempty"`
	Extra     int64    `json:"extra_rows,omitempty"`
	SameFirst int64    `json:"same_first_rows,omitempty"`
}

// DiffRow is one side's row where the results part: its position from 1
// and its values as the sample shows them (none when the row was past
// the rows kept).
type DiffRow struct {
	Row    int64    `json:"row"`
	Values []string `json:"values,omitempty"`
}

// Where says where the results part, to follow "first differs ": "at row
// 57, column c", "at row 57 on the control, row 60 on the candidate,
// columns c, d", "at row 101: 1 more row on the candidate", "past the
// first 1000 rows (no more are kept to compare)".
func (d *FirstDifference) Where() string {
	switch {
	case d.SameFirst > 0:
		return fmt.Sprintf("past the first %d rows (no more are kept to compare)", d.SameFirst)
	case d.ExtraOn != "":
		r := d.Control
		if r == nil {
			r = d.Candidate
		}
		return fmt.Sprintf("at row %d: %s on the %s", r.Row, plural(d.Extra, "more row"), d.ExtraOn)
	case d.Control == nil || d.Candidate == nil:
		return "" // not made by FirstDiff
	}
	s := fmt.Sprintf("at row %d", d.Control.Row)
	if d.Control.Row != d.Candidate.Row {
		s = fmt.Sprintf("at row %d on the control, row %d on the candidate", d.Control.Row, d.Candidate.Row)
	}
	switch len(d.Columns) {
	case 0:
	case 1:
		s += ", column " + d.Columns[0]
	default:
		s += ", columns " + strings.Join(d.Columns, ", ")
	}
	return s
}

// Text is the row as printed: its values in parentheses.
func (r *DiffRow) Text() string {
	if r.Values == nil {
		return "(past the rows kept)"
	}
	return "(" + strings.Join(r.Values, ", ") + ")"
}

func plural(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// firstDifference finds where the candidate's rows c part from the
// control's r, nil where their rows do not differ (or either failed). A
// statement that orders its rows, or one with rows past those kept, is
// compared row by row; one that does not, with every row kept, as a
// multiset, as its checksum is: each side's first row that the other
// lacks.
func firstDifference(r, c *result, info *fingerprint.Info) *FirstDifference {
	if r.errCode != 0 || c.errCode != 0 {
		return nil
	}
	if !info.Ordered && r.kept.all && c.kept.all {
		return unmatched(r, c)
	}
	kr, kc := &r.kept, &c.kept
	n := min(len(kr.rows), len(kc.rows))
	for i := 0; i < n; i++ {
		if kr.rows[i].hash != kc.rows[i].hash {
			return parted(r, c, i, i)
		}
	}
	switch short := min(r.rows, c.rows); {
	case r.rows == c.rows && int64(n) == r.rows:
		return nil
	case r.rows != c.rows && int64(n) == short:
		return extra(r, c, n)
	}
	return &FirstDifference{SameFirst: int64(n)}
}

// unmatched compares r and c, every row kept, as multisets.
func unmatched(r, c *result) *FirstDifference {
	i, j := firstUnmatched(&r.kept, &c.kept), firstUnmatched(&c.kept, &r.kept)
	switch {
	case i >= 0 && j >= 0:
		return parted(r, c, i, j)
	case i >= 0 || j >= 0:
		return extra(r, c, max(i, j))
	}
	return nil
}

// firstUnmatched is the index of a's first row that b lacks, counting
// repeats, or -1.
func firstUnmatched(a, b *keptRows) int {
	left := make(map[uint64]int, len(b.rows))
	for _, row := range b.rows {
		left[row.hash]++
	}
	for i, row := range a.rows {
		if left[row.hash] == 0 {
			return i
		}
		left[row.hash]--
	}
	return -1
}

// parted is the difference between r's kept row i and c's kept row j.
func parted(r, c *result, i, j int) *FirstDifference {
	d := &FirstDifference{
		Control:   &DiffRow{Row: int64(i) + 1, Values: r.kept.show(i)},
		Candidate: &DiffRow{Row: int64(j) + 1, Values: c.kept.show(j)},
	}
	a, b := r.kept.row(i), c.kept.row(j)
	if len(a) != len(b) {
		return d
	}
	for k := range a {
		if r.kept.same(a[k], &c.kept, b[k]) {
			continue
		}
		name := fmt.Sprintf("#%d", k+1)
		if len(r.cols) == len(a) {
			name = r.cols[k].name
		}
		d.Columns = append(d.Columns, name)
	}
	return d
}

// extra is the difference of a side with more rows, the other's being
// its first: i is the index of the first of them.
func extra(r, c *result, i int) *FirstDifference {
	long, side, n := r, "control", r.rows-c.rows
	if c.rows > r.rows {
		long, side, n = c, "candidate", c.rows-r.rows
	}
	row := &DiffRow{Row: int64(i) + 1}
	if i < len(long.kept.rows) {
		row.Values = long.kept.show(i)
	}
	d := &FirstDifference{ExtraOn: side, Extra: n}
	if long == r {
		d.Control = row
	} else {
		d.Candidate = row
	}
	return d
}

// Lines is d as printed under the sample, to be indented as the sample
// is: "first differs at row 57, column c", then each side's row,
// "  control:   (57, x)"; none for a nil d.
func (d *FirstDifference) Lines() []string {
	if d == nil {
		return nil
	}
	out := []string{"first differs " + d.Where()}
	if d.Control != nil {
		out = append(out, "  control:   "+clip(d.Control.Text(), 300))
	}
	if d.Candidate != nil {
		out = append(out, "  candidate: "+clip(d.Candidate.Text(), 300))
	}
	return out
}
