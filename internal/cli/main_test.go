package cli

import (
	"bytes"
	"context"
	"os"
	"sync"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	_ "github.com/shakedown/shakedown/internal/workload/all"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

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
