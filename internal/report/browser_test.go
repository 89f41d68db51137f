package report

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/browsertest"
	"github.com/shakedown/shakedown/internal/store"
)

var attrRE = func(name string) *regexp.Regexp { return regexp.MustCompile(`<html[^>]*\s` + name + `="([^"]*)"`) }

// TestHTMLInChromium loads the HTML report in headless Chromium: the page
// must log nothing to the console, every chart must be laid out, and a
// screenshot is saved in the test's artifact directory (go test -artifacts
// keeps it).
func TestHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser: skipped with -short")
	}
	browsertest.Need(t)
	dir := t.ArtifactDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	// With a vars bisect beside the variables that differ: its section and
	// its styles must sit in the page without breaking the rest.
	if err := WriteHTML(&b, withBisect(t)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want := strings.Count(b.String(), `<svg class="chart"`)
	url := "file://" + page

	dom := browsertest.DOM(t, url)
	if m := attrRE("data-js-error").FindStringSubmatch(dom); m != nil {
		t.Errorf("script error: %s", m[1])
	}
	for _, part := range []string{`<p class="plain" id="in-short"><b>In short:</b> Against durable, relaxed was faster`, `<h2 id="errors">Errors by code</h2>`, "1213 deadlock: 15"} {
		if !strings.Contains(dom, part) {
			t.Errorf("the page as the browser built it: got no %q", part)
		}
	}
	for _, part := range []string{`<section class="vars-bisect">`, `<h2 id="vars-bisect">`, "Causes, by effect", "Cleared: shown not to matter (1)"} {
		if !strings.Contains(dom, part) {
			t.Errorf("the page as the browser built it: got no %q, want the bisect section", part)
		}
	}
	if d, s := strings.Index(dom, "Server variables that differ"), strings.Index(dom, `<section class="vars-bisect">`); d < 0 || s < d {
		t.Errorf("the bisect section at %d, the variables that differ at %d: want the section after them", s, d)
	}
	m := attrRE("data-charts-drawn").FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the check script did not run: no data-charts-drawn on <html>")
	}
	if got := m[1]; got != strconv.Itoa(want) {
		t.Errorf("charts drawn: got %s, want %d", got, want)
	}

	shot := filepath.Join(dir, "report.png")
	img := browsertest.Screenshot(t, url, shot, "1280,2200")
	// Not a blank page: count pixels that are far from white.
	bounds := img.Bounds()
	inked := 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 4 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r+g+bl < 3*0xc000 {
				inked++
			}
		}
	}
	if inked < 1000 {
		t.Errorf("screenshot looks blank: %d dark samples", inked)
	}
	t.Logf("screenshot: %s (%dx%d)", shot, bounds.Dx(), bounds.Dy())
}

// TestHistoryHTMLInChromium loads a history page (a change point after the
// 6th of 12 sweeps) in headless Chromium: no console output, every trend
// chart laid out.
func TestHistoryHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser: skipped with -short")
	}
	browsertest.Need(t)
	var sweeps []*store.SweepData
	for i := range 12 {
		d := fixture(1)
		d.Sweep.ID = int64(i + 1)
		for j := range d.Runs {
			if res := d.Runs[j].Result; res != nil && i >= 6 {
				res.QPS *= 1.2
			}
		}
		sweeps = append(sweeps, d)
	}
	var b bytes.Buffer
	if err := WriteHistory(&b, "html", BuildHistory("test", sweeps, HistoryFilter{Target: "durable"})); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "history.html")
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want := strings.Count(b.String(), `<svg class="chart"`)
	dom := browsertest.DOM(t, "file://"+page)
	if m := attrRE("data-charts-drawn").FindStringSubmatch(dom); m == nil || m[1] != strconv.Itoa(want) || want != 6 {
		t.Errorf("charts drawn: got %v, want %d (one per series, 6)", m, want)
	}
}

// TestScalingHTMLInChromium loads a report of a 7-level sweep in headless
// Chromium: the Universal Scalability Law section is in the page with its
// table and its refusal, each fitted target's dashed curve is drawn on the
// QPS chart, every chart is laid out, and a screenshot is saved in the
// test's artifact directory.
func TestScalingHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser: skipped with -short")
	}
	browsertest.Need(t)
	dir := t.ArtifactDir()
	page := filepath.Join(dir, "scaling.html")
	var b bytes.Buffer
	if err := WriteHTML(&b, Build(scalingFixture())); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want := strings.Count(b.String(), `<svg class="chart"`)
	url := "file://" + page
	dom := browsertest.DOM(t, url)
	if m := attrRE("data-js-error").FindStringSubmatch(dom); m != nil {
		t.Errorf("script error: %s", m[1])
	}
	for _, part := range []string{`<section class="usl">`, "Universal Scalability Law", "<td class=\"l\">22 threads</td>",
		`<p class="usl-refused">tuned: not fitted: throughput rises linearly through 64 threads`, "not tail latency"} {
		if !strings.Contains(dom, part) {
			t.Errorf("the page as the browser built it: got no %q", part)
		}
	}
	if got := strings.Count(dom, `stroke-dasharray="6 4"`); got != 2 {
		t.Errorf("dashed fitted curves: got %d, want 2 (durable and relaxed; tuned is refused)", got)
	}
	if m := attrRE("data-charts-drawn").FindStringSubmatch(dom); m == nil || m[1] != strconv.Itoa(want) {
		t.Errorf("charts drawn: got %v, want %d", m, want)
	}
	shot := filepath.Join(dir, "scaling.png")
	img := browsertest.Screenshot(t, url, shot, "1280,2600")
	if b := img.Bounds(); b.Dx() != 1280 {
		t.Errorf("screenshot width: got %d, want 1280", b.Dx())
	}
	t.Logf("screenshot: %s", shot)
}
