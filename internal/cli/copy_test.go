package cli

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

func TestCopyBadInput(t *testing.T) {
	u := "mysql://u@127.0.0.1:1/a"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"one argument", []string{"copy", u}, "want SOURCE and TARGET, got 1"},
		{"no --allow-write", []string{"copy", u, u}, "add --allow-write"},
		{"threads", []string{"copy", u, u, "--allow-write", "--threads", "0"}, "--threads must be >= 1"},
		{"consistency", []string{"copy", u, u, "--allow-write", "--consistency", "snapshot"}, "--consistency must be lock or none"},
		{"where without table", []string{"copy", u, u, "--allow-write", "--where", "id < 5"}, "--where: want 'db.table: condition'"},
		{"where with ;", []string{"copy", u, u, "--allow-write", "--where", "t: 1; DROP TABLE t"}, "without ';'"},
		{"sample", []string{"copy", u, u, "--allow-write", "--sample", "150%"}, "--sample: want a share of rows"},
		{"resume without checkpoint", []string{"copy", u, u, "--allow-write", "--resume"}, "--resume needs --checkpoint"},
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

// TestCopyCommand copies a small database, then is refused a second time
// without --replace, naming the flag.
func TestCopyCommand(t *testing.T) {
	base, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := base.OpenNoDB(base.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, s := range []string{"DROP DATABASE IF EXISTS clicopy_s", "DROP DATABASE IF EXISTS clicopy_t", "CREATE DATABASE clicopy_s",
		"CREATE TABLE clicopy_s.t (id INT PRIMARY KEY, v VARCHAR(10))", "INSERT INTO clicopy_s.t VALUES (1, 'a'), (2, NULL), (3, '')"} {
		if _, err := admin.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS clicopy_s")
		admin.Exec("DROP DATABASE IF EXISTS clicopy_t")
	})
	src, dst := urlWithDB(t, sandboxtest.URL(t), "clicopy_s"), urlWithDB(t, sandboxtest.URL(t), "clicopy_t")
	jsonFile := filepath.Join(t.TempDir(), "copy.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	code, stdout, stderr := runCLI(ctx, "copy", src, dst, "--allow-write", "--json", jsonFile)
	if code != ExitOK || !strings.Contains(stdout, "verify: 1 tables equal") {
		t.Fatalf("copy: got exit %d, stdout %q, stderr %q; want 0 and verify equal", code, stdout, stderr)
	}
	var res struct{ Rows int64 }
	if b, err := os.ReadFile(jsonFile); err != nil || json.Unmarshal(b, &res) != nil || res.Rows != 3 {
		t.Errorf("--json: got %+v (%v), want rows 3", res, err)
	}
	code, _, stderr = runCLI(ctx, "copy", src, dst, "--allow-write")
	if code != ExitUsage || !strings.Contains(stderr, "--replace") {
		t.Errorf("second copy: got exit %d, stderr %q; want %d naming --replace", code, stderr, ExitUsage)
	}
	var n int
	if err := admin.QueryRow("SELECT COUNT(*) FROM clicopy_t.t").Scan(&n); err != nil || n != 3 {
		t.Errorf("target rows after the refused copy: got %d (%v), want 3", n, err)
	}
}

// urlWithDB is the sandbox's URL with db as its database.
func urlWithDB(t *testing.T, raw, db string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	return u.String()
}
