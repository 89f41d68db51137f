package replay

import (
	"bytes"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/stats"
)

// TestWriteHTML: the page is framed by render (one stylesheet, the body
// class that picks replay's part of it), its text is escaped, and each
// verdict cell carries the class the stylesheet colours it by.
func TestWriteHTML(t *testing.T) {
	rep := &Report{
		Capture:    "slow<1>.capture",
		Control:    TargetInfo{Name: "old", URL: "mysql://u@old:3306/"},
		Candidates: []TargetInfo{{Name: "new", URL: "mysql://u@new:3306/"}, {Name: "next", URL: "mysql://u@next:3306/"}},
		Fingerprints: []Fingerprint{{Fingerprint: "SELECT ? FROM <t>", Digest: "d1", Count: 9,
			Candidates: []CandidFig{{Name: "new", Verdict: stats.Slower, LatencyRatio: 1.4, RatioLow: 1.2, RatioHigh: 1.6}, {Name: "next", Verdict: stats.NoVerdict}}}},
		VerdictRule: "a rule",
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, rep); err != nil {
		t.Fatalf("WriteHTML: got %v, want nil", err)
	}
	page := b.String()
	for _, want := range []string{
		"<title>shakedown replay: slow&lt;1&gt;.capture</title>",
		`<body class="replay">`,
		"SELECT ? FROM &lt;t&gt;",
		`<td class="l slower">slower</td>`,
		`<td class="l nodata">no verdict</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("got page\n%s\nwant %q in it", page, want)
		}
	}
	for mark, want := range map[string]int{"<!DOCTYPE": 1, "<style": 1, "</html>": 1, "<script": 0} {
		if got := strings.Count(page, mark); got != want {
			t.Errorf("got %d %q, want %d", got, mark, want)
		}
	}
}
