package monitor

import (
	"bytes"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/golden"

	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runner"
)

// exporterWithData returns an exporter that has seen a run.
func exporterWithData() *Exporter {
	e := NewExporter()
	e.StartRun(RunInfo{Workload: "oltp_read_write", Target: `db "one"`, Threads: 16})
	e.ObserveInterval(runner.Interval{At: time.Second, Threads: 16, TPS: 100, QPS: 2000, ReadQPS: 1400, WriteQPS: 400, OtherQPS: 200, LatencyPct: 12.5, LatencyAvg: 8, LatencyMax: 40, ErrorsPS: 2})
	e.ObserveInterval(runner.Interval{At: 1500 * time.Millisecond, Threads: 16, TPS: 100, QPS: 2000, ReadQPS: 1400, WriteQPS: 400, OtherQPS: 200, LatencyPct: 12, LatencyAvg: 7, LatencyMax: 30})
	smp := compute(
		reading(0, "Questions", 0, "Com_select", 0, "Threads_running", 3, "Innodb_buffer_pool_read_requests", 0, "Innodb_buffer_pool_reads", 0),
		reading(time.Second, "Questions", 2000, "Com_select", 1400, "Threads_running", 5, "Innodb_buffer_pool_read_requests", 10000, "Innodb_buffer_pool_reads", 10),
		Limits{})
	smp.Failed = map[string]string{"host": "read host cpu: no such file"}
	e.ObserveSample(smp, []result.SourceStatus{{Name: "status", Reads: 2}, {Name: "host", Reads: 2, Failures: 1}})
	h := histogram.New()
	for _, d := range []time.Duration{300 * time.Microsecond, 2 * time.Millisecond, 2 * time.Millisecond, 70 * time.Millisecond, 20 * time.Second} {
		h.Record(d)
	}
	e.EndRun(map[string]int64{"1213": 3, "1205": 1}, h)
	return e
}

func TestExporterGolden(t *testing.T) {
	var b bytes.Buffer
	if err := exporterWithData().Write(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "metrics.golden", b.Bytes())
	for _, want := range []string{
		`shakedown_client_queries_total{type="read"} 2100`,
		`shakedown_client_transactions_total 150`,
		`shakedown_client_errors_by_code_total{code="1213"} 3`,
		`shakedown_client_latency_seconds_bucket{le="0.0025"} 3`,
		`shakedown_client_latency_seconds_bucket{le="+Inf"} 5`,
		`shakedown_client_latency_seconds_count 5`,
		`shakedown_server_questions_per_second 2000`,
		`shakedown_monitor_source_up{source="host"} 0`,
		`target="db \"one\""`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}

// TestExporterPassesPromtool runs promtool check metrics over the
// exposition when promtool is installed (make test installs it; the CLI
// test scrapes a real run and requires it).
func TestExporterPassesPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed")
	}
	for name, e := range map[string]*Exporter{"empty": NewExporter(), "with data": exporterWithData()} {
		var b bytes.Buffer
		if err := e.Write(&b); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = &b
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: promtool check metrics: %v\n%s", name, err, out)
		}
	}
}

func TestServeMetrics(t *testing.T) {
	m, err := ServeMetrics("127.0.0.1:0", exporterWithData())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(m.URL())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("content type: got %q, want text/plain; version=0.0.4", ct)
	}
	if !strings.Contains(string(body), "shakedown_run_running 0") {
		t.Errorf("body: got %q, want shakedown_run_running 0", body)
	}
	if err := m.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if _, err := http.Get(m.URL()); err == nil {
		t.Errorf("after Close: got an answer, want the port closed")
	}
}

// The latency histogram grows with every interval while a run goes on, and
// the run's whole histogram replaces the intervals' when it ends.
func TestExporterLatencyIsLive(t *testing.T) {
	count := func(e *Exporter) string {
		var b bytes.Buffer
		if err := e.Write(&b); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(line, "shakedown_client_latency_seconds_count ") {
				return strings.TrimPrefix(line, "shakedown_client_latency_seconds_count ")
			}
		}
		t.Fatal("no shakedown_client_latency_seconds_count")
		return ""
	}
	e := NewExporter()
	e.StartRun(RunInfo{Workload: "oltp_point_select", Threads: 1})
	iv := histogram.New()
	iv.Record(time.Millisecond)
	iv.Record(2 * time.Millisecond)
	e.ObserveInterval(runner.Interval{At: time.Second, Latency: iv})
	if got := count(e); got != "2" {
		t.Errorf("during the run: got count %s, want 2", got)
	}
	whole := histogram.New()
	for range 3 {
		whole.Record(time.Millisecond)
	}
	e.EndRun(nil, whole)
	if got := count(e); got != "3" {
		t.Errorf("after the run: got count %s, want 3 (the whole run, not the intervals twice)", got)
	}
}
