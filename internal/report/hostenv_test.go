package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/browsertest"
	"github.com/shakedown/shakedown/internal/host"
	"github.com/shakedown/shakedown/internal/result"
)

// withHost is the fixture with host facts on every run (durable pinned to
// two CPUs, relaxed under a quota) and one stall capture on relaxed.
func withHost(t *testing.T) *Report {
	t.Helper()
	d := fixture(1)
	facts := map[string][]host.Fact{
		"durable": {{Name: "cgroup.cpu.max", Group: "cgroup", Kind: host.Setting, Value: "max 100000"},
			{Name: "process.cpus_allowed", Group: "process", Kind: host.Setting, Value: "0-1"},
			{Name: "cgroup.cpu.nr_throttled", Group: "cgroup", Kind: host.Counter, Value: "0"}},
		"relaxed": {{Name: "cgroup.cpu.max", Group: "cgroup", Kind: host.Setting, Value: "200000 100000"},
			{Name: "process.cpus_allowed", Group: "process", Kind: host.Setting, Value: "0-3"},
			{Name: "cgroup.cpu.nr_throttled", Group: "cgroup", Kind: host.Counter, Value: "812"}},
	}
	stalled := false
	for i := range d.Runs {
		run := &d.Runs[i]
		if run.Result == nil || facts[run.Target] == nil {
			continue
		}
		run.Result.HostFacts = &host.Facts{Version: host.Version, Host: "bench-01", Facts: facts[run.Target]}
		run.Result.Host = &result.HostSummary{Local: true, Kernel: &result.KernelCounters{ContextSwitchesPerS: 21000, Samples: 5}}
		if run.Target == "relaxed" {
			run.Result.Host.Kernel.ListenOverflows = 37
			run.Result.Host.Throttling = &result.Throttling{ThrottledMS: 250, PeriodsPct: 12, Samples: 5}
		}
		if run.Target == "relaxed" && !stalled {
			stalled = true
			run.Result.Stalls = []result.Stall{{At: time.Date(2026, 3, 1, 10, 0, 12, 0, time.UTC), AtS: 3,
				Reasons:   []string{"threads_running>2 for 2s: threads_running 5, 2 samples in a row"},
				Before:    []result.Sample{{AtS: 2, Values: map[string]float64{"qps": 0, "threads_running": 5}}},
				CaptureMS: 14,
				Blockers:  []string{"41 (RUNNING since 2026-03-01 10:00:09: NULL), blocking 1 sessions"},
				Sections: []result.StallSection{
					{Name: "processlist", Columns: []string{"Id", "Command", "Info"}, Rows: [][]string{{"41", "Sleep", "NULL"}, {"42", "Query", "UPDATE hotrow SET num=num-1 WHERE id=1"}}},
					{Name: "innodb_status", Text: "TRANSACTIONS\n---TRANSACTION 99, ACTIVE 3 sec\n"},
					{Name: "lock_waits", Columns: []string{"waiting_id", "blocking_id"}, Rows: [][]string{{"42", "41"}}},
					{Name: "transactions", Error: "timed out: context deadline exceeded"},
				}}}
		}
	}
	return Build(d)
}

func TestHostAndStallsInEveryFormat(t *testing.T) {
	rep := withHost(t)
	if rep.Host == nil || len(rep.Host.Diffs) != 2 {
		t.Fatalf("host differences: got %+v, want cgroup.cpu.max and process.cpus_allowed (counters are not differences)", rep.Host)
	}
	tests := []struct {
		format string
		want   []string
	}{
		{"text", []string{"Host counters", "ctx switches/s", "no quota", "cgroup.cpu.max", "max 100000", "200000 100000", "Stall captures (1)", "41 | Sleep", "42 | 41", "transactions (0 ms): not read: timed out",
			"blocking, waiting for nothing: 41 (RUNNING"}},
		{"md", []string{"## Host counters", "| 21000 |", "## Host", "cgroup.cpu.max", "## Stall captures (1)", "42 | 41"}},
		{"json", []string{`"host_counters"`, `"listen_overflows":`, `"host_differences"`, `"200000 100000"`, `"stalls"`, `"blocking_id"`}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, tt.format, rep); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("got no %q in\n%s", w, b.String())
				}
			}
			if strings.Contains(b.String(), "cgroup.cpu.nr_throttled") {
				t.Errorf("got a counter among the host differences, want settings only")
			}
			if tt.format == "json" && !json.Valid(b.Bytes()) {
				t.Errorf("got invalid JSON")
			}
		})
	}
}

// TestHostAndStallsHTMLInChromium: the environment's host table, the
// stall captures and their marks on the timeline are laid out in the page
// the browser builds.
func TestHostAndStallsHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser: skipped with -short")
	}
	browsertest.Need(t)
	page := filepath.Join(t.ArtifactDir(), "host.html")
	var b bytes.Buffer
	if err := WriteHTML(&b, withHost(t)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := browsertest.DOM(t, "file://"+page)
	if m := attrRE("data-js-error").FindStringSubmatch(dom); m != nil {
		t.Errorf("script error: %s", m[1])
	}
	for _, part := range []string{`<h3 id="host-counters">Host counters</h3>`, `<th>listen overflows</th>`, `<td>21000</td>`,
		`<h3 id="host">Host</h3>`, `<td class="l">cgroup.cpu.max</td>`, `<td class="l">200000 100000</td>`,
		`<h2 id="stalls">Stall captures</h2>`, "lock_waits (1 rows)", ">stall: relaxed</text>", "<b>Blocking, waiting for nothing:</b> 41 (RUNNING", `<td class="l">41</td>`, "transactions: not read: timed out"} {
		if !strings.Contains(dom, part) {
			t.Errorf("the page as the browser built it: got no %q", part)
		}
	}
	if e, s := strings.Index(dom, `id="environment"`), strings.Index(dom, `<h3 id="host">`); e < 0 || s < e {
		t.Errorf("host section at %d, environment at %d: want it inside the environment", s, e)
	}
}

func TestHostCountersPerTarget(t *testing.T) {
	rep := withHost(t)
	if rep.Host == nil {
		t.Fatal("got no host environment, want one")
	}
	got := map[string]HostCounters{}
	for _, c := range rep.Host.Counters {
		got[c.Target] = c
	}
	// Each target's runs add up: one fixture run per workload and thread
	// level, each with 5 samples.
	for _, tc := range []struct {
		name     string
		overflow float64
		quota    bool
	}{{"durable", 0, false}, {"relaxed", 37, true}} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := got[tc.name]
			if !ok {
				t.Fatalf("got no counters for %s, want them", tc.name)
			}
			if c.Kernel.ContextSwitchesPerS != 21000 || c.Kernel.Samples != 5*c.Runs {
				t.Errorf("context switches: got %g/s over %d samples in %d runs, want 21000/s over 5 a run", c.Kernel.ContextSwitchesPerS, c.Kernel.Samples, c.Runs)
			}
			if want := tc.overflow * float64(c.Runs); c.Kernel.ListenOverflows != want || c.Quota != tc.quota {
				t.Errorf("got %g overflows, quota %v, want %g, %v", c.Kernel.ListenOverflows, c.Quota, want, tc.quota)
			}
		})
	}
	if rep.Host.Counters[0].Target != rep.Control {
		t.Errorf("first row: got %s, want the control %s", rep.Host.Counters[0].Target, rep.Control)
	}
}
