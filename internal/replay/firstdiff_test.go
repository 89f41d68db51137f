package replay

import (
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/fingerprint"
	"github.com/shakedown/shakedown/internal/wire"
)

var testSeed = maphash.MakeSeed()

// read reads rows (nil values are NULL) with columns id and c through a
// rowHasher, as a statement's reply is read.
func read(h *rowHasher, rows [][][]byte, keys ...string) result {
	h.start(testSeed, "", keys)
	h.Columns([]wire.Column{{Name: "id", Type: 3}, {Name: "c", Type: 253}})
	for _, r := range rows {
		h.Row(r)
	}
	return h.finish(wire.Result{}, nil, false, 0, false)
}

// rangeRows are rows id 1..n, c "row <id>".
func rangeRows(n int) [][][]byte {
	out := make([][][]byte, n)
	for i := range out {
		out[i] = [][]byte{fmt.Appendf(nil, "%d", i+1), fmt.Appendf(nil, "row %d", i+1)}
	}
	return out
}

func TestFirstDifference(t *testing.T) {
	long := strings.Repeat("x", 100)
	ordered := &fingerprint.Info{Ordered: true}
	plain := &fingerprint.Info{}
	byID := &fingerprint.Info{Ordered: true, OrderKeys: []string{"id"}}
	tests := []struct {
		name   string
		info   *fingerprint.Info
		ctl    [][][]byte
		change func(rows [][][]byte) [][][]byte // the candidate's, from a copy of ctl
		want   string                           // Lines, joined by |; "" for no difference
	}{
		{"a middle row, ordered", ordered, rangeRows(100), func(r [][][]byte) [][][]byte {
			r[56][1] = []byte("planted")
			return r
		}, "first differs at row 57, column c|  control:   (57, row 57)|  candidate: (57, planted)"},
		{"a middle row, no ORDER BY", plain, rangeRows(100), func(r [][][]byte) [][][]byte {
			r[56][1] = []byte("planted")
			return r
		}, "first differs at row 57, column c|  control:   (57, row 57)|  candidate: (57, planted)"},
		{"both columns", plain, rangeRows(10), func(r [][][]byte) [][][]byte {
			r[2] = [][]byte{[]byte("30"), []byte("thirty")}
			return r
		}, "first differs at row 3, columns id, c|  control:   (3, row 3)|  candidate: (30, thirty)"},
		{"another order and a changed row, no ORDER BY", plain, rangeRows(6), func(r [][][]byte) [][][]byte {
			slices.Reverse(r)
			r[0][1] = []byte("planted") // id 6, now first
			return r
		}, "first differs at row 6 on the control, row 1 on the candidate, column c|  control:   (6, row 6)|  candidate: (6, planted)"},
		{"another order, ordered", byID, rangeRows(6), func(r [][][]byte) [][][]byte {
			r[3], r[4] = r[4], r[3]
			return r
		}, "first differs at row 4, columns id, c|  control:   (4, row 4)|  candidate: (5, row 5)"},
		{"an extra row on the candidate", ordered, rangeRows(100), func(r [][][]byte) [][][]byte {
			return append(r, [][]byte{[]byte("101"), []byte("extra")})
		}, "first differs at row 101: 1 more row on the candidate|  candidate: (101, extra)"},
		{"rows missing on the candidate, no ORDER BY", plain, rangeRows(100), func(r [][][]byte) [][][]byte {
			return slices.Delete(r, 49, 51)
		}, "first differs at row 50: 2 more rows on the control|  control:   (50, row 50)"},
		{"a NULL", plain, rangeRows(3), func(r [][][]byte) [][][]byte {
			r[1][1] = nil
			return r
		}, "first differs at row 2, column c|  control:   (2, row 2)|  candidate: (2, NULL)"},
		{"past the first bytes of a long value", plain, [][][]byte{{[]byte("1"), []byte(long + "a")}}, func(r [][][]byte) [][][]byte {
			r[0][1] = []byte(long + "b")
			return r
		}, "first differs at row 1, column c|  control:   (1, " + long[:64] + "...)|  candidate: (1, " + long[:64] + "...)"},
		{"past the rows kept", ordered, rangeRows(3000), func(r [][][]byte) [][][]byte {
			r[2500][1] = []byte("planted")
			return r
		}, "first differs past the first 1000 rows (no more are kept to compare)"},
		{"no difference in the rows", ordered, rangeRows(3), func(r [][][]byte) [][][]byte { return r }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h rowHasher
			r := read(&h, tc.ctl, tc.info.OrderKeys...)
			cand := make([][][]byte, len(tc.ctl))
			for i, row := range tc.ctl {
				cand[i] = slices.Clone(row)
			}
			// The same reader for both: the control's result must not
			// share its memory.
			c := read(&h, tc.change(cand), tc.info.OrderKeys...)
			got := strings.Join(firstDifference(&r, &c, tc.info).Lines(), "|")
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if tc.want != "" && compare(&r, &c, tc.info).outcome != Different {
				t.Errorf("compare: got %v, want Different", compare(&r, &c, tc.info).outcome)
			}
		})
	}
	t.Run("an error", func(t *testing.T) {
		var h rowHasher
		r := read(&h, rangeRows(3))
		c := result{errCode: 1146}
		if d := firstDifference(&r, &c, plain); d != nil {
			t.Errorf("got %+v, want nil", d)
		}
	})
}

// TestKeptSample: the sample made from the kept rows shows values as
// they were shown before (text cut at 64 bytes, binary as hex, NULL), at
// most 5 rows, and is the result's own.
func TestKeptSample(t *testing.T) {
	bin := append([]byte{0, 1, 2}, make([]byte, 70)...)
	var h rowHasher
	rows := [][][]byte{{[]byte("1"), nil}, {[]byte("2"), bin}, {[]byte("3"), []byte{0xff, 0x01}}, {[]byte("4"), []byte(strings.Repeat("y", 65))}}
	rows = append(rows, rangeRows(9)[4:]...)
	r := read(&h, rows)
	read(&h, rangeRows(7)) // the next statement on the same reader
	got := r.kept.sample()
	want := [][]string{
		{"1", "NULL"},
		{"2", showValueOld(bin)},
		{"3", "0xff01"},
		{"4", strings.Repeat("y", 64) + "..."},
		{"5", "row 5"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// showValueOld is how a value was shown before rows were kept.
func showValueOld(v []byte) string {
	s := "0x" + fmt.Sprintf("%x", v[:32])
	return s[:64] + "..."
}
