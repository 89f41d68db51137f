package monitor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/usage"
)

// watchJSON is what watch --json writes for one sample with values at.
func watchJSON(t testing.TB, at time.Time, values map[string]float64) string {
	t.Helper()
	b, err := json.Marshal(Record(result.Sample{AtS: 1, ElapsedS: 1, Values: values, Wall: at}))
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func TestReadWatchPeak(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 20, 14, 56, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	three := watchJSON(t, at(0), map[string]float64{"qps": 742, "tps": 39}) +
		watchJSON(t, at(1), map[string]float64{"qps": 2127, "tps": 106}) +
		`{"stall":{"n":1}}` + "\n\n" +
		watchJSON(t, at(2), map[string]float64{"qps": 915, "tps": 146})
	cases := []struct {
		name, in, key string
		want          WatchPeak // File and Key are the case's
		err           string    // a part of the error; "" for none
	}{
		{name: "qps peak", in: three, key: "qps", want: WatchPeak{Value: 2127, At: at(1), Line: 2, Samples: 3}},
		{name: "tps peak after a stall line", in: three, key: "tps", want: WatchPeak{Value: 146, At: at(2), Line: 5, Samples: 3}},
		{name: "samples without the figure are skipped", key: "tps",
			in:   watchJSON(t, at(0), map[string]float64{"qps": 5}) + watchJSON(t, at(1), map[string]float64{"qps": 6, "tps": 2}),
			want: WatchPeak{Value: 2, At: at(1), Line: 2, Samples: 1}},
		{name: "zero is a peak", in: watchJSON(t, at(0), map[string]float64{"qps": 0}), key: "qps", want: WatchPeak{At: at(0), Line: 1, Samples: 1}},
		{name: "empty", in: "", key: "qps", err: "prod.jsonl: holds no sample"},
		{name: "only stalls", in: `{"stall":{}}` + "\n", key: "qps", err: "prod.jsonl: holds no sample"},
		{name: "no sample holds the figure", in: watchJSON(t, at(0), map[string]float64{"qps": 5}), key: "tps", err: "none of its 1 samples holds tps"},
		{name: "the table, not JSON", in: "watching mysql://x every 1s\n", key: "qps", err: "prod.jsonl: line 1: not a JSON object"},
		{name: "malformed second line", in: watchJSON(t, at(0), map[string]float64{"qps": 5}) + `{"time":` + "\n", key: "qps", err: "prod.jsonl: line 2: not a JSON object"},
		{name: "an object that is not a sample", in: `{"time":"2026-11-25T20:14:56Z"}` + "\n", key: "qps", err: `line 1: not a sample of watch --json`},
		{name: "a sample without time", in: `{"v":{"qps":1}}` + "\n", key: "qps", err: `line 1: a sample without its "time"`},
		{name: "a string figure", in: `{"time":"2026-11-25T20:14:56Z","v":{"qps":"9"}}` + "\n", key: "qps", err: "line 1: not a JSON object"},
		{name: "a negative figure", in: watchJSON(t, at(0), map[string]float64{"qps": -3}), key: "qps", err: "line 1: qps is negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadWatchPeak(strings.NewReader(c.in), "prod.jsonl", c.key)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !usage.Is(err) {
					t.Fatalf("got error %v, want bad input containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			c.want.File, c.want.Key = "prod.jsonl", c.key
			if !got.At.Equal(c.want.At) {
				t.Errorf("got time %v, want %v", got.At, c.want.At)
			}
			got.At, c.want.At = time.Time{}, time.Time{}
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestReadWatchPeakFile(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, "long.jsonl")
	if err := os.WriteFile(long, []byte(strings.Repeat("x", maxWatchLine+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, path, err string }{
		{"missing", filepath.Join(dir, "nope.jsonl"), "nope.jsonl: no such file or directory"},
		{"a directory", dir, "line 1: read " + dir + ": is a directory"},
		{"a line too long", long, "long.jsonl: line 1: bufio.Scanner: token too long"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadWatchPeakFile(c.path, "qps")
			if err == nil || !strings.Contains(err.Error(), c.err) || !usage.Is(err) {
				t.Fatalf("got error %v, want bad input containing %q", err, c.err)
			}
		})
	}
}

// FuzzReadWatchPeak feeds the reader any text: it never panics, an error
// is always bad input that names the file, and a peak is the highest of
// the figure's values, read from a line of the file, with at least one
// sample counted.
func FuzzReadWatchPeak(f *testing.F) {
	f.Add(watchJSON(f, time.Unix(1e9, 0), map[string]float64{"qps": 3, "tps": 1}), "qps")
	f.Fuzz(func(t *testing.T, in, key string) {
		p, err := ReadWatchPeak(strings.NewReader(in), "f.jsonl", key)
		if err != nil {
			if !usage.Is(err) || !strings.HasPrefix(err.Error(), "f.jsonl: ") {
				t.Fatalf("got error %v, want bad input naming f.jsonl", err)
			}
			return
		}
		if p.Samples < 1 || p.Line < 1 || p.Line > strings.Count(in, "\n")+1 || p.Value < 0 || p.At.IsZero() {
			t.Fatalf("got %+v, want a peak from a line of the file and at least one sample", p)
		}
	})
}
