package wire

import (
	"context"
	"crypto/tls"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire/wiretest"
)

// TestTLSAgainstMariaDB starts a sandbox with a certificate from a CA made
// here and connects with verification (through a registered TLS
// configuration, as ?tls=<name> does), without it, and with verifications
// that must fail.
func TestTLSAgainstMariaDB(t *testing.T) {
	ca := wiretest.NewCA(t)
	caFile, certFile, keyFile := ca.Files(t, t.TempDir(), ca.Server(t, "127.0.0.1", "localhost"))
	inst := sandboxtest.Start(t, "ssl_ca="+caFile, "ssl_cert="+certFile, "ssl_key="+keyFile)
	tg, err := target.Parse(inst.URL())
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]*tls.Config{
		"wiretest-ca":         {RootCAs: ca.Pool},
		"wiretest-wrong-name": {RootCAs: ca.Pool, ServerName: "db.example.com"},
	} {
		if err := mysql.RegisterTLSConfig(name, tc); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mysql.DeregisterTLSConfig(name) })
	}
	// A user that the server refuses without TLS.
	setup, err := Dial(context.Background(), tg.Config(tg.Endpoints()[0], ""), Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustQuery(t, setup, "CREATE USER wire_tls@'127.0.0.1' REQUIRE SSL")
	mustQuery(t, setup, "GRANT ALL ON *.* TO wire_tls@'127.0.0.1'")
	setup.Close()

	const encrypted = "SELECT 1 FROM information_schema.session_status WHERE variable_name = 'Ssl_version' AND variable_value <> ''"
	cases := []struct {
		name    string
		user    string
		tls     string
		wantTLS bool
		wantErr string
	}{
		{"verified", "wire_tls", "wiretest-ca", true, ""},
		{"skip-verify", "wire_tls", "skip-verify", true, ""},
		{"preferred", "wire_tls", "preferred", true, ""},
		{"no TLS, plain user", tg.User, "", false, ""},
		{"no TLS, user requires it", "wire_tls", "", false, "Access denied"},
		{"unknown CA", "wire_tls", "true", false, "certificate was not accepted"},
		{"wrong host name", "wire_tls", "wiretest-wrong-name", false, "certificate was not accepted"},
	}
	for _, tc := range cases {
		for _, m := range modes {
			t.Run(tc.name+"/"+m.name, func(t *testing.T) {
				cfg := tg.Config(tg.Endpoints()[0], tg.DB)
				cfg.User, cfg.TLSConfig = tc.user, tc.tls
				c, err := dialIn(t, context.Background(), cfg, m.opts)
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("got error %v, want one with %q", err, tc.wantErr)
					}
					t.Log(err)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if c.TLS() != tc.wantTLS {
					t.Errorf("client says TLS %v, want %v", c.TLS(), tc.wantTLS)
				}
				r, err := c.Query(encrypted)
				if err != nil {
					t.Fatal(err)
				}
				if got := r.Rows == 1; got != tc.wantTLS {
					t.Errorf("server says TLS %v, want %v", got, tc.wantTLS)
				}
				// A statement and a prepared one over the connection.
				st, err := c.Prepare("SELECT ?, REPEAT('z', 100000)")
				if err != nil {
					t.Fatal(err)
				}
				for i := range 3 {
					if r, err := st.Exec(strconv.Itoa(i)); err != nil || r.Rows != 1 {
						t.Errorf("prepared over TLS: got %+v %v, want 1 row", r, err)
					}
				}
				st.Close()
			})
		}
	}
}
