package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// sandbox up --flavour tidb: up, list, stop, start again with its data,
// down; and the refusals of a flavour it does not know and of a binary
// that is not TiDB.
func TestSandboxTiDB(t *testing.T) {
	home := t.TempDir()
	code, _, stderr := runSandboxCLI(t, home, "sandbox", "up", "x", "--flavour", "oracle")
	if code != ExitUsage || !strings.Contains(stderr, "mariadb, mysql, percona, tidb, vitess, galera, dolt, go-mysql-server") {
		t.Errorf("--flavour oracle: got exit %d, %q; want exit 2 listing the flavours", code, stderr)
	}
	notTiDB := filepath.Join(t.TempDir(), "tidb-server")
	if err := os.WriteFile(notTiDB, []byte("#!/bin/sh\necho 'mariadbd  Ver 10.11'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runSandboxCLI(t, home, "sandbox", "up", "x", "--flavour", "tidb", "--server", notTiDB)
	if code != ExitUsage || !strings.Contains(stderr, "not a tidb-server") || !strings.Contains(stderr, "mariadbd  Ver 10.11") {
		t.Errorf("a binary that is not TiDB: got exit %d, %q; want exit 2 saying what it found", code, stderr)
	}
	if code, _, _ := runSandboxCLI(t, home, "sandbox", "list"); code != ExitOK {
		t.Errorf("list after refusals: exit %d", code)
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "sandboxes")); len(entries) != 0 {
		t.Errorf("refused sandboxes left %d entries behind, want none", len(entries))
	}

	if testing.Short() {
		t.Skip("starts a TiDB server")
	}
	bin, err := sandboxtest.TiDBServer()
	if err != nil {
		t.Fatal(err)
	}
	if bin == "" {
		t.Skip(sandboxtest.TiDBGet)
	}
	code, stdout, stderr := runSandboxCLI(t, home, "sandbox", "up", "ti", "--flavour", "tidb", "--server", bin)
	if code != ExitOK || !strings.Contains(stdout, "sandbox ti up: TiDB ") {
		t.Fatalf("up: got exit %d\n%s%s\nwant TiDB up", code, stdout, stderr)
	}
	t.Cleanup(func() { runSandboxCLI(t, home, "sandbox", "down", "ti") })
	url := stdout[strings.Index(stdout, "target ")+len("target ") : len(strings.TrimSpace(stdout))]
	db := openSandbox(t, url)
	var v string
	if err := db.QueryRow("SELECT VERSION()").Scan(&v); err != nil || !strings.Contains(v, "TiDB") {
		t.Fatalf("the sandbox's URL: got %q, %v; want TiDB answering as the sandbox user", v, err)
	}
	db.Exec("CREATE TABLE kept (id INT PRIMARY KEY)")
	db.Close()
	if _, out, _ := runSandboxCLI(t, home, "sandbox", "list"); !strings.Contains(out, "ti    running  TiDB ") {
		t.Errorf("list: got\n%s\nwant ti running TiDB", out)
	}
	if code, out, errs := runSandboxCLI(t, home, "sandbox", "up", "ti"); code != ExitUsage || !strings.Contains(errs, "(it runs TiDB") {
		t.Errorf("up of a TiDB sandbox as mariadb: got exit %d %s%s, want exit 2", code, out, errs)
	}
	if code, out, errs := runSandboxCLI(t, home, "sandbox", "stop", "ti"); code != ExitOK {
		t.Fatalf("stop: exit %d %s%s", code, out, errs)
	}
	if code, out, errs := runSandboxCLI(t, home, "sandbox", "up", "ti", "--flavour", "tidb"); code != ExitOK || !strings.Contains(out, "TiDB") {
		t.Fatalf("up again: exit %d %s%s", code, out, errs)
	}
	db = openSandbox(t, url)
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME = 'kept'").Scan(&n); err != nil || n != 1 {
		t.Errorf("after stop and up: got %d tables named kept (%v), want its data kept", n, err)
	}
	if code, out, errs := runSandboxCLI(t, home, "sandbox", "down", "ti"); code != ExitOK || !strings.Contains(out, "sandbox ti down") {
		t.Errorf("down: exit %d %s%s", code, out, errs)
	}
	if _, out, _ := runSandboxCLI(t, home, "sandbox", "list"); strings.Contains(out, "ti ") {
		t.Errorf("list after down: got\n%s\nwant ti gone", out)
	}
}
