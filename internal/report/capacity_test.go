package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/browsertest"
)

func capacityFixture() CapacityPage {
	steps := func(ceiling float64) []CapacityStep {
		var out []CapacityStep
		for _, share := range []float64{0.5, 0.75, 0.9, 0.95, 1.0, 1.1} {
			r := ceiling * share
			lat := 2 / max(1.02-share, 0.015) // grows as the rate nears the ceiling
			out = append(out, CapacityStep{Offered: r, Achieved: min(r, ceiling*1.0), P50: lat / 2, P95: lat, P99: lat * 1.4, Held: share <= 0.95})
		}
		return out
	}
	return CapacityPage{Title: "capacity of oltp_point_select", SLO: "p99<=20ms", Tool: "shakedown test",
		Peak: "Production peak 312.4/s: the highest qps (statements a second, one an event of oltp_point_select) of the 6 samples in prod.jsonl, at 2026-11-26 03:45:28 UTC (line 4)",
		Targets: []CapacityTarget{
			{Name: "durable", Summary: "capacity 950.0/s under p99<=20ms", Rate: 950, Steps: steps(1000)},
			{Name: "relaxed", Summary: "capacity 1900.0/s under p99<=20ms", Rate: 1900, Steps: steps(2000)},
		},
		Versus: []string{"relaxed: x2.000 [1.950, 2.050] faster"}}
}

// TestCapacityHTMLInChromium loads the capacity page in headless Chromium:
// every chart (latency and achieved rate against the offered rate, per
// target) is laid out with its lines, the capacity is marked, and the
// comparison is on the page.
func TestCapacityHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser: skipped with -short")
	}
	browsertest.Need(t)
	dir := t.ArtifactDir()
	page := filepath.Join(dir, "capacity.html")
	var b bytes.Buffer
	if err := WriteCapacityHTML(&b, capacityFixture()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want := strings.Count(b.String(), `<svg class="chart"`)
	if want != 4 {
		t.Fatalf("got %d charts in the page, want 4 (two per target)", want)
	}
	url := "file://" + page
	dom := browsertest.DOM(t, url)
	if m := attrRE("data-js-error").FindStringSubmatch(dom); m != nil {
		t.Errorf("script error: %s", m[1])
	}
	if m := attrRE("data-charts-drawn").FindStringSubmatch(dom); m == nil || m[1] != strconv.Itoa(want) {
		t.Errorf("charts drawn: got %v, want %d", m, want)
	}
	for _, part := range []string{"Latency against the offered rate", "capacity 950.0/s", "capacity 1900.0/s", "relaxed: x2.000 [1.950, 2.050] faster", "upper 95% confidence bound",
		"Production peak 312.4/s: the highest qps", "of the 6 samples in prod.jsonl"} {
		if !strings.Contains(dom, part) {
			t.Errorf("the page as the browser built it: got no %q", part)
		}
	}
	if got := strings.Count(dom, `stroke-dasharray="6 4"`); got != 2 {
		t.Errorf("dashed offered lines: got %d, want 2 (one per target)", got)
	}
	browsertest.Screenshot(t, url, filepath.Join(dir, "capacity.png"), "1280,1600")
}
