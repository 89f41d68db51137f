package wire

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/wire/wiretest"
)

// The authentication plugins against the fake server: MariaDB 10.11 has no
// caching_sha2_password and no server side for mysql_clear_password
// outside PAM. mysql_native_password and client_ed25519 are tested against
// MariaDB itself (server_test.go).

func TestAuthPlugins(t *testing.T) {
	ca := wiretest.NewCA(t)
	leaf := ca.Server(t, "127.0.0.1")
	serverTLS := &tls.Config{Certificates: []tls.Certificate{leaf.TLS}}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	const pw = "s3cret pass"
	// MariaDB's ed25519 challenge is 32 random bytes: one in 256 ends in a
	// zero byte, which is part of it and no terminator.
	zeroEnd := append([]byte("0123456789abcdef0123456789abcde"), 0)
	zeroIn := []byte("0123456789abcdef\x000123456789abcde")
	cases := []struct {
		name    string
		server  wiretest.Config
		tls     bool
		passwd  string
		wantErr string // "" for success
		plugin  string // the plugin that must have authenticated
	}{
		{"native", wiretest.Config{Password: pw}, false, pw, "", "mysql_native_password"},
		{"native, wrong password", wiretest.Config{Password: pw}, false, "nope", "Access denied", ""},
		{"native, empty password", wiretest.Config{}, false, "", "", "mysql_native_password"},
		{"caching_sha2 fast", wiretest.Config{Plugin: "caching_sha2_password", Password: pw}, false, pw, "", "caching_sha2_password"},
		{"caching_sha2 fast, wrong password", wiretest.Config{Plugin: "caching_sha2_password", Password: pw}, false, "nope", "Access denied", ""},
		{"caching_sha2 full over TLS", wiretest.Config{Plugin: "caching_sha2_password", Password: pw, FullAuth: true, TLS: serverTLS}, true, pw, "", "caching_sha2_password"},
		{"caching_sha2 full with RSA", wiretest.Config{Plugin: "caching_sha2_password", Password: pw, FullAuth: true, RSAKey: rsaKey}, false, pw, "", "caching_sha2_password"},
		{"caching_sha2 full with RSA, wrong password", wiretest.Config{Plugin: "caching_sha2_password", Password: pw, FullAuth: true, RSAKey: rsaKey}, false, "nope", "Access denied", ""},
		{"sha256 over TLS", wiretest.Config{Plugin: "sha256_password", Password: pw, TLS: serverTLS}, true, pw, "", "sha256_password"},
		{"sha256 with RSA", wiretest.Config{Plugin: "sha256_password", Password: pw, RSAKey: rsaKey}, false, pw, "", "sha256_password"},
		{"sha256 with RSA, wrong password", wiretest.Config{Plugin: "sha256_password", Password: pw, RSAKey: rsaKey}, false, "nope", "Access denied", ""},
		{"sha256, empty password", wiretest.Config{Plugin: "sha256_password"}, false, "", "", "sha256_password"},
		{"switch to native", wiretest.Config{Plugin: "caching_sha2_password", SwitchTo: "mysql_native_password", Password: pw}, false, pw, "", "mysql_native_password"},
		{"switch to caching_sha2", wiretest.Config{SwitchTo: "caching_sha2_password", Password: pw}, false, pw, "", "caching_sha2_password"},
		{"switch to clear over TLS", wiretest.Config{SwitchTo: "mysql_clear_password", Password: pw, TLS: serverTLS}, true, pw, "", "mysql_clear_password"},
		{"switch to clear without TLS", wiretest.Config{SwitchTo: "mysql_clear_password", Password: pw}, false, pw, "only over TLS", ""},
		{"switch to ed25519", wiretest.Config{SwitchTo: "client_ed25519", Password: pw}, false, pw, "", "client_ed25519"},
		{"switch to ed25519, challenge ends in a zero byte", wiretest.Config{SwitchTo: "client_ed25519", Ed25519Nonce: zeroEnd, Password: pw}, false, pw, "", "client_ed25519"},
		{"switch to ed25519, zero byte inside the challenge", wiretest.Config{SwitchTo: "client_ed25519", Ed25519Nonce: zeroIn, Password: pw}, false, pw, "", "client_ed25519"},
		{"switch to ed25519, wrong password", wiretest.Config{SwitchTo: "client_ed25519", Password: pw}, false, "nope", "Access denied", ""},
		{"switch to ed25519, short challenge", wiretest.Config{SwitchTo: "client_ed25519", Ed25519Nonce: zeroEnd[:31], Password: pw}, false, pw, "challenge of 31 bytes", ""},
		{"server requires TLS", wiretest.Config{Password: pw, TLS: serverTLS, RequireTLS: true}, false, pw, "must use TLS", ""},
		{"unknown greeting plugin answered as native", wiretest.Config{Plugin: "mysterious_plugin", SwitchTo: "mysql_native_password", Password: pw}, false, pw, "", "mysql_native_password"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got *wiretest.Session
			srv := wiretest.Start(t, tc.server, func(s *wiretest.Session) {
				got = s
				serve(func(s *wiretest.Session, cmd []byte) error { return s.OK(0, 0) })(s)
			})
			cfg := fakeConfig(srv.Addr())
			cfg.Passwd = tc.passwd
			if tc.tls {
				cfg.TLS = &tls.Config{RootCAs: ca.Pool}
				cfg.AllowCleartextPasswords = true
			}
			c, err := Dial(context.Background(), cfg, Options{})
			if tc.wantErr != "" {
				if err == nil {
					c.Close()
					t.Fatalf("got a connection, want an error with %q", tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %q, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer c.Close()
			if err := c.Ping(); err != nil {
				t.Fatalf("ping: %v", err)
			}
			if got.Plugin != tc.plugin {
				t.Errorf("authenticated with %s, want %s", got.Plugin, tc.plugin)
			}
			if got.TLS != tc.tls || c.TLS() != tc.tls {
				t.Errorf("TLS: server saw %v, client says %v, want %v", got.TLS, c.TLS(), tc.tls)
			}
			if got.User != "u" || got.DB != "d" {
				t.Errorf("got user %q db %q, want u and d", got.User, got.DB)
			}
		})
	}
}

func TestTLSAgainstTheFakeServer(t *testing.T) {
	ca := wiretest.NewCA(t)
	serverTLS := &tls.Config{Certificates: []tls.Certificate{ca.Server(t, "127.0.0.1").TLS}}
	withTLS := wiretest.Start(t, wiretest.Config{AnyPassword: true, TLS: serverTLS}, serve(func(s *wiretest.Session, cmd []byte) error { return s.OK(0, 0) }))
	without := wiretest.Start(t, wiretest.Config{AnyPassword: true}, serve(func(s *wiretest.Session, cmd []byte) error { return s.OK(0, 0) }))
	if err := mysql.RegisterTLSConfig("wiretest-fake", &tls.Config{RootCAs: ca.Pool}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mysql.DeregisterTLSConfig("wiretest-fake") })
	cases := []struct {
		name      string
		addr      string
		tlsConfig string
		wantTLS   bool
		wantErr   string
	}{
		{"registered CA", withTLS.Addr(), "wiretest-fake", true, ""},
		{"registered CA, another host name", strings.Replace(withTLS.Addr(), "127.0.0.1", "localhost", 1), "wiretest-fake", false, "certificate was not accepted"},
		{"skip-verify", withTLS.Addr(), "skip-verify", true, ""},
		{"preferred", withTLS.Addr(), "preferred", true, ""},
		{"preferred, server without TLS", without.Addr(), "preferred", false, ""},
		{"verify against the system roots", withTLS.Addr(), "true", false, "certificate was not accepted"},
		{"required, server without TLS", without.Addr(), "true", false, "does not offer TLS"},
		{"unknown name", withTLS.Addr(), "no-such-config", false, "no TLS configuration of that name"},
		{"off", withTLS.Addr(), "false", false, ""},
	}
	for _, tc := range cases {
		for _, m := range modes {
			t.Run(tc.name+"/"+m.name, func(t *testing.T) {
				cfg := fakeConfig(tc.addr)
				cfg.TLSConfig = tc.tlsConfig
				c, err := dialIn(t, context.Background(), cfg, m.opts)
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
						t.Fatalf("got error %v, want one with %q", err, tc.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if c.TLS() != tc.wantTLS {
					t.Errorf("TLS: got %v, want %v", c.TLS(), tc.wantTLS)
				}
				if _, err := c.Query("SELECT 1"); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

func TestCompressionRefused(t *testing.T) {
	cfg := fakeConfig("127.0.0.1:1")
	if err := cfg.Apply(mysql.EnableCompression(true)); err != nil {
		t.Fatal(err)
	}
	if _, err := Dial(context.Background(), cfg, Options{}); !errors.Is(err, ErrCompression) {
		t.Errorf("compress option: got %v, want ErrCompression", err)
	}
	cfg = fakeConfig("127.0.0.1:1")
	cfg.Params = map[string]string{"compress": "true"}
	if _, err := Dial(context.Background(), cfg, Options{}); !errors.Is(err, ErrCompression) {
		t.Errorf("compress parameter: got %v, want ErrCompression", err)
	}
}

// MariaDB's client_ed25519 expands the password as standard Ed25519
// expands a 32-byte seed, so for such a password both must sign alike.
func TestEd25519MatchesTheStandard(t *testing.T) {
	seed := []byte("0123456789abcdef0123456789abcdef")
	msg := []byte("a 32-byte challenge from server!")
	got, err := ed25519Sign(msg, string(seed))
	if err != nil {
		t.Fatal(err)
	}
	want := ed25519.Sign(ed25519.NewKeyFromSeed(seed), msg)
	if string(got) != string(want) {
		t.Errorf("got signature %x, want %x", got, want)
	}
}
