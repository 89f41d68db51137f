package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
