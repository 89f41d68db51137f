package host

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []int
		wantErr  string
	}{
		{"one", "0", []int{0}, ""},
		{"range", "0-3", []int{0, 1, 2, 3}, ""},
		{"list and range", "6,0-2", []int{0, 1, 2, 6}, ""},
		{"repeats collapse", "1,1,0-1", []int{0, 1}, ""},
		{"spaces", " 0 , 2 ", []int{0, 2}, ""},
		{"empty", "", nil, "empty CPU list"},
		{"word", "all", nil, `"all" is not a CPU number`},
		{"negative", "-1", nil, "is not a CPU number"},
		{"backwards", "3-1", nil, `range "3-1" runs backwards`},
		{"trailing comma", "0,", nil, `"" is not a CPU number`},
		{"open range", "2-", nil, `"2-" is not a CPU number`},
		{"huge", "0-99999999", nil, "no machine has that many"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCPUList(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseCPUList(%q): got %v, %v; want error with %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseCPUList(%q): got %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}
