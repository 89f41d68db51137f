package readiness

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/browsertest"
)

// TestPageInChromium renders a readiness page in headless Chromium: a check,
// a sweep, a rehearsal's follower (its lag under the load above 2 s) and
// its cutover are stored, a verify and a replay are not. The rendered page
// must show the verdict, every stored piece of evidence, the follower's
// lag and the cutover's window and steps, and for each missing piece the
// command that produces it; a screenshot is kept in the test's artifact
// directory (go test -artifacts).
func TestPageInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser: skipped with -short")
	}
	browsertest.Need(t)
	p := build(t, openStore(t, seed{check: "warn", sweepFactor: 1.5, follow: "warn", cutover: "pass"}), 0)
	dir := t.ArtifactDir()
	page := filepath.Join(dir, "readiness.html")
	var b bytes.Buffer
	if err := WriteHTML(&b, p); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + page

	dom := browsertest.DOM(t, url)
	text := regexp.MustCompile(`<[^>]+>`).ReplaceAllString(dom, "")
	if m := regexp.MustCompile(`<div class="verdict not-ready" id="verdict">NOT READY</div>`).FindString(dom); m == "" {
		t.Errorf("verdict: want NOT READY shown (no verify yet)")
	}
	rows := []struct{ id, status, shows string }{
		{"check", StatusWarn, "0 errors, 1 warning, 0 notices"},
		{"variables", StatusPass, "1 differing"},
		{"sweep", StatusPass, "faster at 4 of 4 levels"},
		{"replay", StatusMissing, "none yet: run shakedown capture SOURCE-LOG -o app.capture; shakedown replay app.capture --control"},
		{"verify", StatusMissing, "none yet: run shakedown verify " + srcURL + " " + dstURL},
		{"follow", StatusWarn, "lag p99 3.4 s under the load, above 2 s"},
		{"cutover", StatusPass, "write-unavailable 0.791 s; data equal"},
	}
	for _, r := range rows {
		re := regexp.MustCompile(`(?s)<tr id="ev-` + r.id + `" data-status="([a-z]+)">(.*?)</tr>`)
		m := re.FindStringSubmatch(dom)
		if m == nil {
			t.Errorf("evidence %s: no row in the rendered page", r.id)
			continue
		}
		row := regexp.MustCompile(`<[^>]+>`).ReplaceAllString(m[2], "")
		if m[1] != r.status || !strings.Contains(row, r.shows) {
			t.Errorf("evidence %s: got status %q and %q, want %q and %q", r.id, m[1], row, r.status, r.shows)
		}
	}
	for _, want := range []string{
		"ONLY_FULL_GROUP_BY only on the target",           // the check's finding
		"strictness and syntax",                           // the variables diff
		"oltp_write_only",                                 // the sweep's levels
		"No replay yet: run shakedown capture SOURCE-LOG", // replay's section
		"No verify yet: run shakedown verify",             // verify's section
		"no verify yet: whether the target holds",         // the reason
		"follow: lag p99 3.4 s under the load",            // the lag's warning
		"Write-unavailable window: 0.791 s",               // the cutover's section
		"SET GLOBAL read_only = ON on the source",         // its steps
	} {
		if !strings.Contains(text, want) {
			t.Errorf("rendered page: want %q in it", want)
		}
	}

	for _, r := range []struct{ id, cells string }{
		{"lag-under-load", "under the load (while the sweep ran)|2.8 s|3.4 s|3.4 s|4"},
		{"lag-overall", "overall (the catch-up after the copy included)|0.3 s|9.5 s|9.5 s|10"},
	} {
		m := regexp.MustCompile(`(?s)<tr id="` + r.id + `">(.*?)</tr>`).FindStringSubmatch(dom)
		if m == nil {
			t.Errorf("following: no %s row in the rendered page", r.id)
			continue
		}
		cells := regexp.MustCompile(`<td>(.*?)</td>`).FindAllStringSubmatch(m[1], -1)
		var got []string
		for _, c := range cells {
			got = append(got, c[1])
		}
		if strings.Join(got, "|") != r.cells {
			t.Errorf("following %s: got %q, want %q", r.id, strings.Join(got, "|"), r.cells)
		}
	}
	if steps := regexp.MustCompile(`(?s)<table id="cutover-steps">(.*?)</table>`).FindStringSubmatch(dom); steps == nil ||
		strings.Count(steps[1], "<tr>") != 8 || !strings.Contains(steps[1], "<td>0.912 s</td><td>0.732 s</td><td>verify</td>") {
		t.Errorf("cutover rehearsal: want a table of its 7 steps, each with its time, the verify's 0.732 s among them")
	}

	shot := filepath.Join(dir, "readiness.png")
	img := browsertest.Screenshot(t, url, shot, "1280,1800")
	// The verdict banner is red: count its pixels, and dark ones (text).
	bounds := img.Bounds()
	red, inked := 0, 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 2 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r > 0x9000 && g < 0x3000 && bl < 0x4000 {
				red++
			}
			if r+g+bl < 3*0xc000 {
				inked++
			}
		}
	}
	if red < 200 {
		t.Errorf("screenshot: got %d red samples, want the verdict banner (>= 200)", red)
	}
	if inked < 1000 {
		t.Errorf("screenshot looks blank: %d dark samples", inked)
	}
	t.Logf("screenshot: %s (%dx%d)", shot, bounds.Dx(), bounds.Dy())
}
