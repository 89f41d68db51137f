package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/bench"
)

// TestYAMLErrorLines checks that a syntax error is reported on the line
// that holds the mistake, not where the list or mapping around it began.
func TestYAMLErrorLines(t *testing.T) {
	const head = "name: x\n" + // 1
		"targets:\n" + // 2
		"  - name: a\n" + // 3
		"    url: mysql://u@127.0.0.1:3306/sbtest\n" // 4
	cases := []struct {
		name     string
		src      string
		wantLine int
		wantMsg  string
	}{
		{"list item indented one space too far", head +
			"    role: control\n" + // 5
			"   - name: b\n" + // 6
			"     url: mysql://u@127.0.0.1:3307/sbtest\n" +
			"workloads: [oltp_point_select]\nthreads: [1]\n",
			6, "is not indented like the lines of the list"},
		{"a tab in the indentation", "name: x\n" + // 1
			"targets:\n" + // 2
			"  - name: a\n" + // 3
			"\turl: mysql://u@127.0.0.1:3306/sbtest\n" + // 4
			"workloads: [oltp_point_select]\nthreads: [1]\n",
			4, "indent with spaces, not tabs"},
		{"a [ list not closed", head +
			"    role: control\n" + // 5
			"workloads: [oltp_point_select]\n" + // 6
			"threads: [1, 4\n" + // 7
			"time: 3\n" +
			"repeats: 1\n",
			7, "is not closed with ]"},
		{"a key under a scalar", head +
			"    role: control\n" + // 5
			"  - name: b\n" + // 6
			"      url: mysql://u@127.0.0.1:3307/sbtest\n" + // 7
			"workloads: [oltp_point_select]\nthreads: [1]\n",
			7, "check this line's indentation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("p.yaml", []byte(tc.src), env(nil), bench.Grammar{})
			var pe *Error
			if !errors.As(err, &pe) || len(pe.Problems) != 1 {
				t.Fatalf("got %v, want one problem", err)
			}
			p := pe.Problems[0]
			if p.Line != tc.wantLine {
				t.Errorf("line: got %d, want %d (%s)", p.Line, tc.wantLine, p.Msg)
			}
			if !strings.Contains(p.Msg, tc.wantMsg) {
				t.Errorf("message: got %q, want it to contain %q", p.Msg, tc.wantMsg)
			}
		})
	}
}
