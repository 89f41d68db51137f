package follow

import (
	"fmt"
	"testing"
)

func TestCollapse(t *testing.T) {
	a := &table{name: "a", key: []int{0}}
	b := &table{name: "b", key: []int{0, 1}}
	row := func(v ...any) []any { return v }
	work := []change{
		{t: a, row: row(int64(1), "x")},
		{t: b, row: row(int64(1), int64(1), "p")},
		{t: a, row: row(int64(2), "y")},
		{t: a, row: row(int64(1), "x2")},
		{t: b, row: row(int64(1), int64(2), "q"), delete: true},
		{t: a, row: row(int64(2), nil), delete: true},
		{t: b, row: row(int64(1), int64(1), "p2")},
	}
	got := ""
	for _, c := range collapse(work) {
		op := "w"
		if c.delete {
			op = "d"
		}
		got += fmt.Sprintf("%s%s%v ", c.t.name, op, c.row)
	}
	// The last change of each row, by table in the order first seen,
	// deletes first.
	want := "ad[2 <nil>] aw[1 x2] bd[1 2 q] bw[1 1 p2] "
	if got != want {
		t.Errorf("collapse: got %q, want %q", got, want)
	}
}
