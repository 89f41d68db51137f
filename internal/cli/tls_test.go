package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/wire/wiretest"
)

// A TLS target is measured through the same client as a plain one, its
// server verified against the CA the URL names, and the result says so.
func TestTLSTargetFromTheURL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	t.Parallel() // a server of its own, no timings: it runs beside the other such tests, after the rest
	ca := wiretest.NewCA(t)
	dir := t.TempDir()
	caFile, certFile, keyFile := ca.Files(t, dir, ca.Server(t, "127.0.0.1", "localhost"))
	inst := sandboxtest.Start(t, "ssl_ca="+caFile, "ssl_cert="+certFile, "ssl_key="+keyFile)
	other := wiretest.NewCA(t)
	otherFile, _, _ := other.Files(t, t.TempDir(), other.Server(t, "127.0.0.1"))

	cases := []struct {
		name    string
		query   string
		code    int
		wantTLS bool
		stderr  string
	}{
		{"verified against the URL's CA", "?tls-ca=" + caFile, ExitOK, true, ""},
		{"plain", "", ExitOK, false, ""},
		{"a CA that did not sign the server", "?tls-ca=" + otherFile, ExitFailure, false, "certificate was not accepted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run.json")
			code, stdout, stderr := runCLI(context.Background(), "run", "ping", "--target", inst.URL()+tc.query, "--time", "1", "--threads", "2", "--json", out, "--client-io", "loop")
			if code != tc.code {
				t.Fatalf("exit: got %d, want %d\n%s\n%s", code, tc.code, stdout, stderr)
			}
			if tc.stderr != "" {
				if !strings.Contains(stderr, tc.stderr) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
					t.Errorf("stderr: got %q, want one line with %q", stderr, tc.stderr)
				}
				return
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var res result.Result
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			if res.Target.Client != result.ClientWire || res.Target.TLS == nil || *res.Target.TLS != tc.wantTLS {
				t.Errorf("target: got client %q TLS %v, want wire and TLS %v", res.Target.Client, res.Target.TLS, tc.wantTLS)
			}
		})
	}
}
