package monitor

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/histogram"
)

// TestPrometheusAddsRunners has a real Prometheus (Debian's, which make
// test installs) scrape three runners with native histograms on, and asks
// it for the whole load's p99 and query count: sum() over the runners
// gives the count exactly and the p99 within one native bucket.
func TestPrometheusAddsRunners(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Prometheus server")
	}
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus is not installed: run 'make test', which installs Debian's prometheus package")
	}
	parts := [][]time.Duration{latencies(4000, 7), latencies(2500, 8), latencies(6000, 9)}
	exact := histogram.New()
	var targets []string
	for i, vals := range parts {
		for _, v := range vals {
			exact.Record(v)
		}
		m, err := ServeMetrics("127.0.0.1:0", runnerExporter(fmt.Sprintf("%d/3", i+1), vals))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		targets = append(targets, strconv.Quote(m.Addr()))
	}

	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: shakedown\n    static_configs: [{targets: [%s]}]\n", strings.Join(targets, ", "))), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--enable-feature=native-histograms", "--log.level=warn")
	logPath := filepath.Join(dir, "prometheus.log")
	logf, _ := os.Create(logPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-exited
		logf.Close()
	})

	query := func(q string) (float64, bool) {
		resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return 0, false
		}
		defer resp.Body.Close()
		var r struct {
			Data struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if json.NewDecoder(resp.Body).Decode(&r) != nil || len(r.Data.Result) != 1 {
			return 0, false
		}
		s, _ := r.Data.Result[0].Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil
	}

	want := float64(exact.Count())
	deadline := time.Now().Add(60 * time.Second)
	for {
		if n, ok := query(`histogram_count(sum(shakedown_client_latency_seconds))`); ok && n == want {
			break
		}
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			log, _ := os.ReadFile(logPath)
			t.Fatalf("Prometheus exited: %v; its log:\n%s", err, log)
		default:
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logPath)
			t.Fatalf("Prometheus never counted %g latencies over the three runners within 60s; its log:\n%s", want, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n, ok := query(`sum(shakedown_client_queries_total{type="read"})`); !ok || n != want {
		t.Errorf("sum of the runners' reads: got %g (ok %v), want %g", n, ok, want)
	}
	if n, ok := query(`count(shakedown_run_info)`); !ok || n != 3 {
		t.Errorf("runners seen: got %g, want 3", n)
	}
	p99, ok := query(`histogram_quantile(0.99, sum(shakedown_client_latency_seconds))`)
	ex := exact.Percentile(99).Seconds()
	if !ok || math.Abs(p99-ex)/ex > 0.05 {
		t.Errorf("p99 over the runners: got %gs (ok %v), want within 5%% of the exact %gs", p99, ok, ex)
	}
	t.Logf("Prometheus: p99 %.6fs over 3 runners, exact %.6fs", p99, ex)
}
