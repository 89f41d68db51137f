package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

func TestFollowBadInput(t *testing.T) {
	u := "mysql://u@127.0.0.1:1/a"
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"follow without --allow-write", []string{"follow", u, u}, "add --allow-write"},
		{"follow --from", []string{"follow", u, u, "--allow-write", "--from", "binlog.000001"}, "--from: want FILE:POS"},
		{"follow one argument", []string{"follow", u, "--allow-write"}, "want SOURCE and TARGET"},
		{"cutover without --allow-set-global", []string{"cutover", u, u}, "add --allow-set-global"},
		{"cutover --verify", []string{"cutover", u, u, "--allow-set-global", "--verify", "some"}, "--verify must be full or none"},
		{"copy --follow --sample", []string{"copy", u, u, "--allow-write", "--follow", "--sample", "10%"}, "--follow follows whole databases"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(context.Background(), tt.args...)
			if code != ExitUsage || !strings.Contains(stderr, tt.want) || stdout != "" {
				t.Errorf("got exit %d, stdout %q, stderr %q; want %d and %q", code, stdout, stderr, ExitUsage, tt.want)
			}
		})
	}
}

// TestFollowCommands runs the second half of a move from the command line:
// copy --follow, follow, verify while a follower runs, and a rehearsed
// cutover, on two sandboxes.
func TestFollowCommands(t *testing.T) {
	insts := sandboxtest.StartAll(t, []string{"log_bin=ON", "binlog_format=ROW"}, nil)
	src := strings.TrimSuffix(insts[0].URL(), insts[0].Database) + "shop"
	dst := strings.TrimSuffix(insts[1].URL(), insts[1].Database) + "shop"
	tsrc, err := target.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := tsrc.OpenNoDB(tsrc.Endpoints()[0], 2)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, s := range []string{"CREATE DATABASE shop", "CREATE TABLE shop.items (id INT PRIMARY KEY, stock INT)",
		"INSERT INTO shop.items VALUES (1, 10), (2, 20), (3, 30)"} {
		if _, err := admin.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()

	code, stdout, stderr := runCLI(ctx, "copy", src, dst, "--allow-write", "--follow", "--until-caught-up", "--progress", "0")
	if code != ExitOK || !strings.Contains(stdout, "source position:") || !strings.Contains(stdout, ": caught up") {
		t.Fatalf("copy --follow: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for i := 4; i <= 50; i++ {
		if _, err := admin.Exec(fmt.Sprintf("INSERT INTO shop.items VALUES (%d, %d)", i, i)); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr = runCLI(ctx, "follow", src, dst, "--allow-write", "--until-caught-up", "--json", "-", "--progress", "0")
	if code != ExitOK {
		t.Fatalf("follow: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var last struct {
		Summary struct {
			Rows  int64  `json:"rows"`
			State string `json:"state"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Summary.Rows != 47 || last.Summary.State != "caught up" {
		t.Fatalf("follow --json -: last line %q (%v): want a summary of 47 rows, caught up", lines[len(lines)-1], err)
	}

	// A follower at work: verify sees it, cutover uses it.
	fctx, stopFollower := context.WithCancel(ctx)
	done := make(chan int, 1)
	var fout, ferr syncBuffer
	go func() {
		done <- runCLIWith(fctx, &fout, &ferr, "follow", src, dst, "--allow-write", "--progress", "0", "--metrics-addr", "127.0.0.1:0")
	}()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		code, _, stderr = runCLI(ctx, "verify", src, dst)
		if strings.Contains(stderr, "a follower is applying") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code != ExitOK || !strings.Contains(stderr, "a follower is applying") {
		t.Errorf("verify beside a follower: exit %d, stderr:\n%s", code, stderr)
	}
	metrics := regexp.MustCompile(`metrics at (\S+)`).FindStringSubmatch(ferr.String())
	if metrics == nil {
		t.Fatalf("follow --metrics-addr printed no address:\n%s", ferr.String())
	}
	resp, err := http.Get(metrics[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"shakedown_follow_lag_seconds", "shakedown_follow_rows", "shakedown_follow_lag_bytes"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("%s lacks %s:\n%s", metrics[1], want, body)
		}
	}
	code, stdout, stderr = runCLI(ctx, "cutover", src, dst, "--allow-set-global")
	if code != ExitOK || !strings.Contains(stdout, "a follower is at work") || !strings.Contains(stdout, "write-unavailable window:") ||
		!strings.Contains(stdout, "writable again") {
		t.Errorf("cutover: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	stopFollower()
	if code := <-done; code != ExitOK || !strings.Contains(fout.String(), ": stopped") {
		t.Errorf("follow stopped by its context: exit %d\nstdout:\n%s\nstderr:\n%s", code, fout.String(), ferr.String())
	}

	// A source without a binary log is refused before anything is written.
	code, _, stderr = runCLI(ctx, "follow", dst, src, "--allow-write")
	if code != ExitUsage || !strings.Contains(stderr, "log_bin") {
		t.Errorf("follow from a server without a binary log: exit %d, stderr:\n%s", code, stderr)
	}
}
