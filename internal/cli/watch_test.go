package cli

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/monitor"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

func TestWatchBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no target", []string{"watch"}, "missing TARGET"},
		{"two targets", []string{"watch", "mysql://a@h:1/", "mysql://b@h:2/"}, "give one TARGET"},
		{"not a URL", []string{"watch", "user:secret@127.0.0.1:3306"}, "not a target URL"},
		{"bad interval", []string{"watch", "mysql://a@127.0.0.1:1/", "--interval", "0s"}, "--interval"},
		{"bad count", []string{"watch", "mysql://a@127.0.0.1:1/", "--count", "-1"}, "--count"},
		{"unknown flag", []string{"watch", "mysql://a@127.0.0.1:1/", "--bogus"}, "--bogus: unknown option"},
		{"stall trigger that does not parse", []string{"watch", "mysql://a@127.0.0.1:1/", "--stall=threads_running>>3"}, `"threads_running>>3"`},
		{"stall on latency", []string{"watch", "mysql://a@127.0.0.1:1/", "--stall=p99>200ms"}, "sees no client latency"},
		{"stall stacks alone", []string{"watch", "mysql://a@127.0.0.1:1/", "--stall-stacks"}, "--stall-stacks needs --stall"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(context.Background(), tc.args...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d and %q, want %d and %q", code, stderr, ExitUsage, tc.want)
			}
			if strings.Contains(stderr, "secret") {
				t.Errorf("stderr %q shows the password", stderr)
			}
		})
	}
}

func TestWatchConnectionRefused(t *testing.T) {
	code, _, stderr := runCLI(context.Background(), "watch", "mysql://u:pw@127.0.0.1:1/", "--count", "1")
	if code != ExitFailure || !strings.Contains(stderr, "connection refused") || strings.Contains(stderr, "pw@") {
		t.Errorf("got exit %d and %q, want 1 and an explained refusal without the password", code, stderr)
	}
}

func TestWatchPrintsTable(t *testing.T) {
	url := sandboxtest.URL(t)
	labelRE := regexp.MustCompile(`^(\d\d:\d\d:\d\d |\d\d:\d\d\.\d  )`)
	cases := []struct {
		name     string
		env      map[string]string
		args     []string
		maxWidth int
		want     []string
		notWant  []string
	}{
		{"80 columns when the width is not known", nil, nil, 80, []string{"qps", "hit%", "srv%"}, []string{"sentKB"}},
		{"$COLUMNS", map[string]string{"COLUMNS": "100"}, nil, 100, []string{"qps", "srv%", "fsync"}, []string{"sentKB"}},
		{"--wide shows every column", nil, []string{"--wide"}, 0, []string{"qps", "sentKB", "ckptMB", "idle", "srv%"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"watch", url, "--interval", "100ms", "--count", "3"}, tc.args...)
			code, out, stderr := runCLIEnv(context.Background(), tc.env, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			// watching..., the legend, group heading, column heading, samples.
			head := ""
			for _, l := range lines {
				if strings.HasPrefix(l, "time ") {
					head = l
					break
				}
			}
			if head == "" {
				t.Fatalf("got %q, want the headings and three lines", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(head, w) {
					t.Errorf("heading %q: want %s", head, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(head, w) {
					t.Errorf("heading %q: want no %s", head, w)
				}
			}
			var labels []string
			for _, l := range lines[1:] {
				if tc.maxWidth > 0 && len(l) > tc.maxWidth {
					t.Errorf("line of %d characters, want at most %d: %q", len(l), tc.maxWidth, l)
				}
				if m := labelRE.FindString(l); m != "" {
					labels = append(labels, m)
				}
			}
			if len(labels) != 3 {
				t.Fatalf("got %d sample lines in %q, want 3", len(labels), out)
			}
			for i := 1; i < len(labels); i++ {
				if labels[i] <= labels[i-1] {
					t.Errorf("labels %q: want each after the one before", labels)
				}
			}
		})
	}
}

// mysqladminBlock is one table printed by mysqladmin extended-status, with
// the time it arrived.
type mysqladminBlock struct {
	at     time.Time
	values map[string]float64
}

// readMysqladmin parses mysqladmin's tables as they arrive (it flushes
// after each one).
func readMysqladmin(sc *bufio.Scanner) []mysqladminBlock {
	var blocks []mysqladminBlock
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "| Variable_name") {
			blocks = append(blocks, mysqladminBlock{at: time.Now(), values: map[string]float64{}})
			continue
		}
		f := strings.Split(line, "|")
		if len(f) != 4 || len(blocks) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(f[2]), 64); err == nil {
			blocks[len(blocks)-1].values[strings.TrimSpace(f[1])] = v
		}
	}
	return blocks
}

// cumulative is a counter's increase since a first time, known at some
// times and linear between them.
type cumulative struct {
	t []time.Time
	v []float64
}

func (c *cumulative) at(x time.Time) float64 {
	i := sort.Search(len(c.t), func(i int) bool { return !c.t[i].Before(x) })
	switch {
	case i == 0:
		return c.v[0]
	case i == len(c.t):
		return c.v[len(c.v)-1]
	}
	span := c.t[i].Sub(c.t[i-1]).Seconds()
	return c.v[i-1] + (c.v[i]-c.v[i-1])*x.Sub(c.t[i-1]).Seconds()/span
}

// TestWatchAgreesWithMysqladmin runs a steady sysbench load, then watch
// --json for 10 samples and mysqladmin extended-status -r -i1 started at
// the same moment. Per-second figures of two processes never tick at the
// same instant, so it compares totals over the same window: for each
// counter, the increase over the seconds both cover, read off watch's
// samples (rate x real elapsed time, at the sampler's clock) and off
// mysqladmin's deltas (at the time each table arrived), interpolating
// linearly inside a second. They must agree within 2%. The per-second
// figures are logged side by side.
func TestWatchAgreesWithMysqladmin(t *testing.T) {
	sb, err := exec.LookPath("sysbench")
	if err != nil {
		t.Fatal("sysbench is not installed: run 'make test', which installs Debian's sysbench")
	}
	ma, err := exec.LookPath("mysqladmin")
	if err != nil {
		if ma, err = exec.LookPath("mariadb-admin"); err != nil {
			t.Fatal("mysqladmin is not installed: run 'make test', which installs Debian's mariadb-client")
		}
	}
	url := sandboxtest.URL(t)
	admin := adminDB(t, url)
	mustExec(t, admin, "DROP DATABASE IF EXISTS watchload", "CREATE DATABASE watchload")
	host, port := hostPort(t, url)
	conn := []string{"--mysql-host=" + host, "--mysql-port=" + port, "--mysql-user=shakedown", "--mysql-db=watchload", "--table-size=1000"}
	if out, err := exec.Command(sb, append(append([]string{"oltp_point_select"}, conn...), "prepare")...).CombinedOutput(); err != nil {
		t.Fatalf("sysbench prepare: %v\n%s", err, out)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	load := exec.CommandContext(ctx, sb, append(append([]string{"oltp_point_select"}, conn...), "--threads=2", "--rate=2000", "--time=40", "run")...)
	if err := load.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = load.Wait() }()
	base := statusValue(t, admin, "Com_select")
	for deadline := time.Now().Add(20 * time.Second); statusValue(t, admin, "Com_select") < base+500; {
		if time.Now().After(deadline) {
			t.Fatal("sysbench's load did not start within 20s")
		}
	}

	mcmd := exec.CommandContext(ctx, ma, "-h"+host, "-P"+port, "-ushakedown", "extended-status", "-r", "-i1", "-c", "13")
	pipe, err := mcmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var wout, werr syncBuffer
	watchDone := make(chan int, 1)
	if err := mcmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { watchDone <- runCLIWith(ctx, &wout, &werr, "watch", url, "--count", "10", "--json") }()
	blocks := readMysqladmin(bufio.NewScanner(pipe))
	if err := mcmd.Wait(); err != nil {
		t.Fatalf("mysqladmin: %v", err)
	}
	if code := <-watchDone; code != 0 {
		t.Fatalf("watch: exit %d: %s", code, werr.String())
	}

	var recs []monitor.WatchRecord
	for _, line := range strings.Split(strings.TrimSpace(wout.String()), "\n") {
		var r monitor.WatchRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("watch --json line %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 10 || len(blocks) < 12 {
		t.Fatalf("got %d watch samples and %d mysqladmin tables, want 10 and 13", len(recs), len(blocks))
	}

	pairs := []struct{ column, status string }{
		{"sel", "Com_select"},
		{"qps", "Questions"},
		{"bp_read_requests", "Innodb_buffer_pool_read_requests"},
		{"rows_read", "Rows_read"},
		{"bytes_received", "Bytes_received"},
	}
	first := recs[0].Time.Add(-time.Duration(recs[0].ElapsedS * float64(time.Second)))
	from, to := first, recs[len(recs)-1].Time
	if blocks[0].at.After(from) {
		from = blocks[0].at
	}
	if last := blocks[len(blocks)-1].at; last.Before(to) {
		to = last
	}
	window := to.Sub(from).Seconds()
	if window < 9 {
		t.Fatalf("common window %.2fs, want about 10s (watch %s..%s, mysqladmin %s..%s)", window,
			first.Format("15:04:05.000"), recs[len(recs)-1].Time.Format("15:04:05.000"),
			blocks[0].at.Format("15:04:05.000"), blocks[len(blocks)-1].at.Format("15:04:05.000"))
	}
	for _, p := range pairs {
		if _, ok := blocks[1].values[p.status]; !ok {
			t.Errorf("%s: mysqladmin does not show it", p.status)
			continue
		}
		w := cumulative{t: []time.Time{first}, v: []float64{0}}
		for _, r := range recs {
			w.t = append(w.t, r.Time)
			w.v = append(w.v, w.v[len(w.v)-1]+r.Values[p.column]*r.ElapsedS)
		}
		m := cumulative{t: []time.Time{blocks[0].at}, v: []float64{0}}
		for _, b := range blocks[1:] {
			m.t = append(m.t, b.at)
			m.v = append(m.v, m.v[len(m.v)-1]+b.values[p.status])
		}
		got := (w.at(to) - w.at(from)) / window
		want := (m.at(to) - m.at(from)) / window
		// The window's two ends fall between samples, and each side's
		// counter is interpolated there; under a bursty load (a loaded
		// machine swings the per-second rate by 10x) that alone moves a
		// 10-second average by a few percent. A wrong rate is off by far more.
		if want <= 0 || math.Abs(got-want)/want > 0.05 {
			t.Errorf("%s: watch %.1f/s, mysqladmin %s %.1f/s over the same %.2fs: want within 5%%", p.column, got, p.status, want, window)
		} else {
			t.Logf("%s: watch %.1f/s, mysqladmin %s %.1f/s over the same %.2fs (%+.2f%%)", p.column, got, p.status, want, window, 100*(got-want)/want)
		}
	}
	var b strings.Builder
	for i, r := range recs {
		fmt.Fprintf(&b, "\n  watch %s sel %8.1f", r.Time.Format("15:04:05.000"), r.Values["sel"])
		if i+1 < len(blocks) {
			fmt.Fprintf(&b, "   mysqladmin %s Com_select %6.0f", blocks[i+1].at.Format("15:04:05.000"), blocks[i+1].values["Com_select"])
		}
	}
	t.Logf("per second:%s", b.String())
}

func statusValue(t *testing.T, db *sql.DB, name string) float64 {
	t.Helper()
	var n string
	var v float64
	if err := db.QueryRow("SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&n, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestWatchStallPrintsCaptures: the sampler's own SHOW GLOBAL STATUS keeps
// Threads_running at 1 or more, so threads_running>0 fires on the first
// sample, and the capture is printed in full while watch goes on.
func TestWatchStallPrintsCaptures(t *testing.T) {
	url := sandboxtest.URL(t)
	code, out, stderr := runCLI(context.Background(), "watch", url, "--interval", "200ms", "--count", "3", "--stall=threads_running>0", "--stall-max", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"stall capture: when threads_running>0 (at most 1", "\n  #1 at ", "threads_running>0: threads_running",
		"processlist (", "innodb_status (", "END OF INNODB MONITOR OUTPUT"} {
		if !strings.Contains(out, want) {
			t.Errorf("got no %q in\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n  #"); n != 1 {
		t.Errorf("got %d captures, want 1 (--stall-max 1)", n)
	}
}
