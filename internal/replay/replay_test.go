package replay

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/capture"
	"github.com/shakedown/shakedown/internal/fingerprint"
	runres "github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stats"
	"github.com/shakedown/shakedown/internal/target"
)

func TestCompare(t *testing.T) {
	base := func() result {
		return result{warnings: 0, rows: 3, cols: []column{{"id", "INT"}}, seqHash: 1, setHash: 10, keyHash: 100, keysOK: true}
	}
	plain := &fingerprint.Info{}
	ordered := &fingerprint.Info{Ordered: true}
	orderedLimit := &fingerprint.Info{Ordered: true, Limit: true}
	nondet := &fingerprint.Info{NonDeterministic: "NOW()"}
	tests := []struct {
		name    string
		info    *fingerprint.Info
		change  func(c *result)
		outcome Outcome
		kind    string
		newErr  bool
	}{
		{"same", plain, func(c *result) {}, Same, "", false},
		{"row order ignored", plain, func(c *result) { c.seqHash = 2 }, Same, "", false},
		{"rows", plain, func(c *result) { c.setHash = 11 }, Different, "rows", false},
		{"row count", plain, func(c *result) { c.rows = 4 }, Different, "row count", false},
		{"column types", plain, func(c *result) { c.cols = []column{{"id", "BIGINT"}} }, Different, "column types: id INT, BIGINT", false},
		{"a type and the values", plain, func(c *result) { c.cols, c.setHash = []column{{"id", "BIGINT"}}, 11 }, Different, "rows; column types: id INT, BIGINT", false},
		{"column names in another case", plain, func(c *result) { c.cols = []column{{"ID", "INT"}} }, Same, "", false},
		{"column names", plain, func(c *result) { c.cols = []column{{"num", "INT"}} }, Different, "column names: id, num", false},
		{"column count", plain, func(c *result) { c.cols = nil }, Different, "column count (1, 0)", false},
		{"warnings", plain, func(c *result) { c.warnings = 1 }, Different, "warnings", false},
		{"warnings unknown", plain, func(c *result) { c.warnings = -1 }, Same, "", false},
		{"new error", plain, func(c *result) { c.errCode = 1055 }, Different, "error on the candidate only (1055)", true},
		{"ordered: order differs", ordered, func(c *result) { c.seqHash, c.keyHash = 2, 101 }, Different, "row order", false},
		{"ordered: ties reordered", ordered, func(c *result) { c.seqHash = 2 }, Same, "", false},
		{"ordered limit: ties cut", orderedLimit, func(c *result) { c.seqHash, c.setHash = 2, 11 }, NotComparable, "ORDER BY ... LIMIT cuts through ties", false},
		{"ordered limit: keys differ", orderedLimit, func(c *result) { c.seqHash, c.setHash, c.keyHash = 2, 11, 101 }, Different, "rows", false},
		{"non-deterministic", nondet, func(c *result) { c.setHash = 11 }, NonDeterministic, "rows", false},
		{"non-deterministic error", nondet, func(c *result) { c.errCode = 1064 }, Different, "error on the candidate only (1064)", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, c := base(), base()
			tc.change(&c)
			got := compare(&r, &c, tc.info)
			if got.outcome != tc.outcome || got.kind != tc.kind || got.newErr != tc.newErr {
				t.Errorf("got %v %q new error %v, want %v %q %v", got.outcome, got.kind, got.newErr, tc.outcome, tc.kind, tc.newErr)
			}
		})
	}
	r, c := base(), base()
	r.cols, c.cols = []column{{"'a' = 'a '", "INT"}}, []column{{":vtg1 /* VARCHAR */ = :vtg2 /* VARCHAR */", "INT"}}
	if got := compare(&r, &c, plain); got.outcome != Same {
		t.Errorf("an expression's name with literals against vtgate's: got %v %q, want Same", got.outcome, got.kind)
	}
	// The same error on both sides is no difference.
	r, c = base(), base()
	r.errCode, c.errCode = 1146, 1146
	if got := compare(&r, &c, plain); got.outcome != Same {
		t.Errorf("same error on both: got %v, want Same", got.outcome)
	}
}

func TestLatencyVerdict(t *testing.T) {
	series := func(n int, base float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = base * (1 + 0.02*float64(i%5))
		}
		return out
	}
	tests := []struct {
		name       string
		ctl, cand  []float64
		state      stats.State
		ratioAbove float64
		ratioBelow float64
	}{
		{"too few", series(5, 1), series(5, 1), stats.NoVerdict, 0, 1},
		{"same", series(200, 1), series(200, 1), stats.Same, 0.95, 1.05},
		{"slower", series(200, 1), series(200, 5), stats.Slower, 4.5, 5.5},
		{"faster", series(200, 4), series(200, 1), stats.Faster, 0.2, 0.3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ratio, lo, hi, state := LatencyVerdict(tc.ctl, tc.cand)
			if state != tc.state || ratio < tc.ratioAbove || ratio > tc.ratioBelow {
				t.Errorf("got ratio %.3f [%.3f-%.3f] %s, want %s with a ratio in %.2f-%.2f", ratio, lo, hi, state, tc.state, tc.ratioAbove, tc.ratioBelow)
			}
			if state != stats.NoVerdict && !(lo <= ratio && ratio <= hi) {
				t.Errorf("ratio %.3f outside its interval [%.3f-%.3f]", ratio, lo, hi)
			}
		})
	}
}

func TestResolveKeys(t *testing.T) {
	names := []string{"id", "Name", "total"}
	tests := []struct {
		keys []string
		want string
	}{
		{[]string{"name", "#1"}, "[1 0]"},
		{[]string{"missing"}, "[]"},
		{[]string{""}, "[]"},
		{[]string{"#9"}, "[]"},
	}
	for _, tc := range tests {
		got := resolveKeys(tc.keys, names)
		if s := strings.ReplaceAll(strings.TrimSpace(fmtInts(got)), "  ", " "); s != tc.want {
			t.Errorf("%v: got %s, want %s", tc.keys, s, tc.want)
		}
	}
}

func fmtInts(x []int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range x {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(string(rune('0' + v)))
	}
	b.WriteByte(']')
	return b.String()
}

// TestClientBoundReplayHasNoVerdict: where the client limited the replay,
// a latency verdict the interval would give does not stand: it is
// inconclusive (client-bound), in the document, the text and the page,
// which say why; unbound, the same figures give their verdict.
func TestClientBoundReplayHasNoVerdict(t *testing.T) {
	st := &stmt{rec: &capture.Record{SQL: "SELECT 1"}, info: fingerprint.NewAnalyzer().Info("SELECT 1")}
	var targets []Target
	for _, name := range []string{"old", "new"} {
		tg, err := target.Parse("mysql://u@" + name + ":3306/")
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, Target{Name: name, Target: tg})
	}
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		bound bool
		want  string
	}{
		{false, "slower"},
		{true, "inconclusive (client-bound)"},
	} {
		e := &engine{tally: newTally(2)}
		for i := range 100 {
			d := time.Duration(100+i%7) * time.Microsecond
			e.tally.add(st, []result{{dur: d, warnings: -1}, {dur: 3 * d, warnings: -1}})
		}
		io := &runres.ClientIO{Asked: "auto", Mode: "loop", Loops: 2, Held: true}
		rep := e.report(nil, targets, start, start.Add(time.Second), &runres.Client{Bound: tc.bound, Cores: 1, CPUPct: 97, IO: io})
		c := rep.Fingerprints[0].Candidates[0]
		if c.VerdictNote() != tc.want || c.LatencyRatio < 2.5 {
			t.Errorf("bound %v: got %s at x%.2f, want %s: the figures kept, the verdict withheld", tc.bound, c.VerdictNote(), c.LatencyRatio, tc.want)
		}
		var text, page bytes.Buffer
		if err := WriteText(&text, rep, 10); err != nil {
			t.Fatal(err)
		}
		if err := WriteHTML(&page, rep); err != nil {
			t.Fatal(err)
		}
		for what, out := range map[string]string{"text": text.String(), "page": page.String()} {
			if !strings.Contains(out, tc.want) || !strings.Contains(out, io.String()) || strings.Contains(out, "client limited this replay") != tc.bound {
				t.Errorf("bound %v, %s: want %q, the client's I/O, and the client-bound note only where bound:\n%s", tc.bound, what, tc.want, out)
			}
		}
	}
}
