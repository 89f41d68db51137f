package sandbox_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

func TestMain(m *testing.M) {
	if os.Getenv("SANDBOX_TEST_ORPHAN_HOME") != "" {
		orphan()
		return
	}
	os.Exit(sandboxtest.Main(m))
}

// open connects to a sandbox URL as the test's client would.
func open(t *testing.T, u string) *sql.DB {
	t.Helper()
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	cfg := mysql.NewConfig()
	cfg.User = pu.User.Username()
	cfg.Passwd, _ = pu.User.Password()
	cfg.Net = "tcp"
	cfg.Addr = pu.Host
	cfg.DBName = strings.TrimPrefix(pu.Path, "/")
	cfg.Timeout = 5 * time.Second
	cfg.Logger = &mysql.NopLogger{} // TestKillStart breaks connections on purpose
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	return db
}

func queryString(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	var s string
	if err := db.QueryRowContext(t.Context(), q).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

func TestSharedURL(t *testing.T) {
	t.Parallel()
	u := sandboxtest.URL(t)
	if again := sandboxtest.URL(t); again != u {
		t.Errorf("got %q the second time, want %q", again, u)
	}
	db := open(t, u)
	if got := queryString(t, db, "SELECT DATABASE()"); got != "sbtest" {
		t.Errorf("got database %q, want sbtest", got)
	}
	if os.Getenv("SHAKEDOWN_TEST_URL") == "" {
		for q, want := range map[string]string{
			"SELECT @@innodb_flush_log_at_trx_commit": "2",
			"SELECT @@innodb_buffer_pool_size":        strconv.Itoa(256 << 20),
			"SELECT @@max_connections":                "5000",
			"SELECT @@log_bin":                        "0",
		} {
			if got := queryString(t, db, q); got != want {
				t.Errorf("%s: got %s, want %s", q, got, want)
			}
		}
	}
}

func TestUpListDown(t *testing.T) {
	t.Parallel()
	sandboxtest.RequireServer(t)
	ctx := t.Context()
	home := filepath.Join(t.TempDir(), strings.Repeat("d", 80)) // too deep for a socket: it goes to /tmp
	start := time.Now()
	inst, err := sandbox.Up(ctx, sandbox.Options{
		Name: "one", Home: home, DieWithParent: true,
		Set: append([]string{"max-connections=77"}, sandboxtest.Settings...),
	})
	if err != nil {
		t.Fatalf("up: %v", err)
	}
	t.Logf("up in %v: %s %s on port %d, socket %s", time.Since(start).Round(time.Millisecond), inst.Flavour, inst.Version, inst.Port, inst.Socket)
	t.Cleanup(func() { _ = sandbox.Down(context.Background(), home, "one") })

	if !strings.HasPrefix(inst.Socket, "/tmp/shakedown-") {
		t.Errorf("got socket %s, want one in /tmp for a deep home", inst.Socket)
	}
	if !inst.Running || inst.PID <= 0 || inst.Port <= 0 || inst.Version == "" {
		t.Errorf("got instance %+v, want running with pid, port and version", inst)
	}
	if inst.Flavour != "mariadb" && inst.Flavour != "mysql" {
		t.Errorf("got flavour %q, want mariadb or mysql", inst.Flavour)
	}
	db := open(t, inst.URL())
	if got := queryString(t, db, "SELECT @@max_connections"); got != "77" {
		t.Errorf("got max_connections %s, want 77 from --set", got)
	}
	if got := queryString(t, db, "SELECT @@socket"); got != inst.Socket {
		t.Errorf("got socket %s, want %s", got, inst.Socket)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id INT PRIMARY KEY)"); err != nil {
		t.Errorf("create table as the sandbox user: %v", err)
	}

	list, err := sandbox.List(home)
	if err != nil || len(list) != 1 || list[0].Name != "one" || !list[0].Running || list[0].Port != inst.Port {
		t.Fatalf("list: got %+v, %v; want sandbox one running on %d", list, err, inst.Port)
	}

	_, err = sandbox.Up(ctx, sandbox.Options{Name: "one", Home: home})
	if !errors.Is(err, sandbox.ErrExists) || !strings.Contains(err.Error(), "sandbox down one") {
		t.Errorf("up again: got %v, want ErrExists saying to run sandbox down", err)
	}
	_, err = sandbox.Up(ctx, sandbox.Options{Name: "two", Home: home, Port: inst.Port})
	if !errors.Is(err, sandbox.ErrPortInUse) || !strings.Contains(err.Error(), strconv.Itoa(inst.Port)) || !strings.Contains(err.Error(), "--port") {
		t.Errorf("up on a taken port: got %v, want ErrPortInUse naming the port and --port", err)
	}
	if _, err := os.Stat(filepath.Join(home, "two")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed up left %s/two behind: %v", home, err)
	}

	if err := sandbox.Down(ctx, home, "one"); err != nil {
		t.Fatalf("down: %v", err)
	}
	if alive(inst.PID) {
		t.Errorf("server pid %d still runs after down", inst.PID)
	}
	for _, p := range []string{filepath.Join(home, "one"), inst.Socket} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("down left %s behind: %v", p, err)
		}
	}
	if list, err := sandbox.List(home); err != nil || len(list) != 0 {
		t.Errorf("list after down: got %v, %v; want none", list, err)
	}
	if err := sandbox.Down(ctx, home, "one"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("down again: got %v, want ErrNotFound", err)
	}
}

func TestUpFailureShowsLog(t *testing.T) {
	t.Parallel()
	sandboxtest.RequireServer(t)
	home := t.TempDir()
	_, err := sandbox.Up(t.Context(), sandbox.Options{
		Name: "bad", Home: home, DieWithParent: true,
		Set: append([]string{"no_such_variable_here=1"}, sandboxtest.Settings...),
	})
	if err == nil {
		_ = sandbox.Down(context.Background(), home, "bad")
		t.Fatal("up with an unknown variable: got no error")
	}
	if !strings.Contains(err.Error(), "no-such-variable-here") || !strings.Contains(err.Error(), "last lines of") {
		t.Errorf("got %v, want the error log's tail naming the variable", err)
	}
	if _, serr := os.Stat(filepath.Join(home, "bad")); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("failed up left its directory: %v", serr)
	}
}

func TestKillStart(t *testing.T) {
	t.Parallel()
	inst := sandboxtest.Start(t, "log_bin=ON", "sync_binlog=1", "innodb_flush_log_at_trx_commit=1")
	ctx := t.Context()
	db := open(t, inst.URL())
	for q, want := range map[string]string{"SELECT @@log_bin": "1", "SELECT @@sync_binlog": "1"} {
		if got := queryString(t, db, q); got != want {
			t.Errorf("%s: got %s, want %s", q, got, want)
		}
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE k (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO k VALUES (1), (2), (3)"); err != nil {
		t.Fatal(err)
	}

	if err := sandbox.Kill(ctx, inst.Home, inst.Name); err != nil {
		t.Fatalf("kill: %v", err)
	}
	if alive(inst.PID) {
		t.Fatalf("pid %d alive after kill", inst.PID)
	}
	list, err := sandbox.List(inst.Home)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range list {
		if l.Name == inst.Name && l.Running {
			t.Errorf("list: got %s running after kill", l.Name)
		}
	}
	if err := db.PingContext(ctx); err == nil {
		t.Errorf("ping after kill: got no error")
	}

	start := time.Now()
	again, err := sandbox.Start(ctx, inst.Home, inst.Name)
	if err != nil {
		t.Fatalf("start after kill: %v", err)
	}
	t.Logf("restarted in %v", time.Since(start).Round(time.Millisecond))
	if again.Port != inst.Port || again.PID == inst.PID || !again.Running {
		t.Errorf("got port %d pid %d running %v, want port %d and a new pid", again.Port, again.PID, again.Running, inst.Port)
	}
	if got := queryString(t, db, "SELECT COUNT(*) FROM k"); got != "3" {
		t.Errorf("rows after crash and restart: got %s, want 3", got)
	}
	if _, err := sandbox.Start(ctx, inst.Home, inst.Name); !errors.Is(err, sandbox.ErrRunning) {
		t.Errorf("start while running: got %v, want ErrRunning", err)
	}
	if err := sandbox.Stop(ctx, inst.Home, inst.Name); err != nil {
		t.Errorf("stop: %v", err)
	}
	if alive(again.PID) {
		t.Errorf("pid %d alive after stop", again.PID)
	}
}

// TestDieWithParent starts a sandbox from a child process that exits
// without stopping it: the server must die with it.
func TestDieWithParent(t *testing.T) {
	t.Parallel()
	sandboxtest.RequireServer(t)
	home := t.TempDir()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SANDBOX_TEST_ORPHAN_HOME="+home)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("child said %q, want a pid", out)
	}
	t.Cleanup(func() { _ = sandbox.Down(context.Background(), home, "orphan") })
	deadline := time.Now().Add(15 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("server pid %d still runs 15s after the process that started it exited", pid)
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline
	}
}

// orphan is the child of TestDieWithParent: it starts a tied sandbox,
// prints its pid and exits without stopping it.
func orphan() {
	inst, err := sandbox.Up(context.Background(), sandbox.Options{
		Name: "orphan", Home: os.Getenv("SANDBOX_TEST_ORPHAN_HOME"), DieWithParent: true, Set: sandboxtest.Settings,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(w, inst.PID)
	w.Flush()
	os.Exit(0)
}

// alive reports whether pid is a live process (not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || (b[i+2] != 'Z' && b[i+2] != 'X')
}

func TestUpCancelled(t *testing.T) {
	t.Parallel()
	sandboxtest.RequireServer(t)
	for _, after := range []time.Duration{50 * time.Millisecond, 400 * time.Millisecond} {
		t.Run(after.String(), func(t *testing.T) {
			home := t.TempDir()
			ctx, cancel := context.WithTimeout(t.Context(), after)
			defer cancel()
			inst, err := sandbox.Up(ctx, sandbox.Options{Name: "c", Home: home, DieWithParent: true, Set: sandboxtest.Settings})
			if err == nil {
				t.Logf("up finished within %v; nothing to check", after)
				_ = sandbox.Down(context.Background(), home, inst.Name)
				return
			}
			if _, serr := os.Stat(filepath.Join(home, "c")); !errors.Is(serr, os.ErrNotExist) {
				t.Errorf("cancelled up left its directory: %v", serr)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				pids := processesMentioning(home)
				if len(pids) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("cancelled up (%v) left processes %v running", err, pids)
				}
				time.Sleep(20 * time.Millisecond) // polling with a deadline
			}
		})
	}
}

// processesMentioning returns live processes whose command line contains s.
func processesMentioning(s string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(b), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}
