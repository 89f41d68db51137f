package result

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func TestStallWriteFullKeepsEverything(t *testing.T) {
	st := Stall{Reasons: []string{"qps<50%"}, Sections: []StallSection{
		{Name: "processlist", Columns: []string{"Id"}},
		{Name: "innodb_status", Text: "TRANSACTIONS\n---TRANSACTION 99, ACTIVE 3 sec\n"},
	}}
	for i := 0; i < stallRowsShown+3; i++ {
		st.Sections[0].Rows = append(st.Sections[0].Rows, []string{fmt.Sprint(100 + i)})
	}
	last := fmt.Sprint(100 + stallRowsShown + 2)
	cases := []struct {
		name    string
		write   func(*Stall, *bytes.Buffer)
		want    []string
		notWant []string
	}{
		{"summary cuts", func(s *Stall, b *bytes.Buffer) { s.Write(b, 1) }, []string{"... 3 more, kept with the result", "2 lines, kept with the result"}, []string{last, "ACTIVE 3 sec"}},
		{"full keeps", func(s *Stall, b *bytes.Buffer) { s.WriteFull(b, 1) }, []string{"      " + last, "      ---TRANSACTION 99, ACTIVE 3 sec"}, []string{"more, kept", "kept with the result"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tc.write(&st, &b)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("got no %q in\n%s", w, b.String())
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(b.String(), w) {
					t.Errorf("got %q, want it left out, in\n%s", w, b.String())
				}
			}
		})
	}
}
