package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox"
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

// sandbox up --flavour vitess --shards 2: vtgate over MariaDB with a
// keyspace of two shards, up, list, sysbench's prepare and run over both
// shards, stop and start again with its data, vtcombo killed (the sandbox
// is then stopped, and up starts it again), down leaving nothing running;
// and the refusals of --shards without vitess and of a binary that is not
// vtcombo.
func TestSandboxVitess(t *testing.T) {
	home := t.TempDir()
	if code, _, stderr := runSandboxCLI(t, home, "sandbox", "up", "x", "--shards", "2"); code != ExitUsage || !strings.Contains(stderr, "--shards 2: a Vitess keyspace (--flavour vitess)") {
		t.Errorf("--shards without vitess: got exit %d, %q; want exit 2 naming --flavour vitess", code, stderr)
	}
	notVitess := filepath.Join(t.TempDir(), "vtcombo")
	if err := os.WriteFile(notVitess, []byte("#!/bin/sh\necho 'mariadbd  Ver 10.11'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runSandboxCLI(t, home, "sandbox", "up", "x", "--flavour", "vitess", "--server", notVitess); code != ExitUsage ||
		!strings.Contains(stderr, "not Vitess's vtcombo") || !strings.Contains(stderr, "mariadbd  Ver 10.11") || !strings.Contains(stderr, "scripts/install-vitess.sh") {
		t.Errorf("a binary that is not vtcombo: got exit %d, %q; want exit 2 saying what it found and where vtcombo comes from", code, stderr)
	}
	if entries, _ := os.ReadDir(filepath.Join(home, "sandboxes")); len(entries) != 0 {
		t.Errorf("refused sandboxes left %d entries behind, want none", len(entries))
	}
	if testing.Short() {
		t.Skip("starts MariaDB and vtcombo")
	}
	bin := sandboxtest.RequireVitess(t)
	code, stdout, stderr := runSandboxCLI(t, home, "sandbox", "up", "vt", "--flavour", "vitess", "--shards", "2", "--server", bin,
		"--set", "innodb_buffer_pool_size=128M", "--set", "innodb_log_file_size=48M")
	if code != ExitOK || !strings.Contains(stdout, "sandbox vt up: Vitess ") || !strings.Contains(stdout, " over MariaDB ") {
		t.Fatalf("up: got exit %d\n%s%s\nwant Vitess over MariaDB up", code, stdout, stderr)
	}
	t.Cleanup(func() { runSandboxCLI(t, home, "sandbox", "down", "vt") })
	url := stdout[strings.Index(stdout, "target ")+len("target ") : len(strings.TrimSpace(stdout))]
	db := openSandbox(t, url)
	var v string
	if err := db.QueryRow("SELECT VERSION()").Scan(&v); err != nil || !strings.Contains(v, "Vitess") {
		t.Fatalf("the sandbox's URL: got %q, %v; want vtgate answering as the sandbox user", v, err)
	}
	shards := 0
	rows, err := db.Query("SHOW VITESS_SHARDS")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		shards++
	}
	rows.Close()
	if shards != 2 {
		t.Errorf("SHOW VITESS_SHARDS: got %d shards, want 2", shards)
	}
	db.Close()
	// sysbench's tables are routed by a hash of id: prepare falls back to
	// INSERTs (vtgate refuses LOAD DATA on a sharded keyspace), and the
	// rows land on both shards. The cross-check says why it cannot judge.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	data := []string{"--target=" + url, "--tables=1", "--table-size=2000"}
	if code, out, errs := runCLI(ctx, append([]string{"prepare", "oltp_read_write"}, data...)...); code != ExitOK || !strings.Contains(out, "loading with multi-row INSERTs") {
		t.Fatalf("prepare on 2 shards: exit %d %s%s, want INSERTs after LOAD DATA is refused", code, out, errs)
	}
	code, out, errs := runCLI(ctx, append([]string{"run", "oltp_read_write", "--time=2", "--threads=2"}, data...)...)
	if code != ExitOK || !strings.Contains(out, "Vitess cannot be cross-checked beyond one shard") || strings.Contains(out, "CHECK:") {
		t.Errorf("run on 2 shards: exit %d\n%s%s\nwant the cross-check saying why it cannot judge, and no CHECK", code, out, errs)
	}
	beneath := openSandbox(t, fmt.Sprintf("mysql://shakedown@127.0.0.1:%d/", vitessBeneathPort(t, home, "vt")))
	for _, shard := range []string{"vt_sbtest_-80", "vt_sbtest_80-"} {
		var n int
		if err := beneath.QueryRow("SELECT COUNT(*) FROM `" + shard + "`.sbtest1").Scan(&n); err != nil || n == 0 || n == 2000 {
			t.Errorf("shard %s holds %d of the 2000 rows (%v), want some but not all", shard, n, err)
		}
	}
	beneath.Close()
	if _, out, _ := runSandboxCLI(t, home, "sandbox", "list"); !strings.Contains(out, "vt    running  Vitess ") {
		t.Errorf("list: got\n%s\nwant vt running Vitess", out)
	}
	if code, out, errs := runSandboxCLI(t, home, "sandbox", "up", "vt", "--flavour", "vitess", "--shards", "4"); code != ExitUsage || !strings.Contains(errs, "--shards 4 (its keyspace has 2)") {
		t.Errorf("up with other shards: got exit %d %s%s, want exit 2 naming the shards it has", code, out, errs)
	}
	if code, out, errs := runSandboxCLI(t, home, "sandbox", "stop", "vt"); code != ExitOK {
		t.Fatalf("stop: exit %d %s%s", code, out, errs)
	}
	if _, out, _ := runSandboxCLI(t, home, "sandbox", "list"); !strings.Contains(out, "vt    stopped") {
		t.Errorf("list after stop: got\n%s\nwant vt stopped", out)
	}
	if code, out, errs := runSandboxCLI(t, home, "sandbox", "start", "vt"); code != ExitOK || !strings.Contains(out, "started again with its data: Vitess") {
		t.Fatalf("start: exit %d %s%s", code, out, errs)
	}
	countRows := func(what string) {
		t.Helper()
		db := openSandbox(t, url)
		defer db.Close()
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM sbtest1").Scan(&n); err != nil || n != 2000 {
			t.Errorf("%s: got %d rows through vtgate (%v), want the 2000 kept", what, n, err)
		}
	}
	countRows("after stop and start")

	// vtcombo killed alone: the sandbox is stopped, and up starts it again.
	pid := vitessGatePID(t, home, "vt")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var inst *sandbox.Instance
	deadline := time.Now().Add(15 * time.Second)
	for {
		if inst, err = sandbox.Get(filepath.Join(home, "sandboxes"), "vt"); err == nil && !inst.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("vtcombo killed: the sandbox still reads as running after 15 s (%v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if code, out, errs := runSandboxCLI(t, home, "sandbox", "up", "vt", "--flavour", "vitess", "--shards", "2"); code != ExitOK || !strings.Contains(out, "started again with its data") {
		t.Fatalf("up after vtcombo was killed: exit %d %s%s", code, out, errs)
	}
	countRows("after vtcombo was killed and up again")

	if inst, err = sandbox.Get(filepath.Join(home, "sandboxes"), "vt"); err != nil {
		t.Fatal(err)
	}
	pids := []int{inst.PID, vitessGatePID(t, home, "vt")}
	if code, out, errs := runSandboxCLI(t, home, "sandbox", "down", "vt"); code != ExitOK || !strings.Contains(out, "sandbox vt down") {
		t.Errorf("down: exit %d %s%s", code, out, errs)
	}
	for _, p := range pids {
		if err := syscall.Kill(p, 0); err == nil && !zombie(p) {
			t.Errorf("down: process %d still runs", p)
		}
	}
	if _, out, _ := runSandboxCLI(t, home, "sandbox", "list"); strings.Contains(out, "vt ") {
		t.Errorf("list after down: got\n%s\nwant vt gone", out)
	}
}

// vitessBeneathPort is the port of the MariaDB beneath Vitess sandbox name.
func vitessBeneathPort(t *testing.T, home, name string) int {
	t.Helper()
	inst, err := sandbox.Get(filepath.Join(home, "sandboxes"), name)
	if err != nil {
		t.Fatal(err)
	}
	return inst.Port
}

// vitessGatePID is the pid vtcombo of sandbox name wrote.
func vitessGatePID(t *testing.T, home, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "sandboxes", name, "vtcombo", "vtcombo.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// zombie says whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
}
