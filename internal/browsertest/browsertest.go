// Package browsertest renders shakedown's self-contained HTML pages (the
// report, the readiness page) in headless Chromium for tests: the page's
// DOM after its scripts ran, its console messages, and a screenshot.
//
// Chromium is Debian's, which scripts/deps.sh (make deps) installs. It runs
// with a fresh profile and without background networking, which this
// project's test machines do not have.
package browsertest

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Chromium is the browser's path.
const Chromium = "/usr/bin/chromium"

// timeout bounds one run of the browser.
const timeout = 90 * time.Second

// Need fails t when the browser is missing, saying how to install it.
func Need(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(Chromium); err != nil {
		t.Fatalf("no %s: run make deps (scripts/deps.sh installs Debian's chromium)", Chromium)
	}
}

// Run runs headless Chromium with args and returns its stdout and stderr.
func Run(t testing.TB, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, Chromium, append(base, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.String(), errb.String()
}

// DOM loads url and returns the DOM after its scripts ran, failing t when
// the page wrote to the console.
func DOM(t testing.TB, url string) string {
	t.Helper()
	dom, stderr := Run(t, "--dump-dom", url)
	noConsole(t, stderr)
	return dom
}

// Screenshot saves a screenshot of url in path at the window size given
// ("1280,1800") and returns it decoded, failing t when the page wrote to
// the console.
func Screenshot(t testing.TB, url, path, size string) image.Image {
	t.Helper()
	_, stderr := Run(t, "--screenshot="+path, "--window-size="+size, "--hide-scrollbars", url)
	noConsole(t, stderr)
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return img
}

// noConsole fails t with the page's console messages, if any.
func noConsole(t testing.TB, stderr string) {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, ":CONSOLE") {
			lines = append(lines, l)
		}
	}
	if len(lines) > 0 {
		t.Errorf("the page wrote to the console:\n%s", strings.Join(lines, "\n"))
	}
}
