package monitor

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/golden"
	"github.com/shakedown/shakedown/internal/result"
)

func TestTableGolden(t *testing.T) {
	prev := reading(0, "Questions", 0, "Com_select", 0, "Com_insert", 0, "Com_commit", 0, "Threads_running", 1, "Threads_connected", 17,
		"Innodb_buffer_pool_read_requests", 0, "Innodb_buffer_pool_reads", 0, "Bytes_sent", 0, "Innodb_history_list_length", 12,
		"host.cpu.user", 0, "host.cpu.nice", 0, "host.cpu.system", 0, "host.cpu.idle", 0, "host.cpu.iowait", 0, "host.cpu.irq", 0, "host.cpu.softirq", 0, "host.cpu.steal", 0,
		"proc.server.cpu_s", 0)
	cur := reading(time.Second, "Questions", 123456, "Com_select", 100000, "Com_insert", 2500, "Com_commit", 6000, "Threads_running", 9, "Threads_connected", 17,
		"Innodb_buffer_pool_read_requests", 500000, "Innodb_buffer_pool_reads", 7000, "Bytes_sent", 3<<20, "Innodb_history_list_length", 250000,
		"host.cpu.user", 120, "host.cpu.nice", 0, "host.cpu.system", 40, "host.cpu.idle", 30, "host.cpu.iowait", 10, "host.cpu.irq", 0, "host.cpu.softirq", 0, "host.cpu.steal", 0,
		"proc.server.cpu_s", 1.5)
	cur.Failed = map[string]string{"innodb": "read innodb status: access denied"}
	s1 := compute(prev, cur, Limits{Cores: 8})
	s1.Wall = time.Time{}
	s1.AtS = 1
	s2 := compute(cur, cur, Limits{Cores: 8})
	s2.Wall = time.Time{}
	s2.AtS = 2

	var b bytes.Buffer
	tb := NewTable(&b, true)
	tb.Every = 2
	for _, s := range []result.Sample{s1, s2, s1} {
		if err := tb.Write(s); err != nil {
			t.Fatal(err)
		}
	}
	golden.Check(t, "table.golden", b.Bytes())
}

func TestFormatCell(t *testing.T) {
	qps, _ := LookupColumn("qps")
	hit, _ := LookupColumn("bp_hit")
	kb, _ := LookupColumn("bytes_sent")
	ck, _ := LookupColumn("checkpoint_age")
	cases := []struct {
		v    float64
		c    Column
		want string
	}{
		{12.4, qps, "12"}, {999999, qps, "999999"}, {1234567, qps, "1235k"}, {12345678, qps, "12346k"}, {123456789, qps, "123.5m"},
		{99.5, hit, "99.50"}, {100, hit, "100.00"}, {2048, kb, "2"}, {3 << 20, ck, "3"},
		{5e12, qps, "5000g"},
	}
	for _, tc := range cases {
		if got := formatCell(tc.v, tc.c); got != tc.want {
			t.Errorf("formatCell(%g, %s): got %q, want %q", tc.v, tc.c.Key, got, tc.want)
		}
	}
}

// errAfter fails every write after the first n bytes.
type errAfter struct{ n int }

func (e *errAfter) Write(p []byte) (int, error) {
	if e.n -= len(p); e.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestTableReportsWriteErrors(t *testing.T) {
	tb := NewTable(&errAfter{n: 10}, false)
	if err := tb.Write(result.Sample{Values: map[string]float64{}}); err == nil {
		t.Errorf("got no error, want the writer's")
	}
}

// fakeSource counts up a status counter by 10 on every read.
type fakeSource struct{ n float64 }

func (f *fakeSource) Name() string { return "status" }
func (f *fakeSource) Read(_ context.Context, q *OwnQuerier, r *Reading) error {
	f.n += 10
	r.Values["Com_select"] = f.n
	return nil
}

func TestRecordCollectsASeries(t *testing.T) {
	s := NewSamplerWith(nil, Options{}, &fakeSource{})
	got := make(chan result.Sample, 100)
	rec := s.Record(context.Background(), 10*time.Millisecond, func(smp result.Sample) { got <- smp })
	deadline := time.After(5 * time.Second)
	for n := 0; n < 3; {
		select {
		case <-got:
			n++
		case <-deadline:
			t.Fatal("no three samples within 5s")
		}
	}
	series := rec.Stop()
	if again := rec.Stop(); again != series {
		t.Errorf("second Stop: got another series, want the same")
	}
	if len(series.Samples) < 3 {
		t.Fatalf("samples: got %d, want at least 3", len(series.Samples))
	}
	for i, smp := range series.Samples {
		if smp.Values["sel"] <= 0 || smp.ElapsedS <= 0 {
			t.Errorf("sample %d: got %+v, want a positive rate and interval", i, smp)
		}
		if i > 0 && smp.AtS <= series.Samples[i-1].AtS {
			t.Errorf("sample %d: t_s %g not after %g", i, smp.AtS, series.Samples[i-1].AtS)
		}
	}
	if len(series.Keys) == 0 || series.Keys[0] != "sel" {
		t.Errorf("keys: got %v, want sel first", series.Keys)
	}
	if series.Sources[0].Name != "status" || series.Sources[0].Reads < 4 {
		t.Errorf("sources: got %+v, want status with the baseline and 3+ reads", series.Sources)
	}
	start := series.Start.Add(time.Second)
	series.Shift(start)
	if got := series.Samples[0].AtS; got > 0 {
		t.Errorf("after Shift by 1s: first t_s got %g, want negative", got)
	}
}

// TestTableFitsWidth: at a given width every line fits, the most useful
// columns are kept, and a mark on a column left out is explained in words,
// never as a column that is not there.
func TestTableFitsWidth(t *testing.T) {
	prev := reading(0, "Questions", 0, "Com_commit", 0, "Threads_running", 1, "Threads_connected", 17,
		"host.cpu.user", 0, "host.cpu.nice", 0, "host.cpu.system", 0, "host.cpu.idle", 0, "host.cpu.iowait", 0, "host.cpu.irq", 0, "host.cpu.softirq", 0, "host.cpu.steal", 0,
		"proc.server.cpu_s", 0)
	cur := reading(time.Second, "Questions", 20000, "Com_commit", 1000, "Threads_running", 3, "Threads_connected", 17,
		"host.cpu.user", 150, "host.cpu.nice", 0, "host.cpu.system", 49, "host.cpu.idle", 1, "host.cpu.iowait", 0, "host.cpu.irq", 0, "host.cpu.softirq", 0, "host.cpu.steal", 0,
		"proc.server.cpu_s", 1.2)
	s := compute(prev, cur, Limits{Cores: 2})
	if _, ok := s.Attention["cpu_idle"]; !ok {
		t.Fatalf("the sample has no attention on cpu_idle (%v): the test needs one", s.Attention)
	}
	cases := []struct {
		name     string
		host     bool
		width    int
		want     []string // headings that must be there
		notWant  []string
		wantNote string
	}{
		{"80 columns, local server", true, 80, []string{"qps", "tps", "run", "con", "srv%", "usr", "sys", "hit%"}, []string{"idle", "sentKB"},
			"host CPU saturated by the server (srv%) (seen in host cpu% idle, which watch"},
		{"80 columns, remote server", false, 80, []string{"qps", "tps", "sel", "ins", "run", "con", "hit%", "read", "fsync"}, []string{"usr", "srv%"}, ""},
		{"120 columns", true, 120, []string{"qps", "sel", "del", "fsync", "srv%"}, []string{"idle"}, "host CPU saturated by the server (srv%) (seen in host cpu% idle, which watch --wide shows)"},
		{"160 columns", true, 160, []string{"qps", "hist", "idle", "reqs"}, nil, "host cpu% idle: host CPU saturated"},
		{"wide", true, 0, []string{"qps", "sentKB", "ckptMB", "idle", "stl", "srv%"}, nil, "host cpu% idle: host CPU saturated"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tb := NewTableWidth(&b, tc.host, tc.width)
			tb.Interval = time.Second
			label := time.Date(2026, 11, 22, 12, 0, 15, 0, time.UTC)
			if err := tb.WriteAt(s, label); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			for _, l := range lines { // the legend, headings, the sample, notes
				if tc.width > 0 && len(l) > tc.width {
					t.Errorf("line of %d characters, want at most %d: %q", len(l), tc.width, l)
				}
			}
			hi := headingLine(t, lines)
			head := lines[hi]
			for _, w := range tc.want {
				if !strings.Contains(head, w) {
					t.Errorf("heading %q: want column %s", head, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(head, " "+w) {
					t.Errorf("heading %q: want no column %s", head, w)
				}
			}
			if !strings.HasPrefix(lines[hi+1], "12:00:15 ") {
				t.Errorf("sample line %q: want the label 12:00:15", lines[hi+1])
			}
			if tc.wantNote != "" && !strings.Contains(strings.Join(strings.Fields(out), " "), tc.wantNote) {
				t.Errorf("notes:\n%s\nwant %q", out, tc.wantNote)
			}
			if strings.Contains(out, "\n  *  ") {
				t.Errorf("a note with two spaces after its mark:\n%s", out)
			}
			if !tc.host {
				return
			}
			if strings.Contains(out, "* host cpu% idle:") && !strings.Contains(head, "idle") {
				t.Errorf("a note is written as if the idle column were shown:\n%s", out)
			}
		})
	}
}

func TestTableLabels(t *testing.T) {
	cases := []struct {
		name     string
		interval time.Duration
		label    time.Time
		want     string
	}{
		{"a second", time.Second, time.Date(2026, 1, 1, 21, 5, 11, 0, time.UTC), "21:05:11 "},
		{"tenths", 250 * time.Millisecond, time.Date(2026, 1, 1, 21, 5, 11, 500e6, time.UTC), "05:11.5  "},
	}
	for _, tc := range cases {
		var b bytes.Buffer
		tb := NewTableWidth(&b, false, 80)
		tb.Interval = tc.interval
		if err := tb.WriteAt(result.Sample{Values: map[string]float64{}}, tc.label); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(b.String(), "\n")
		if l := lines[headingLine(t, lines)+1]; !strings.HasPrefix(l, tc.want) {
			t.Errorf("%s: got %q, want it to start with %q", tc.name, l, tc.want)
		}
	}
}

// headingLine is the index of the column heading line ("time  | ...").
func headingLine(t *testing.T, lines []string) int {
	t.Helper()
	for i, l := range lines {
		if strings.HasPrefix(l, "time ") {
			return i
		}
	}
	t.Fatalf("no heading line in %q", lines)
	return 0
}
