package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/store"
)

// chromium is Debian's chromium, which scripts/deps.sh (make deps)
// installs.
const chromium = "/usr/bin/chromium"

// runChromium runs headless chromium with a fresh profile and returns its
// stdout and stderr.
func runChromium(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, chromium, append(base, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.String(), errb.String()
}

// consoleLines are the page's console messages in chromium's log.
func consoleLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, ":CONSOLE") {
			out = append(out, l)
		}
	}
	return out
}

var attrRE = func(name string) *regexp.Regexp { return regexp.MustCompile(`<html[^>]*\s` + name + `="([^"]*)"`) }

// TestHTMLInChromium loads the HTML report in headless Chromium: the page
// must log nothing to the console, every chart must be laid out, and a
// screenshot is saved in the test's artifact directory (go test -artifacts
// keeps it).
func TestHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser: skipped with -short")
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("no %s: run make deps (scripts/deps.sh installs Debian's chromium)", chromium)
	}
	dir := t.ArtifactDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := WriteHTML(&b, Build(fixture(5))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want := strings.Count(b.String(), `<svg class="chart"`)
	url := "file://" + page

	dom, stderr := runChromium(t, "--dump-dom", url)
	if lines := consoleLines(stderr); len(lines) > 0 {
		t.Errorf("the page wrote to the console:\n%s", strings.Join(lines, "\n"))
	}
	if m := attrRE("data-js-error").FindStringSubmatch(dom); m != nil {
		t.Errorf("script error: %s", m[1])
	}
	m := attrRE("data-charts-drawn").FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the check script did not run: no data-charts-drawn on <html>")
	}
	if got := m[1]; got != strconv.Itoa(want) {
		t.Errorf("charts drawn: got %s, want %d", got, want)
	}

	shot := filepath.Join(dir, "report.png")
	_, stderr = runChromium(t, "--screenshot="+shot, "--window-size=1280,2200", "--hide-scrollbars", url)
	if lines := consoleLines(stderr); len(lines) > 0 {
		t.Errorf("the page wrote to the console:\n%s", strings.Join(lines, "\n"))
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
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
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("no %s: run make deps (scripts/deps.sh installs Debian's chromium)", chromium)
	}
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
	dom, stderr := runChromium(t, "--dump-dom", "file://"+page)
	if lines := consoleLines(stderr); len(lines) > 0 {
		t.Errorf("the page wrote to the console:\n%s", strings.Join(lines, "\n"))
	}
	if m := attrRE("data-charts-drawn").FindStringSubmatch(dom); m == nil || m[1] != strconv.Itoa(want) || want != 6 {
		t.Errorf("charts drawn: got %v, want %d (one per series, 6)", m, want)
	}
}
