package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

var metricsURL = regexp.MustCompile(`Metrics: (http://\S+/metrics)`)

// TestRunServesMetrics scrapes a run's --metrics-addr while it runs, checks
// the exposition with promtool check metrics, and checks that the result
// document carries the server series and the cross-check.
func TestRunServesMetrics(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is not installed: run 'make test', which installs Debian's prometheus package")
	}
	url := freshDB(t, "monmetrics")
	resPath := filepath.Join(t.TempDir(), "r.json")
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runCLIWith(context.Background(), &out, &errOut, "run", "oltp_read_only", "--target="+url,
			"--tables=1", "--table-size=2000", "--threads=2", "--time=4", "--metrics-addr=127.0.0.1:0", "--json="+resPath)
	}()

	var body []byte
	deadline := time.Now().Add(30 * time.Second)
	for body == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no scrape with client and server figures within 30s; output:\n%s%s", out.String(), errOut.String())
		}
		m := metricsURL.FindStringSubmatch(out.String())
		if m == nil {
			continue
		}
		resp, err := http.Get(m[1])
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if bytes.Contains(b, []byte("shakedown_server_questions_per_second")) && bytes.Contains(b, []byte("shakedown_client_queries_per_second")) {
			body = b
		}
	}
	if code := <-done; code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s\n--- scraped:\n%s", err, msg, body)
	}
	for _, want := range []string{`shakedown_client_queries_total{type="read"}`, "shakedown_client_latency_seconds_bucket", `workload="oltp_read_only"`, "shakedown_server_threads_running", "shakedown_host_cpu_user_percent"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("scrape lacks %s", want)
		}
	}

	res := readResult(t, resPath)
	if res.Server == nil || len(res.Server.Samples) < 3 {
		t.Fatalf("result: got server series %+v, want 3 or more samples", res.Server)
	}
	if cc := res.CrossCheck; cc == nil || cc.ServerQPS <= 0 || cc.Mismatch {
		t.Errorf("cross-check: got %+v, want client and server agreeing", cc)
	}
	if h := res.Host; h == nil || !h.Local || h.ClientCPUPerQueryUS <= 0 {
		t.Errorf("host: got %+v, want a local server and the client's CPU per query", h)
	}
	if !strings.Contains(out.String(), "client vs server QPS:") {
		t.Errorf("summary lacks the cross-check line:\n%s", out.String())
	}
}

// freshDB makes an empty database name on the shared server with the
// small oltp table in it, and returns its URL.
func freshDB(t *testing.T, name string) string {
	t.Helper()
	url := sandboxtest.URL(t)
	mustExec(t, adminDB(t, url), "DROP DATABASE IF EXISTS "+name, "CREATE DATABASE "+name)
	url = strings.TrimSuffix(url, "/sbtest") + "/" + name
	prepareSmall(t, url)
	return url
}

func TestRunMonitorOff(t *testing.T) {
	url := freshDB(t, "monoff")
	resPath := filepath.Join(t.TempDir(), "r.json")
	code, out, stderr := runCLI(context.Background(), "run", "oltp_point_select", "--target="+url, "--tables=1", "--table-size=2000", "--time=1", "--monitor=off", "--json="+resPath)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	res := readResult(t, resPath)
	if res.Server != nil || res.CrossCheck != nil {
		t.Errorf("--monitor=off: got server %v and cross-check %v, want neither", res.Server, res.CrossCheck)
	}
	if strings.Contains(out, "Monitor:") {
		t.Errorf("--monitor=off: output mentions the monitor:\n%s", out)
	}
}

func TestRunPreflightStops(t *testing.T) {
	url := sandboxtest.URL(t)
	admin := adminDB(t, url)
	var maxc int
	if err := admin.QueryRow("SELECT @@max_connections").Scan(&maxc); err != nil {
		t.Fatal(err)
	}
	// ping needs no tables: only the server's limits are in question.
	code, out, stderr := runCLI(context.Background(), "run", "ping", "--target="+url, "--threads=200000", "--time=1")
	if code != ExitFailure || !strings.Contains(stderr, "max_connections") || !strings.Contains(stderr, "SET GLOBAL max_connections") {
		t.Errorf("got exit %d and %q (stdout %q), want 1 and the fix for max_connections %d", code, stderr, out, maxc)
	}
}
