package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// TestHTMLOption: --html FILE writes the HTML page in every command that
// has one, readiness and report as replay, check, capacity and vars
// bisect; -o FILE --format html still does where it did. A command asked
// for -o or --format where it writes files with --json and --html says
// so. Before, readiness --html FILE was an unknown option with no hint.
func TestHTMLOption(t *testing.T) {
	dir := t.TempDir()
	storePath := filepath.Join(dir, "runs.db")
	if code, out, errOut := runCLI(context.Background(), "run", "ping", "--target", sandboxtest.URL(t), "--time", "1", "--store", storePath); code != ExitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	src, dst := "mysql://u@127.0.0.1:1/a", "mysql://u@127.0.0.1:2/a"
	page := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name string
		args []string
		code int
		file string // the page written, "" for none
		want string // in the page, or in standard error when none
	}{
		{"readiness --html", []string{"readiness", src, dst, "--store", storePath, "--html", page("r.html")}, ExitDifferences, page("r.html"), `data-verdict="not ready"`},
		{"readiness -o --format html", []string{"readiness", src, dst, "--store", storePath, "-o", page("r2.out"), "--format", "html"}, ExitDifferences, page("r2.out"), `data-verdict="not ready"`},
		{"report --html", []string{"report", "--store", storePath, "--runs", "all", "--html", page("rep.html")}, ExitOK, page("rep.html"), "<!DOCTYPE html>"},
		{"readiness --html and -o", []string{"readiness", src, dst, "--store", storePath, "--html", page("x.html"), "-o", page("x.md")}, ExitUsage, "",
			"readiness: --html FILE is -o FILE --format html, and goes with neither -o nor --format (formats here: text, md, json, html)"},
		{"report --stall --html", []string{"report", "--store", storePath, "--stall", "1", "--html", page("s.html")}, ExitUsage, "", "(formats here: text, json)"},
		{"readiness --htlm", []string{"readiness", src, dst, "--store", storePath, "--htlm", page("y.html")}, ExitUsage, "", "--htlm: unknown option (did you mean --html?)"},
		{"replay -o", []string{"replay", "app.capture", "-o", page("z.html")}, ExitUsage, "", "replay: -o: unknown option (files are written with --json FILE or --html FILE)"},
		{"check --format html", []string{"check", src, dst, "--format", "html"}, ExitUsage, "", "check: --format: unknown option (files are written with --json FILE or --html FILE)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(context.Background(), tc.args...)
			if code != tc.code {
				t.Fatalf("got exit %d, want %d\n%s\n%s", code, tc.code, out, errOut)
			}
			if tc.file == "" {
				if !strings.Contains(errOut, tc.want) {
					t.Errorf("got standard error\n%s\nwant %q", errOut, tc.want)
				}
				return
			}
			b, err := os.ReadFile(tc.file)
			if err != nil || !strings.Contains(string(b), tc.want) {
				t.Errorf("%s: got %v, want a page with %q", tc.file, err, tc.want)
			}
		})
	}
}
