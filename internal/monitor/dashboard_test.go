package monitor

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestGrafanaDashboardUsesExportedMetrics keeps deploy/grafana-dashboard.json
// in step with the exposition: every metric it queries must exist.
func TestGrafanaDashboardUsesExportedMetrics(t *testing.T) {
	b, err := os.ReadFile("../../deploy/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	known := map[string]bool{}
	for _, c := range Columns() {
		known[c.Prom] = true
	}
	var buf bytes.Buffer
	if err := exporterWithData().Write(&buf); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[1] == "TYPE" {
			known[f[2]] = true
		}
	}
	name := regexp.MustCompile(`shakedown_[a-z_]+`)
	exprs := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs++
			for _, m := range name.FindAllString(tg.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_sum"), "_count")
				if !known[base] {
					t.Errorf("dashboard queries %s, which shakedown does not export", m)
				}
			}
		}
	}
	if exprs < 20 {
		t.Errorf("dashboard: got %d queries, want the client, server and host panels", exprs)
	}
}

// TestGrafanaDashboardSumsOverRunners: a load split over runners shows as
// one. The client's counts and latency are added over every runner (for
// latency, the native histograms are added, then the quantile taken); the
// server's figures, which every runner samples from the same server, are
// taken once, never added.
func TestGrafanaDashboardSumsOverRunners(t *testing.T) {
	b, err := os.ReadFile("../../deploy/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	summed := regexp.MustCompile(`^sum( by \((type|code)\) )?\(`)
	nativeQuantile := regexp.MustCompile(`^histogram_quantile\(0\.\d+, sum\(rate\(shakedown_client_latency_seconds\{`)
	classicQuantile := regexp.MustCompile(`^histogram_quantile\(0\.\d+, sum by \(le\) \(rate\(shakedown_client_latency_seconds_bucket\{`)
	var native, classic int
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			e := tg.Expr
			switch {
			case nativeQuantile.MatchString(e):
				native++
			case classicQuantile.MatchString(e):
				classic++
			case strings.Contains(e, "shakedown_client_interval_latency_seconds"), strings.Contains(e, "shakedown_client_process_cpu_percent"):
				// Per runner: averages and maxima of one runner's interval,
				// and its own CPU, are not to be added.
			case strings.Contains(e, "shakedown_client_"):
				if !summed.MatchString(e) {
					t.Errorf("panel %q: %s is one runner's figure; want it summed over runners", p.Title, e)
				}
			case strings.Contains(e, "shakedown_server_"):
				if !strings.HasPrefix(e, "max(") {
					t.Errorf("panel %q: %s would add the same server once per runner; want max(...)", p.Title, e)
				}
			}
		}
	}
	if native == 0 || classic == 0 {
		t.Errorf("latency quantiles: got %d over native and %d over classic histograms, want both", native, classic)
	}
}
