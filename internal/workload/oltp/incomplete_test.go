package oltp

import (
	"reflect"
	"testing"
)

func TestIncompleteTables(t *testing.T) {
	cases := []struct {
		name      string
		created   []bool
		rows      []int64
		indexed   []bool
		secondary bool
		want      []string
	}{
		{"nothing created", []bool{false, false}, []int64{0, 0}, nil, false, nil},
		{"complete", []bool{true, true}, []int64{2000, 2000}, nil, false, nil},
		{"runs of tables", []bool{true, true, true, true, true}, []int64{2000, 1000, 0, 0, 0}, nil, false,
			[]string{"sbtest2 holds 1000 of 2000 rows", "sbtest3 to sbtest5 hold 0 of 2000 rows"}},
		{"two alike", []bool{true, true, false}, []int64{0, 0, 0}, nil, false,
			[]string{"sbtest1 and sbtest2 hold 0 of 2000 rows", "sbtest3 was not created"}},
		{"index missing", []bool{true, true}, []int64{2000, 2000}, []bool{true, false}, true,
			[]string{"sbtest2 lacks the secondary index"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			o.Tables, o.TableSize, o.CreateSecondary = len(tc.created), 2000, tc.secondary
			l := &loader{opts: &o, progress: make([]tableProgress, len(tc.created))}
			for i := range tc.created {
				l.progress[i].created.Store(tc.created[i])
				l.progress[i].rows.Store(tc.rows[i])
				if tc.indexed != nil {
					l.progress[i].indexed.Store(tc.indexed[i])
				}
			}
			if got := l.incomplete(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
