package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox/gmstest"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	_ "github.com/shakedown/shakedown/internal/workload/all"
)

// mainArgsEnv makes the test binary shakedown itself: it runs the command
// line this variable holds (JSON) and exits, so that tests can start
// several shakedown processes (the runners of a split load) without
// building the binary.
const mainArgsEnv = "SHAKEDOWN_TEST_MAIN_ARGS"

func TestMain(m *testing.M) {
	if a := os.Getenv(mainArgsEnv); a != "" {
		var args []string
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			fmt.Fprintln(os.Stderr, "bad", mainArgsEnv, err)
			os.Exit(2)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Main(ctx, &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}, args)
		stop()
		os.Exit(code)
	}
	flag.Parse()
	if !testing.Short() && selected("TestContract") {
		// TestContract's second server is built from source, which on a
		// cold build cache takes minutes: it builds while the tests before
		// it run. An error is Start's to report.
		go func() { _ = gmstest.Build() }()
	}
	os.Exit(sandboxtest.Main(m))
}

// selected reports whether -run and -skip leave the top-level test name
// to run (as far as their first element goes; when unsure, it says yes).
func selected(name string) bool {
	first := func(flagName string) string {
		if f := flag.Lookup(flagName); f != nil {
			p, _, _ := strings.Cut(f.Value.String(), "/")
			return p
		}
		return ""
	}
	if p := first("test.run"); p != "" {
		if ok, err := regexp.MatchString(p, name); err == nil && !ok {
			return false
		}
	}
	if p := first("test.skip"); p != "" {
		if ok, err := regexp.MatchString(p, name); err == nil && ok {
			return false
		}
	}
	return true
}

// syncBuffer is a bytes.Buffer that a test may read while a command writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runCLI runs one command line in-process.
func runCLI(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	var out, errOut syncBuffer
	code = runCLIWith(ctx, &out, &errOut, args...)
	return code, out.String(), errOut.String()
}

func runCLIWith(ctx context.Context, out, errOut *syncBuffer, args ...string) int {
	env := &Env{
		Stdin:  bytes.NewReader(nil),
		Stdout: out,
		Stderr: errOut,
		Getenv: func(string) string { return "" },
	}
	return Main(ctx, env, args)
}
