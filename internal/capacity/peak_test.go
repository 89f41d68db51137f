package capacity

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/monitor"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/workload"
)

// writeWatchFile writes what watch --json writes for samples of qps and
// tps a second apart from at, and returns its path.
func writeWatchFile(t *testing.T, at time.Time, qps, tps []float64) string {
	t.Helper()
	var b strings.Builder
	for i := range qps {
		s := result.Sample{AtS: float64(i + 1), ElapsedS: 1, Values: map[string]float64{"qps": qps[i], "tps": tps[i]}, Wall: at.Add(time.Duration(i) * time.Second)}
		line, err := json.Marshal(monitor.Record(s))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), "prod.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadPeak(t *testing.T) {
	at := time.Date(2026, 11, 25, 20, 14, 56, 0, time.UTC)
	file := writeWatchFile(t, at, []float64{742, 2127, 915}, []float64{39, 106, 146})
	empty := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	idle := writeWatchFile(t, at, []float64{5, 7}, []float64{0, 0})
	tx := []Target{{Workload: "oltp_read_write", Event: workload.EventTransaction}}
	st := []Target{{Workload: "oltp_point_select", Event: workload.EventStatement}}
	unknown := []Target{{Workload: "bulk_insert"}}
	cases := []struct {
		name    string
		arg     string
		dir     string // where a relative file is read from
		targets []Target
		want    float64
		figure  string // the watch figure read; "" for a number
		err     string // a part of the bad input's message; "" for none
	}{
		{name: "none", arg: "", targets: tx},
		{name: "a number", arg: "1200.5", targets: unknown, want: 1200.5},
		{name: "a number with a suffix", arg: "1200 qps", targets: unknown, want: 1200},
		{name: "a number a second", arg: "1200/s", targets: tx, want: 1200},
		{name: "a number of tps, unspaced", arg: "35.5tps", targets: st, want: 35.5},
		{name: "zero is no peak", arg: "0", targets: tx},
		{name: "a negative number with a suffix", arg: "-3 eps", targets: tx, err: "-3 eps: the production peak must be a number >= 0"},
		{name: "a negative number", arg: "-3", targets: tx, err: "must be a number >= 0"},
		{name: "not a number", arg: "NaN", targets: tx, err: "must be a number >= 0"},
		{name: "transactions read tps", arg: file, targets: tx, want: 146, figure: "tps"},
		{name: "statements read qps", arg: file, targets: st, want: 2127, figure: "qps"},
		{name: "a relative file from dir", arg: filepath.Base(file), dir: filepath.Dir(file), targets: st, want: 2127, figure: "qps"},
		{name: "an absolute file ignores dir", arg: file, dir: t.TempDir(), targets: tx, want: 146, figure: "tps"},
		{name: "a relative file missing from dir", arg: "prod.jsonl", dir: filepath.Dir(empty), targets: tx, err: filepath.Join(filepath.Dir(empty), "prod.jsonl") + ": no such file"},
		{name: "an event of unknown kind", arg: file, targets: unknown, err: "an event of bulk_insert is neither one transaction nor one statement"},
		{name: "a missing file", arg: file + ".x", targets: tx, err: file + ".x: no such file"},
		{name: "a file whose figure is always 0", arg: idle, targets: tx, err: "tps is 0 in all its 2 samples: the file recorded no transactions"},
		{name: "an empty file", arg: empty, targets: st, err: empty + ": holds no sample"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, from, err := ReadPeak(c.arg, c.dir, c.targets)
			if c.err != "" {
				if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got error %v, want bad input containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if got != c.want {
				t.Errorf("got peak %g, want %g", got, c.want)
			}
			switch {
			case c.figure == "" && from != nil:
				t.Errorf("got a source %+v, want none for %q", from, c.arg)
			case c.figure != "" && (from == nil || from.Key != c.figure || from.File != file || from.Samples != 3):
				t.Errorf("got source %+v, want %s of 3 samples in %s", from, c.figure, file)
			}
		})
	}
}

func TestPeakText(t *testing.T) {
	at := time.Date(2026, 11, 25, 20, 14, 57, 0, time.UTC)
	r := &Report{Workload: "oltp_point_select", Peak: 2127, PeakFrom: &monitor.WatchPeak{File: "prod.jsonl", Key: "qps", Value: 2127, At: at, Line: 2, Samples: 3}}
	want := "Production peak 2127.0/s: the highest qps (statements a second, one an event of oltp_point_select) of the 3 samples in prod.jsonl, at 2026-11-25 20:14:57 UTC (line 2)"
	if got := r.PeakText(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	var b strings.Builder
	r.WriteText(&b)
	if !strings.Contains(b.String(), "\n"+want+"\n") {
		t.Errorf("text report: got %q, want the line %q", b.String(), want)
	}
	if got := (&Report{Peak: 50}).PeakText(); got != "" {
		t.Errorf("a peak given as a number: got %q, want \"\"", got)
	}
}
