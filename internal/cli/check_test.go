package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/store"
)

func TestCheckBadInput(t *testing.T) {
	u := "mysql://u@127.0.0.1:1/a"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no arguments", []string{"check"}, "want SOURCE and TARGET, got 0"},
		{"store without a value", []string{"check", u, u, "--store"}, "--store: needs a value"},
		{"not a URL", []string{"check", "db1", u}, `SOURCE: "db1" is not a target URL`},
		{"bad target URL", []string{"check", u, "mysql://u@h:99999/x"}, "TARGET"},
		{"copy time", []string{"check", u, u, "--copy-time", "0s"}, "--copy-time must be > 0"},
		{"scan rows", []string{"check", u, u, "--max-scan-rows", "-1"}, "--max-scan-rows must be >= 0"},
		{"migration user", []string{"check", u, u, "--migration-user", "dm"}, "--migration-user must be 'user'@'host'"},
		{"unknown flag", []string{"check", u, u, "--bogus"}, "--bogus: unknown option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(context.Background(), tt.args...)
			if code != ExitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("got exit %d, stderr %q; want %d and %q", code, stderr, ExitUsage, tt.want)
			}
			if stdout != "" {
				t.Errorf("got stdout %q, want none", stdout)
			}
		})
	}
}

// silentServer accepts connections and never says a word: a server that
// hangs in the handshake.
func silentServer(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().(*net.TCPAddr).Port
}

func TestCheckUnreachableSide(t *testing.T) {
	good := sandboxtest.URL(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := fmt.Sprintf("mysql://u:s3cr3t-pw@127.0.0.1:%d/db?timeout=2s", l.Addr().(*net.TCPAddr).Port)
	l.Close()
	silent := fmt.Sprintf("mysql://u:s3cr3t-pw@127.0.0.1:%d/db?timeout=1s", silentServer(t))
	tests := []struct {
		name     string
		src, dst string
		want     string
	}{
		{"source refuses", closed, good, "source: connect to"},
		{"target refuses", good, closed, "target: connect to"},
		{"target never answers", good, silent, "target: no answer from 127.0.0.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			code, stdout, stderr := runCLI(ctx, "check", tt.src, tt.dst)
			if code != ExitFailure || !strings.Contains(stderr, tt.want) {
				t.Errorf("got exit %d, stderr %q; want %d and %q", code, stderr, ExitFailure, tt.want)
			}
			if strings.Contains(stdout+stderr, "s3cr3t-pw") {
				t.Error("the password was printed")
			}
		})
	}
}

// TestCheckRun checks a server against itself: the shared sandbox has no
// binary log, which is an error (exit 3), and the JSON and the store get
// the findings.
func TestCheckRun(t *testing.T) {
	url := sandboxtest.URL(t)
	dir := t.TempDir()
	jsonFile, storeFile, htmlFile := filepath.Join(dir, "check.json"), filepath.Join(dir, "s.db"), filepath.Join(dir, "check.html")
	code, stdout, stderr := runCLI(context.Background(), "check", url, url, "--json", jsonFile, "--html", htmlFile, "--store="+storeFile)
	if code != ExitDifferences {
		t.Fatalf("got exit %d, want %d (binary log off)\nstdout %s\nstderr %s", code, ExitDifferences, stdout, stderr)
	}
	if !strings.Contains(stdout, "ERROR   binlog_off  log_bin") || !strings.Contains(stdout, "stored in "+storeFile) {
		t.Errorf("stdout: got %q, want the binlog_off error and where it was stored", stdout)
	}
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Findings []struct {
			Check, Severity, Object, Message, Fix string
		} `json:"findings"`
		NotChecked []struct {
			Check, Side, Privilege string
		} `json:"not_checked"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range doc.Findings {
		if f.Check == "binlog_off" && f.Severity == "error" && f.Object == "log_bin" && f.Message != "" && f.Fix != "" {
			found = true
		}
	}
	if !found || doc.NotChecked == nil {
		t.Errorf("JSON: got %s, want a binlog_off error with message and fix, and a not_checked list", b)
	}
	if h, err := os.ReadFile(htmlFile); err != nil || !strings.Contains(string(h), "binlog_off") {
		t.Errorf("HTML: got %v, want a page naming binlog_off", err)
	}
	st, err := store.Open(context.Background(), storeFile)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e, err := st.LatestEvidence(context.Background(), store.KindCheck, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.Outcome != store.OutcomeFail || !strings.Contains(e.Summary, "error") || !strings.Contains(string(e.Document), "binlog_off") {
		t.Errorf("stored: got outcome %q summary %q, want fail with the document", e.Outcome, e.Summary)
	}
	st.Close()

	// The readiness page is rebuilt from the store alone.
	code, stdout, stderr = runCLI(context.Background(), "readiness", url, url, "--store", storeFile)
	if code != ExitDifferences {
		t.Fatalf("readiness: got exit %d, want %d (not ready)\n%s%s", code, ExitDifferences, stdout, stderr)
	}
	for _, want := range []string{"verdict: NOT READY", "binlog_off log_bin", "no verify yet", "run: shakedown verify", "no replay yet"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("readiness: want %q in\n%s", want, stdout)
		}
	}
	page := filepath.Join(dir, "ready.html")
	code, stdout, _ = runCLI(context.Background(), "readiness", url, url, "--store", storeFile, "-o", page)
	if h, err := os.ReadFile(page); code != ExitDifferences || err != nil || !strings.Contains(string(h), `data-verdict="not ready"`) {
		t.Errorf("readiness -o %s: got exit %d, %v, want 3 and an HTML page with the verdict (stdout %q)", page, code, err, stdout)
	}
}

func TestReadinessBadInput(t *testing.T) {
	u := "mysql://u@127.0.0.1:1/a"
	missing := filepath.Join(t.TempDir(), "none.db")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no arguments", []string{"readiness"}, "want SOURCE and TARGET, got 0"},
		{"format", []string{"readiness", u, u, "--format", "pdf"}, `--format "pdf": want one of text, md, json, html`},
		{"not a URL", []string{"readiness", u, "db2"}, `TARGET "db2" is not a target URL`},
		{"no store", []string{"readiness", u, u, "--store", missing}, "no store at " + missing + ": save evidence first (shakedown check"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(context.Background(), tt.args...)
			if code != ExitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("got exit %d, stderr %q; want %d and %q", code, stderr, ExitUsage, tt.want)
			}
			if stdout != "" {
				t.Errorf("got stdout %q, want none", stdout)
			}
		})
	}
}
