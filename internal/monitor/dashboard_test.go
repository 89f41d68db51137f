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
