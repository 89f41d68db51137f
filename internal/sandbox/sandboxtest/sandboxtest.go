// Package sandboxtest gives integration tests a real MariaDB or MySQL
// server on loopback.
//
// A package that uses it has a TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }
//
// and its tests call URL for a server shared by the test binary, or Start
// for a server of their own (to kill it, say):
//
//	inst := sandboxtest.Start(t, "log_bin=ON")
//	sandbox.Kill(ctx, inst.Home, inst.Name)   // crash it
//	sandbox.Start(ctx, inst.Home, inst.Name)  // same port, same data
//
// Setting SHAKEDOWN_TEST_URL makes URL return it instead of starting a
// server. With -short, tests that need a server are skipped. Sandboxes live
// in a temporary home per test binary, pick their own free port (test
// binaries of different packages run in parallel), and never outlive the
// binary: Main stops them (and removes the go-mysql-server binary that
// package gmstest built, if any), and on Linux the kernel kills them if the binary
// dies first.
package sandboxtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/gmstest"
)

// Settings are what test sandboxes run with on top of the sandbox
// defaults: small and fast rather than durable.
var Settings = []string{
	"innodb_buffer_pool_size=256M",
	"innodb_flush_log_at_trx_commit=2",
	"innodb_log_file_size=64M",
}

// upTimeout bounds creating one sandbox.
const upTimeout = 3 * time.Minute

var state struct {
	mu      sync.Mutex
	home    string          // created on first use, removed by Main
	running map[string]bool // sandboxes started and not yet stopped
	next    int             // numbers sandboxes from Start

	findOnce  sync.Once
	findErr   error
	sharedOne sync.Once
	shared    *sandbox.Instance
	sharedErr error
}

// Main is for TestMain: it runs m, then stops any sandbox this binary
// started. It returns the exit code, which is non-zero also when a sandbox
// could not be stopped.
func Main(m *testing.M) (code int) {
	defer func() {
		if err := stopAll(); err != nil {
			fmt.Fprintln(os.Stderr, "sandboxtest:", err)
			if code == 0 {
				code = 1
			}
		}
	}()
	return m.Run()
}

// URL returns the target URL of a sandbox shared by the tests of this
// binary, starting it on first use. If SHAKEDOWN_TEST_URL is set it is
// returned instead and nothing is started.
func URL(t testing.TB) string {
	t.Helper()
	if u := os.Getenv("SHAKEDOWN_TEST_URL"); u != "" {
		return u
	}
	RequireServer(t)
	state.sharedOne.Do(func() {
		state.shared, state.sharedErr = start("shared", nil)
	})
	if state.sharedErr != nil {
		t.Fatalf("start the shared test sandbox: %v", state.sharedErr)
	}
	return state.shared.URL()
}

// Start starts a sandbox for this test alone, with extra "var=value"
// settings; t.Cleanup stops and removes it.
func Start(t testing.TB, set ...string) *sandbox.Instance {
	t.Helper()
	RequireServer(t)
	state.mu.Lock()
	state.next++
	name := "t" + strconv.Itoa(state.next)
	state.mu.Unlock()
	inst, err := start(name, set)
	if err != nil {
		t.Fatalf("start test sandbox: %v", err)
	}
	t.Cleanup(func() {
		if err := stop(name); err != nil {
			t.Errorf("stop test sandbox: %v", err)
		}
	})
	return inst
}

// StartAll starts one sandbox per list of "var=value" settings, all at
// once: creating a data directory is mostly waiting on the server's
// bootstrap, so a test that needs several servers waits about as long as
// for one. t.Cleanup stops and removes them; they come back in the order
// of sets.
func StartAll(t testing.TB, sets ...[]string) []*sandbox.Instance {
	t.Helper()
	RequireServer(t)
	insts := make([]*sandbox.Instance, len(sets))
	errs := make([]error, len(sets))
	names := make([]string, len(sets))
	state.mu.Lock()
	for i := range sets {
		state.next++
		names[i] = "t" + strconv.Itoa(state.next)
	}
	state.mu.Unlock()
	var wg sync.WaitGroup
	for i := range sets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			insts[i], errs[i] = start(names[i], sets[i])
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			continue
		}
		name := names[i]
		t.Cleanup(func() {
			if err := stop(name); err != nil {
				t.Errorf("stop test sandbox: %v", err)
			}
		})
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("start test sandboxes: %v", err)
	}
	return insts
}

// RequireServer skips the test with -short and fails it when no server
// binary can be found.
func RequireServer(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a database server: skipped with -short")
	}
	state.findOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, state.findErr = sandbox.FindServer(ctx, "")
	})
	if errors.Is(state.findErr, sandbox.ErrNoServer) {
		t.Fatalf("%v\nrun 'make test', which installs mariadb-server, or set SHAKEDOWN_TEST_URL", state.findErr)
	}
	if state.findErr != nil {
		t.Fatal(state.findErr)
	}
}

func start(name string, set []string) (*sandbox.Instance, error) {
	return startWith(name, sandbox.Options{Set: append(append([]string(nil), Settings...), set...)})
}

// startWith starts the sandbox name in the test home with opts (its Name,
// Home and DieWithParent set here), recorded so that Main stops it.
func startWith(name string, opts sandbox.Options) (*sandbox.Instance, error) {
	state.mu.Lock()
	if state.home == "" {
		home, err := newHome()
		if err != nil {
			state.mu.Unlock()
			return nil, err
		}
		state.home = home
	}
	if state.running == nil {
		state.running = map[string]bool{}
	}
	state.running[name] = true // before Up, so that Main cleans up after an interrupted one
	home := state.home
	state.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), upTimeout)
	defer cancel()
	opts.Name, opts.Home, opts.DieWithParent = name, home, true
	inst, err := sandbox.Up(ctx, opts)
	if err != nil {
		state.mu.Lock()
		delete(state.running, name)
		state.mu.Unlock()
		return nil, err
	}
	return inst, nil
}

func stop(name string) error {
	state.mu.Lock()
	home := state.home
	delete(state.running, name)
	state.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := sandbox.Down(ctx, home, name)
	if errors.Is(err, sandbox.ErrNotFound) {
		return nil
	}
	return err
}

func stopAll() error {
	state.mu.Lock()
	names := make([]string, 0, len(state.running))
	for n := range state.running {
		names = append(names, n)
	}
	home := state.home
	state.mu.Unlock()
	var errs []error
	for _, n := range names {
		errs = append(errs, stop(n))
	}
	if home != "" {
		errs = append(errs, os.RemoveAll(home))
	}
	errs = append(errs, gmstest.Remove())
	return errors.Join(errs...)
}

// Test homes are temporary directories named homePrefix*, holding ownerFile
// with the pid of the test binary that made them.
const (
	homePrefix = "shakedown-test-"
	ownerFile  = "owner.pid"
)

func newHome() (string, error) {
	sweepStale()
	home, err := os.MkdirTemp("", homePrefix)
	if err != nil {
		return "", fmt.Errorf("create test sandbox home: %w", err)
	}
	if err := os.WriteFile(filepath.Join(home, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return "", fmt.Errorf("create test sandbox home: %w", err)
	}
	return home, nil
}

// sweepStale removes the homes of test binaries that died before Main could
// clean up (a test timeout panics past it). The kernel killed their servers
// when they died; Down makes sure before the files go.
func sweepStale() {
	homes, _ := filepath.Glob(filepath.Join(os.TempDir(), homePrefix+"*"))
	for _, home := range homes {
		if !stale(home) {
			continue
		}
		entries, _ := os.ReadDir(home)
		for _, e := range entries {
			if e.IsDir() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				_ = sandbox.Down(ctx, home, e.Name())
				cancel()
			}
		}
		_ = os.RemoveAll(home)
	}
}

// stale reports whether the test binary that made home is gone.
func stale(home string) bool {
	b, err := os.ReadFile(filepath.Join(home, ownerFile))
	if err != nil {
		// Made by a binary that has not written its pid yet, or by an
		// older harness: go by age.
		fi, err := os.Stat(home)
		return err == nil && time.Since(fi.ModTime()) > time.Minute
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return true
	}
	if pid == os.Getpid() {
		return false
	}
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
