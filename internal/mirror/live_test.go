package mirror

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/shakedown/shakedown/internal/browsertest"
)

// Passwords the live page and the metrics must never show.
const (
	ctlPassword    = "ctl-Sekr1t-pw"
	clientPassword = "app-Sekr1t-pw"
)

// livePair is a pair with a second mirror serving --http: its control
// and candidate URLs carry a password, and clients log in with one of
// their own.
type livePair struct {
	*pair
	m    *Mirror
	port string
}

func newLivePair(t *testing.T, opts Options) *livePair {
	t.Helper()
	p := newPair(t)
	for _, dsn := range []string{dsnOf(p.ctl), dsnOf(p.cand)} {
		db := open(t, dsn)
		for _, q := range []string{"CREATE USER 'canary'@'%' IDENTIFIED BY '" + ctlPassword + "'", "GRANT ALL ON *.* TO 'canary'@'%'"} {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	url := func(port int) string {
		return fmt.Sprintf("mysql://canary:%s@127.0.0.1:%d/%s", ctlPassword, port, p.ctl.Database)
	}
	opts.Listen, opts.HTTP = "127.0.0.1:0", "127.0.0.1:0"
	opts.Control = mustTarget(t, url(p.ctl.Port))
	opts.Candidates = []Candidate{{Name: "cand", Target: mustTarget(t, url(p.cand.Port))}}
	opts.Accounts = map[string]string{"app": clientPassword}
	lp := &livePair{pair: p, m: startMirror(t, opts)}
	lp.port = lp.m.Addr()[strings.LastIndex(lp.m.Addr(), ":")+1:]
	return lp
}

func (lp *livePair) client(t *testing.T) string {
	return fmt.Sprintf("app:%s@tcp(127.0.0.1:%s)/%s", clientPassword, lp.port, lp.ctl.Database)
}

func get(t *testing.T, url string) string {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: got %s, %v, want 200", url, resp.Status, err)
	}
	return string(b)
}

// TestLivePage runs reads through a mirror with --http: a planted
// difference, reads dropped while the candidate's table is locked, and a
// snapshot period ended; the page, rendered in headless Chromium, must
// show each, and /metrics must parse (and pass promtool's check where it
// is installed). Neither may hold a password.
func TestLivePage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser: skipped with -short")
	}
	browsertest.Need(t)
	lp := newLivePair(t, Options{Queue: 1})
	through := open(t, lp.client(t))
	through.SetMaxOpenConns(1)
	cand := open(t, dsnOf(lp.cand))

	// A planted difference, in the middle of a range read: row 5 of 8.
	if _, err := cand.Exec("UPDATE sbtest1 SET c = 'planted' WHERE id = 9"); err != nil {
		t.Fatal(err)
	}
	if n := readRows(t, through, "SELECT id, c FROM sbtest1 WHERE id BETWEEN 5 AND 12"); n != 8 {
		t.Fatalf("range read: got %d rows, want 8", n)
	}
	waitFor(t, 5*time.Second, "the difference counted", func() bool { return lp.m.Summary().Differing > 0 })
	period := rotateOverHTTP(t, lp.m)
	if period.N != 1 || period.Figures.Differing != 1 || period.Figures.Through < 1 {
		t.Errorf("first period: got #%d, %d differing, %d through, want #1, 1 differing, >= 1 through", period.N, period.Figures.Differing, period.Figures.Through)
	}

	// Reads while the candidate's table is locked: the twin waits on the
	// first, its queue of one holds the next, the rest are dropped.
	conn, err := cand.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), "LOCK TABLES sbtest1 WRITE"); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		var k int
		if err := through.QueryRow(fmt.Sprintf("SELECT k FROM sbtest1 WHERE id = %d", 20+i)).Scan(&k); err != nil {
			t.Fatalf("a read while the candidate is locked: %v", err)
		}
	}
	if _, err := conn.ExecContext(t.Context(), "UNLOCK TABLES"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	waitFor(t, 10*time.Second, "the reads held compared", func() bool {
		s := lp.m.Summary()
		return s.Dropped > 0 && s.Compared >= s.Mirrored
	})

	base := "http://" + lp.m.HTTPAddr()
	raw := get(t, base+"/")
	metrics := get(t, base+"/metrics")
	for name, body := range map[string]string{"page": raw, "metrics": metrics} {
		for _, pw := range []string{ctlPassword, clientPassword} {
			if strings.Contains(body, pw) {
				t.Errorf("%s: holds the password %q", name, pw)
			}
		}
	}

	dom := browsertest.DOM(t, base+"/")
	text := func(s string) string { return regexp.MustCompile(`<[^>]+>`).ReplaceAllString(s, "") }
	// The class of the planted difference: its row, its sample.
	row := regexp.MustCompile(`(?s)<tr data-digest="[^"]+" data-candidate="cand">\s*<td class="l"><code>` +
		regexp.QuoteMeta("select `id` , `c` from `sbtest1` where `id` between ? and ?") + `</code></td>(.*?)</tr>`).FindStringSubmatch(dom)
	if row == nil {
		t.Errorf("classes: no row of the range read's class in\n%s", dom)
	} else if cells := regexp.MustCompile(`<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(row[1], -1); len(cells) < 9 ||
		text(cells[1][1]) != "1" || text(cells[4][1]) != "1" {
		t.Errorf("classes: range read's row got %q, want 1 through, 1 differing", text(row[1]))
	}
	diff := regexp.MustCompile(`(?s)<div id="differences">(.*?)</div>\s*<h2>`).FindStringSubmatch(dom)
	if diff == nil || !strings.Contains(diff[1], "differs on cand: rows") || !strings.Contains(diff[1], "between ? and ?") ||
		strings.Contains(diff[1], "between 5") {
		t.Errorf("differences: want the sample with its statement redacted, got %q", diff)
	}
	// Where the rows part: row 5, column c, both sides' rows; the first
	// rows shown above it are the same on both.
	first := regexp.MustCompile(`(?s)<p class="first-difference">([^<]*)</p>\s*<table class="first-difference">(.*?)</table>`).FindStringSubmatch(dom)
	if first == nil || first[1] != "first differs at row 5, column c" {
		t.Errorf("differences: want 'first differs at row 5, column c', got %q", first)
	} else {
		sides := regexp.MustCompile(`<tr data-side="(\w+)"><th class="l">([^<]*)</th><td>row (\d+)</td><td class="l wrap">\(9, ([^<]*)\)</td></tr>`).FindAllStringSubmatch(first[2], -1)
		if len(sides) != 2 || sides[0][2] != "control" || sides[0][3] != "5" || sides[0][4] == "planted" ||
			sides[1][2] != "cand" || sides[1][3] != "5" || sides[1][4] != "planted" {
			t.Errorf("differences: want row 5 of each side, (9, planted) on cand, got %q in %q", sides, first[2])
		}
	}
	drops := regexp.MustCompile(`(?s)<table id="drops">(.*?)</table>`).FindStringSubmatch(dom)
	if drops == nil || !strings.Contains(drops[1], "select `k` from `sbtest1` where `id` = ?") {
		t.Errorf("drops: want the locked reads' class listed, got %q", drops)
	}
	periods := regexp.MustCompile(`<tr data-period="(\d+)"><td>\d+</td>(?:<td[^>]*>[^<]*</td>){3}<td>(\d+)</td><td>(\d+)</td><td>(\d+)</td><td>(\d+)</td>`).FindAllStringSubmatch(dom, -1)
	if len(periods) != 2 || periods[0][1] != "1" || periods[0][4] != "1" || periods[1][1] != "2" || periods[1][4] != "0" || periods[1][5] == "0" {
		t.Errorf("periods: got %q, want period 1 with its difference, period 2 (under way) with none and its drops", periods)
	}
	shot := filepath.Join(t.ArtifactDir(), "mirror.png")
	img := browsertest.Screenshot(t, base+"/", shot, "1280,1400")
	inked := 0
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 2 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 2 {
			if r, g, b, _ := img.At(x, y).RGBA(); r+g+b < 3*0xc000 {
				inked++
			}
		}
	}
	if inked < 1000 {
		t.Errorf("screenshot looks blank: %d dark samples", inked)
	}

	checkMetrics(t, metrics, lp.m.Summary())
}

// checkMetrics parses the exposition and checks the figures it must
// hold, then runs promtool's check on it where promtool is installed.
func checkMetrics(t *testing.T, body string, s *Summary) {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	value := func(name string, labels map[string]string) (float64, bool) {
		f := fams[name]
		if f == nil {
			return 0, false
		}
	next:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
					continue next
				}
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				return m.GetCounter().GetValue(), true
			default:
				return m.GetGauge().GetValue(), true
			}
		}
		return 0, false
	}
	// The class of the planted difference.
	planted := classOf(s, "select `id` , `c` from `sbtest1` where `id` between ? and ?")
	if planted == nil {
		t.Fatal("no range read class in the summary")
	}
	cases := []struct {
		name   string
		labels map[string]string
		min    float64
	}{
		{"shakedown_mirror_statements_total", nil, 7},
		{"shakedown_mirror_candidate_up", map[string]string{"candidate": "cand"}, 1},
		{"shakedown_mirror_differing_total", map[string]string{"candidate": "cand"}, 1},
		{"shakedown_mirror_dropped_total", map[string]string{"candidate": "cand"}, 1},
		{"shakedown_mirror_class_differing_total", map[string]string{"candidate": "cand", "digest": planted.Digest}, 1},
		{"shakedown_mirror_class_control_p50_seconds", map[string]string{"candidate": "cand", "digest": planted.Digest}, 1e-7},
		{"shakedown_mirror_candidate_latency_ratio", map[string]string{"candidate": "cand"}, 0.0001},
	}
	for _, c := range cases {
		v, ok := value(c.name, c.labels)
		if !ok || v < c.min {
			t.Errorf("/metrics %s%v: got %v (found %v), want >= %v", c.name, c.labels, v, ok, c.min)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("promtool is not installed: its check is skipped (apt-get install prometheus, or go install github.com/prometheus/prometheus/cmd/promtool@latest)")
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out.String())
	}
}

// TestHTTPLoopbackOnly: --http beyond the host is refused, like --listen.
func TestHTTPLoopbackOnly(t *testing.T) {
	_, err := Listen(t.Context(), Options{Listen: "127.0.0.1:0", HTTP: "0.0.0.0:0", Control: mustTarget(t, "mysql://u@127.0.0.1:1/db"),
		Candidates: []Candidate{{Name: "c", Target: mustTarget(t, "mysql://u@127.0.0.1:1/db")}}})
	if err != ErrHTTPNotLoopback {
		t.Errorf("got %v, want %v", err, ErrHTTPNotLoopback)
	}
}

// TestDiffSummary: a period's figures are the counters since the last
// period's end, class by class; a class's sample stays only where it
// differed in the period.
func TestDiffSummary(t *testing.T) {
	sample := &Sample{Statement: "select ?", Kind: "rows"}
	prev := &Summary{Through: 10, Compared: 8, Differing: 1, Dropped: 2,
		Candidates: []CandidateSummary{{Name: "c", Compared: 8, Differing: 1, Dropped: 2, ControlSeconds: 1, CandidateSeconds: 2}},
		Classes: []ClassSummary{
			{Digest: "a", Through: 6, Candidates: []ClassCandidate{{Name: "c", Compared: 5, Differing: 1, Sample: sample}}},
			{Digest: "b", Through: 4, Candidates: []ClassCandidate{{Name: "c", Compared: 3, Dropped: 2}}},
		}}
	cur := &Summary{Through: 25, Compared: 20, Differing: 1, Dropped: 3,
		Candidates: []CandidateSummary{{Name: "c", Compared: 20, Differing: 1, Dropped: 3, ControlSeconds: 3, CandidateSeconds: 5}},
		Classes: []ClassSummary{
			{Digest: "a", Through: 7, Candidates: []ClassCandidate{{Name: "c", Compared: 6, Differing: 1, Sample: sample}}},
			{Digest: "b", Through: 14, Candidates: []ClassCandidate{{Name: "c", Compared: 11, Dropped: 3}}},
			{Digest: "new", Through: 4, Candidates: []ClassCandidate{{Name: "c", Compared: 3}}},
		}}
	cases := []struct {
		name       string
		prev       *Summary
		through    int64
		ratio      float64
		classes    string // digest:through:compared:differing:dropped:sample, in order
		candidates string
	}{
		{"first period", nil, 25, 1.6667, "b:14:11:0:3:false a:7:6:1:0:true new:4:3:0:0:false", "c:20:1:3"},
		{"a later period", prev, 15, 1.5, "b:10:8:0:1:false new:4:3:0:0:false a:1:1:0:0:false", "c:12:0:1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := diffSummary(cur, c.prev)
			var got []string
			for _, cl := range d.Classes {
				cc := cl.Candidates[0]
				got = append(got, fmt.Sprintf("%s:%d:%d:%d:%d:%v", cl.Digest, cl.Through, cc.Compared, cc.Differing, cc.Dropped, cc.Sample != nil))
			}
			cd := d.Candidates[0]
			if d.Through != c.through || strings.Join(got, " ") != c.classes || cd.Ratio != c.ratio ||
				fmt.Sprintf("%s:%d:%d:%d", cd.Name, cd.Compared, cd.Differing, cd.Dropped) != c.candidates {
				t.Errorf("got through %d, classes %q, candidate %+v, want %d, %q, %s with ratio %v", d.Through, strings.Join(got, " "), cd, c.through, c.classes, c.candidates, c.ratio)
			}
		})
	}
	if cur.Classes[1].Through != 14 || cur.Candidates[0].Compared != 20 {
		t.Errorf("diffSummary changed its input: got %d, %d, want 14, 20", cur.Classes[1].Through, cur.Candidates[0].Compared)
	}
}

// rotateOverHTTP ends m's snapshot period under way as `mirror --rotate`
// does, by POST /rotate, through the goroutine that cuts periods (run
// here as Run runs it), and returns the period that this goroutine
// handed on (to the store, under Run), checking that the answer names it.
func rotateOverHTTP(t *testing.T, m *Mirror) Period {
	t.Helper()
	got := make(chan Period, 1)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); m.rotateEvery(ctx, 0, nil, func(p Period) { got <- p }) }()
	defer func() { cancel(); <-done }()
	c := &http.Client{Timeout: 10 * time.Second}
	if resp, err := c.Get("http://" + m.HTTPAddr() + "/rotate"); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET /rotate: %v %v, want 405", resp, err)
	}
	req, _ := http.NewRequest(http.MethodPost, "http://"+m.HTTPAddr()+"/rotate", nil)
	req.Header.Set("Origin", "http://elsewhere.example")
	if resp, err := c.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("POST /rotate from another site's page: %v %v, want 403", resp, err)
	}
	r, err := RequestRotate(t.Context(), m.HTTPAddr())
	if err != nil {
		t.Fatalf("POST /rotate: %v", err)
	}
	var p Period
	select {
	case p = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("POST /rotate answered, but no period was handed on")
	}
	if p.Why != "rotate" || r.Period != p.N || r.Statements != p.Figures.Through || r.Differing != p.Figures.Differing {
		t.Errorf("POST /rotate answered %+v for period #%d (%s, %d statements, %d differing)", r, p.N, p.Why, p.Figures.Through, p.Figures.Differing)
	}
	return p
}
