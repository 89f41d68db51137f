// Package gmstest gives tests a second, independent implementation of the
// MySQL protocol and SQL: go-mysql-server with its in-memory database, on
// loopback. It stands in for servers that are not MariaDB (TiDB, cloud
// services): no InnoDB status, fewer variables, no LOAD DATA LOCAL, other
// error codes and texts. Its statements run one at a time, since the engine
// alone loses the writes of statements that overlap (see gmsserver).
//
// The server runs as a child process built from ./gmsserver, not inside the
// test binary: its in-memory engine has data races of its own that the race
// detector of `go test -race` would blame on the test. Start builds it once
// per test binary (the Go build cache makes that quick after the first
// time) and stops it when the test ends; it also exits when the test binary
// dies, since it serves until its standard input closes. Remove deletes the
// built binary.
package gmstest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Database is the database every server starts with, as sandboxes do.
const Database = "sbtest"

// User is the account the URL names. The server runs without the mysql
// database, so it takes any user without a password.
const User = "shakedown"

// Server is one running go-mysql-server.
type Server struct {
	// URL is the target URL, mysql://shakedown@127.0.0.1:PORT/sbtest.
	URL string
}

var build struct {
	once sync.Once
	bin  string
	err  error
}

// Build builds the server binary, once per test binary; Start waits for
// it. On a cold build cache that takes minutes (go-mysql-server and its
// parser are large), so a test binary whose later tests need a server may
// call Build early, in a goroutine, to build while its other tests run.
func Build() error {
	_, err := binary()
	return err
}

// binary builds gmsserver into a temporary directory, once.
func binary() (string, error) {
	build.once.Do(func() {
		dir, err := os.MkdirTemp("", "shakedown-gms-")
		if err != nil {
			build.err = err
			return
		}
		bin := filepath.Join(dir, "gmsserver")
		cmd := exec.Command("go", "build", "-o", bin, "github.com/shakedown/shakedown/internal/sandbox/gmstest/gmsserver")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("build gmsserver: %v\n%s", err, out)
			return
		}
		build.bin = bin
	})
	return build.bin, build.err
}

// Remove deletes the binary Build made, if any: a test binary's TestMain
// calls it after the tests (sandboxtest.Main does), so that every test run
// does not leave tens of megabytes in the temporary directory. Servers
// still running keep their program; Start after Remove fails.
func Remove() error {
	// Waits for a build still running (and so sees its result), or marks
	// none made.
	build.once.Do(func() {})
	if build.bin == "" {
		return nil
	}
	return os.RemoveAll(filepath.Dir(build.bin))
}

// startTimeout bounds building and starting one server.
const startTimeout = 10 * time.Minute

// Start starts a server on a free loopback port and stops it at the end of
// t. It fails t when the server cannot start.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatalf("gmstest: %v", err)
	}
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("gmstest: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("gmstest: %v", err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("gmstest: start %s: %v", bin, err)
	}
	stop := func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	line := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		s, _ := r.ReadString('\n')
		line <- strings.TrimSpace(s)
		io.Copy(io.Discard, r)
	}()
	select {
	case url := <-line:
		if !strings.HasPrefix(url, "mysql://") {
			stop()
			t.Fatalf("gmstest: server did not start: %q %s", url, stderr.String())
		}
		t.Cleanup(stop)
		return &Server{URL: url}
	case <-time.After(startTimeout):
		cmd.Process.Kill()
		stop()
		t.Fatalf("gmstest: no URL from the server after %s", startTimeout)
	}
	return nil
}
