package demo

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"
)

// freePorts returns a port that is free with the one after it.
func freePorts(t *testing.T) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		next, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1))
		l.Close()
		if err == nil {
			next.Close()
			return p
		}
	}
	t.Fatal("no two free ports side by side")
	return 0
}

// TestSandboxesOnPort: with a port, the demo's control listens on it and
// its candidate on the next.
func TestSandboxesOnPort(t *testing.T) {
	targets, err := Targets(false, "mariadb")
	if err != nil {
		t.Fatal(err)
	}
	port := freePorts(t)
	o := Options{Dir: t.TempDir(), Targets: targets, Port: port, Out: io.Discard, Progress: io.Discard}
	home := filepath.Join(o.Dir, "sandboxes")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	insts, err := startSandboxes(ctx, o, home)
	defer stopSandboxes(ctx, o, home)
	if err != nil {
		t.Fatal(err)
	}
	for i, inst := range insts {
		if inst.Port != port+i {
			t.Errorf("%s: got port %d, want %d", inst.Name, inst.Port, port+i)
		}
	}
}
