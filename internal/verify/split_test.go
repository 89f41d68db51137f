package verify

import (
	"encoding/json"
	"fmt"
	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/schema"
	"strings"
	"testing"
)

// TestSplitter cuts tables into ranges that hold every row once, and a
// Splitter given the first ranges' Bounds gives the same ranges again.
func TestSplitter(t *testing.T) {
	p := newPair(t)
	var vals []string
	for i := 1; i <= 95; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 'k%03d', %d)", i*3, i, i))
	}
	mustExec(t, p.srcDB,
		"CREATE TABLE ints (id INT PRIMARY KEY, s VARCHAR(10) NOT NULL, v INT)",
		"CREATE TABLE texts (s VARCHAR(10) PRIMARY KEY, id INT, v INT)",
		"CREATE TABLE keyless (id INT, s VARCHAR(10), v INT)")
	for _, tbl := range []string{"ints (id, s, v)", "texts (id, s, v)", "keyless (id, s, v)"} {
		mustExec(t, p.srcDB, "INSERT INTO "+tbl+" VALUES "+strings.Join(vals, ","))
	}
	ctx := testCtx(t)
	tables, err := schema.Load(ctx, p.srcSide, []string{p.src.DB})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		table     string
		minRanges int
	}{
		{"ints", 5},
		{"texts", 5},
		{"keyless", 1},
	}
	for _, tc := range cases {
		t.Run(tc.table, func(t *testing.T) {
			tbl := tables[p.src.DB+"."+tc.table]
			sp, err := NewSplitter(ctx, p.srcSide.DB, tbl, SplitOptions{Rows: 10})
			if err != nil {
				t.Fatal(err)
			}
			var ranges []*Range
			var total int64
			for {
				r, err := sp.Next(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if r == nil {
					break
				}
				ranges = append(ranges, r)
				q := "SELECT COUNT(*) FROM " + escape.Qualified(tbl.DB, tbl.Name)
				if r.Where != "" {
					q += " WHERE " + r.Where
				}
				var n int64
				if err := p.srcSide.DB.QueryRowContext(ctx, q, r.Args...).Scan(&n); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				sp.Observe(r, n)
				total += n
			}
			if total != 95 || len(ranges) < tc.minRanges {
				t.Fatalf("got %d rows in %d ranges, want 95 in at least %d", total, len(ranges), tc.minRanges)
			}
			replay := []json.RawMessage{}
			for _, r := range ranges[:min(3, len(ranges))] {
				replay = append(replay, r.Bounds)
			}
			again, err := NewSplitter(ctx, p.srcSide.DB, tbl, SplitOptions{Rows: 10, Replay: replay})
			if err != nil {
				t.Fatal(err)
			}
			for i := range replay {
				r, err := again.Next(ctx)
				if err != nil || r == nil || r.Seq != ranges[i].Seq || r.Where != ranges[i].Where || fmt.Sprint(r.Args) != fmt.Sprint(ranges[i].Args) {
					t.Fatalf("replayed range %d: got %+v (%v), want %+v", i, r, err, ranges[i])
				}
			}
		})
	}
}
