package stall

import (
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/result"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want []Trigger
	}{
		{"default", "", []Trigger{{Metric: "threads_running", Limit: 25, For: 5 * time.Second, Text: DefaultSpec}}},
		{"flag alone", "default", []Trigger{{Metric: "threads_running", Limit: 25, For: 5 * time.Second, Text: DefaultSpec}}},
		{"relative qps", "qps<50%", []Trigger{{Metric: "qps", Less: true, Limit: 0.5, Relative: true, Text: "qps<50%"}}},
		{"absolute qps", "qps<100 for 3s", []Trigger{{Metric: "qps", Less: true, Limit: 100, For: 3 * time.Second, Text: "qps<100 for 3s"}}},
		{"latency", "p99>200ms", []Trigger{{Metric: "p99", Limit: 200, Text: "p99>200ms"}}},
		{"several", "threads_running>2 for 2s, p99.9>1s", []Trigger{
			{Metric: "threads_running", Limit: 2, For: 2 * time.Second, Text: "threads_running>2 for 2s"},
			{Metric: "p99.9", Limit: 1000, Text: "p99.9>1s"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d triggers %+v, want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("trigger %d: got %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestParseErrorsNameTheToken(t *testing.T) {
	tests := []struct{ name, spec, token string }{
		{"unknown figure", "qpz<5", `"qpz<5"`},
		{"no comparison", "threads_running", `"threads_running"`},
		{"bad duration", "threads_running>5 for soon", `"threads_running>5 for soon"`},
		{"percent on threads", "threads_running>50%", `"threads_running>50%"`},
		{"percent too big", "qps<150%", `"qps<150%"`},
		{"latency without unit", "p99>200", `"p99>200"`},
		{"percentile over 100", "p101>1s", `"p101>1s"`},
		{"second token", "qps<50%,bogus", `"bogus"`},
		{"negative limit", "qps<-1", `"qps<-1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.spec)
			if err == nil || !strings.Contains(err.Error(), tt.token) || !strings.HasPrefix(err.Error(), "--stall") {
				t.Errorf("got %v, want an error about --stall naming %s", err, tt.token)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{DefaultSpec, "qps<50%", "p99>200ms", "threads_running>2 for 2s,qps<10", "p>1", "qps<%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		ts, err := Parse(spec)
		if err != nil {
			return
		}
		for _, tr := range ts {
			if tr.Limit < 0 || tr.For < 0 || (tr.Relative && (tr.Limit <= 0 || tr.Limit >= 1)) {
				t.Errorf("Parse(%q) gave %+v, want a limit >= 0, a duration >= 0 and a fraction in (0, 1)", spec, tr)
			}
		}
	})
}

func TestDetector(t *testing.T) {
	steady := map[string]float64{"qps": 1000, "threads_running": 3}
	tests := []struct {
		name    string
		spec    string
		samples []map[string]float64
		want    []int // samples (0-based) at which a trigger fires
	}{
		{"for needs consecutive samples", "threads_running>25 for 3s", []map[string]float64{
			{"threads_running": 30}, {"threads_running": 30}, {"threads_running": 3},
			{"threads_running": 30}, {"threads_running": 30}, {"threads_running": 30}}, []int{5}},
		{"relative waits for history", "qps<50%", []map[string]float64{
			{"qps": 10}, steady, steady, steady, steady, steady, {"qps": 400}}, []int{6}},
		{"relative ignores a dip above the fraction", "qps<50%", []map[string]float64{
			steady, steady, steady, steady, steady, {"qps": 600}}, nil},
		{"missing figure breaks the streak", "p99>200ms for 2s", []map[string]float64{
			{"p99": 300}, {}, {"p99": 300}, {"p99": 300}}, []int{3}},
		{"several triggers, any fires", "threads_running>25,qps<100", []map[string]float64{
			steady, {"qps": 50, "threads_running": 3}, {"qps": 1000, "threads_running": 40}}, []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := Parse(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			d := NewDetector(ts, time.Second)
			var got []int
			for i, v := range tt.samples {
				if why := d.Observe(v); why != nil {
					got = append(got, i)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got fires at %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("got fires at %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// The median a relative trigger compares with is the latest hour's: a run
// that sped up long ago is judged by its new speed.
func TestDetectorMedianIsTheLatestHour(t *testing.T) {
	ts, err := Parse("qps<50%")
	if err != nil {
		t.Fatal(err)
	}
	d := NewDetector(ts, time.Second)
	for i := 0; i < 2*maxHistory; i++ {
		q := 100.0
		if i >= maxHistory {
			q = 1000
		}
		if why := d.Observe(map[string]float64{"qps": q}); why != nil {
			t.Fatalf("sample %d (qps %g): got a fire %v, want none", i, q, why)
		}
	}
	if got := d.median(); got != 1000 {
		t.Errorf("got median %g, want 1000, the latest hour's", got)
	}
	if why := d.Observe(map[string]float64{"qps": 400}); why == nil {
		t.Errorf("qps 400 against the latest hour's 1000: got no fire, want one")
	}
}

func TestBlockers(t *testing.T) {
	cols := []string{"waiting_id", "waiting_query", "wait_started", "blocking_id", "blocking_query", "blocking_started", "blocking_state"}
	row := func(w, b, state string) []string {
		return []string{w, "UPDATE t", "12:00:01", b, "q" + b, "12:00:00", state}
	}
	lw := func(rows ...[]string) result.StallSection {
		return result.StallSection{Name: "lock_waits", Columns: cols, Rows: rows}
	}
	processlist := func(id, state string) result.StallSection {
		return result.StallSection{Name: "processlist", Columns: []string{"Id", "Command", "State", "Info"}, Rows: [][]string{{id, "Query", state, "q"}}}
	}
	tests := []struct {
		name string
		secs []result.StallSection
		want []string
	}{
		{"none read", nil, nil},
		{"not read", []result.StallSection{{Name: "lock_waits", Columns: cols, Error: "timed out"}}, nil},
		{"a queue behind one holder", []result.StallSection{lw(
			row("34", "35", "LOCK WAIT"), row("33", "28", "RUNNING"), row("34", "28", "RUNNING"), row("35", "28", "RUNNING"), row("35", "33", "LOCK WAIT"))},
			[]string{"28 (RUNNING since 12:00:00: q28), blocking 3 sessions"}},
		{"two holders", []result.StallSection{lw(row("2", "1", "RUNNING"), row("4", "3", "RUNNING"))},
			[]string{"1 (RUNNING since 12:00:00: q1), blocking 1 sessions", "3 (RUNNING since 12:00:00: q3), blocking 1 sessions"}},
		// A blocking session in LOCK WAIT waits for something, even when
		// the rows read do not say for what.
		{"holder in lock wait", []result.StallSection{lw(row("2", "1", "LOCK WAIT"), row("4", "3", "RUNNING"))},
			[]string{"3 (RUNNING since 12:00:00: q3), blocking 1 sessions"}},
		{"holder waiting for a metadata lock", []result.StallSection{processlist("1", "Waiting for table metadata lock"), lw(row("2", "1", "RUNNING"))}, nil},
		{"holder in lock wait in the transactions", []result.StallSection{lw(row("2", "1", "RUNNING")),
			{Name: "transactions", Columns: []string{"id", "state"}, Rows: [][]string{{"1", "LOCK WAIT"}, {"2", "LOCK WAIT"}}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Blockers(tt.secs)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLabelWaits: each session of the processlist says what it waits for
// and whom it blocks.
func TestLabelWaits(t *testing.T) {
	secs := []result.StallSection{
		{Name: "processlist", Columns: []string{"Id", "Command", "State", "Info"}, Rows: [][]string{
			{"28", "Sleep", "", "NULL"}, {"33", "Query", "Updating", "UPDATE t"}, {"35", "Query", "Updating", "UPDATE t"},
			{"40", "Query", "Waiting for table metadata lock", "ALTER TABLE t ADD c INT"}, {"41", "Sleep", "", "NULL"}}},
		{Name: "lock_waits", Columns: []string{"waiting_id", "wait_started", "blocking_id", "blocking_state", "lock_type"}, Rows: [][]string{
			{"33", "12:00:01", "28", "RUNNING", "RECORD"}, {"35", "12:00:02", "28", "RUNNING", "RECORD"}, {"35", "12:00:02", "33", "LOCK WAIT", "RECORD"}}},
	}
	labelWaits(secs)
	want := map[string]string{
		"28": "blocking 2 sessions",
		"33": "waiting for a row lock held by 28 since 12:00:01; blocking 1 sessions",
		"35": "waiting for a row lock held by 28, queued behind 33, waiting too since 12:00:02",
		"40": "waiting for table metadata lock",
		"41": "",
	}
	pl := secs[0]
	if got := pl.Columns[len(pl.Columns)-1]; got != waitsCol {
		t.Fatalf("got last column %q, want %q", got, waitsCol)
	}
	for _, r := range pl.Rows {
		if got := r[len(r)-1]; got != want[r[0]] {
			t.Errorf("session %s: got %q, want %q", r[0], got, want[r[0]])
		}
	}
}
