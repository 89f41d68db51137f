package cli

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/wire/wiretest"
)

// TestMirrorTLSFlags: --tls-cert and --tls-key are read before anything
// connects; a missing or bad file is bad usage (2) naming the flag and the
// file, and with a good pair a --listen beyond this host passes the listen
// rule (the control, which nobody serves, then fails the run: 1).
func TestMirrorTLSFlags(t *testing.T) {
	dir := t.TempDir()
	ca := wiretest.NewCA(t)
	_, cert, key := ca.Files(t, dir, ca.Server(t, "127.0.0.1"))
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	down := "mysql://u@127.0.0.1:1/db"
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"a missing certificate", []string{"--tls-cert", missing, "--tls-key", key}, 2, []string{"--tls-cert", missing}},
		{"a certificate file that holds none", []string{"--tls-cert", junk, "--tls-key", key}, 2, []string{"--tls-cert " + junk}},
		{"a key file that holds none", []string{"--tls-cert", cert, "--tls-key", junk}, 2, []string{"--tls-key " + junk}},
		{"a certificate without its key", []string{"--tls-cert", cert}, 2, []string{"--tls-cert " + cert, "--tls-key"}},
		{"beyond this host without a certificate", []string{"--listen", "0.0.0.0:0"}, 2, []string{"--listen", "--tls-cert", "--insecure-listen"}},
		{"beyond this host with a certificate", []string{"--listen", "0.0.0.0:0", "--tls-cert", cert, "--tls-key", key}, 1, []string{"connect to the control"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"mirror", "--control", down, "--candidate", "new=" + down}, tc.args...)
			code, _, stderr := runCLI(t.Context(), args...)
			if code != tc.code {
				t.Errorf("got exit %d, want %d\n%s", code, tc.code, stderr)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("got stderr %q, want it to name %q", stderr, w)
				}
			}
		})
	}
}

// TestMirrorRotate: mirror --rotate asks the mirror whose live page is on
// --http to end its snapshot period, as SIGHUP does: the period is
// printed, and stored as the mirror's --store records it. Without --http,
// or with the mirror's own options, it is bad usage; with no mirror there,
// it fails (1) saying so.
func TestMirrorRotate(t *testing.T) {
	insts := sandboxtest.StartAll(t, nil, nil)
	ctl, cand := insts[0].URL(), insts[1].URL()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"without --http", nil, 2, "--http HOST:PORT"},
		{"with the mirror's own options", []string{"--http", "127.0.0.1:1", "--control", ctl}, 2, "--control"},
		{"no mirror there", []string{"--http", "127.0.0.1:1"}, 1, "no mirror answers on 127.0.0.1:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t.Context(), append([]string{"mirror", "--rotate"}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d, %q; want %d naming %q", code, stderr, tc.code, tc.want)
			}
		})
	}

	httpAddr := freeAddr(t)
	st := filepath.Join(t.TempDir(), "canary.db")
	ctx, cancel := context.WithCancel(t.Context())
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runCLIWith(ctx, &out, &errOut, "mirror", "--listen", "127.0.0.1:0", "--control", ctl, "--candidate", "new="+cand,
			"--http", httpAddr, "--store", st, "--progress", "1h")
	}()
	var code int
	var stdout, stderr string
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, stdout, stderr = runCLI(t.Context(), "mirror", "--rotate", "--http", httpAddr)
		if code == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if mc := <-done; mc != 0 {
		t.Errorf("the mirror exited %d\n%s", mc, errOut.String())
	}
	if code != 0 || !strings.Contains(stdout, "mirror on "+httpAddr+": period 1 ended") {
		t.Fatalf("mirror --rotate: exit %d, %q %q; want period 1 ended", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t.Context(), "report", "--mirror", "1", "--store", st)
	if code != 0 || !strings.Contains(stdout, "rotate") {
		t.Errorf("report --mirror 1: exit %d, %q %q; want the period that rotate ended", code, stdout, stderr)
	}
}

// freeAddr is a loopback address that nothing listens on just now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
