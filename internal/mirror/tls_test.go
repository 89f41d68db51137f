package mirror

import (
	"bytes"
	"crypto/tls"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/wire"
	"github.com/shakedown/shakedown/internal/wire/wiretest"
)

const tlsPassword = "app-tls-Sekr1t"

// TestLoadTLS: --tls-cert and --tls-key go together, and a file that is
// missing or not what its flag says is a usage error naming the flag and
// the file.
func TestLoadTLS(t *testing.T) {
	dir := t.TempDir()
	ca := wiretest.NewCA(t)
	_, cert, key := ca.Files(t, dir, ca.Server(t, "127.0.0.1"))
	other := filepath.Join(dir, "other-key.pem")
	if err := os.WriteFile(other, ca.Server(t, "127.0.0.1").KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		name, cert, key string
		want            []string // in the error; none: no error
	}{
		{name: "both", cert: cert, key: key},
		{name: "neither"},
		{name: "a certificate without its key", cert: cert, want: []string{"--tls-cert " + cert, "needs --tls-key"}},
		{name: "a key without its certificate", key: key, want: []string{"--tls-key " + key, "needs --tls-cert"}},
		{name: "a missing certificate", cert: missing, key: key, want: []string{"--tls-cert", missing}},
		{name: "a missing key", cert: cert, key: missing, want: []string{"--tls-key", missing}},
		{name: "a certificate file that holds none", cert: junk, key: key, want: []string{"--tls-cert " + junk, "no PEM certificate"}},
		{name: "a key file that holds none", cert: cert, key: junk, want: []string{"--tls-key " + junk}},
		{name: "the key of another certificate", cert: cert, key: other, want: []string{"--tls-key " + other, "--tls-cert " + cert}},
		{name: "the key given as the certificate", cert: key, key: key, want: []string{"--tls-cert " + key}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := LoadTLS(tc.cert, tc.key)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				if tc.cert != "" && (cfg == nil || len(cfg.Certificates) != 1) {
					t.Errorf("got %+v, want a configuration with one certificate", cfg)
				}
				if tc.cert == "" && cfg != nil {
					t.Errorf("got %+v, want nil", cfg)
				}
				return
			}
			var ue *usage.Error
			if !errors.As(err, &ue) {
				t.Fatalf("got %v, want a usage error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to name %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "PRIVATE KEY") {
				t.Errorf("got %q, which shows the key", err)
			}
		})
	}
}

// TestListenRule: beyond loopback needs a certificate (then TLS is
// required of every client, --insecure-listen or not) or
// --insecure-listen; on loopback a certificate makes TLS optional.
func TestListenRule(t *testing.T) {
	cfg := &tls.Config{}
	for _, tc := range []struct {
		name     string
		host     string
		tls      *tls.Config
		insecure bool
		want     bool
	}{
		{name: "loopback, no certificate", host: "127.0.0.1"},
		{name: "loopback with a certificate", host: "127.0.0.1", tls: cfg},
		{name: "localhost with a certificate", host: "localhost", tls: cfg},
		{name: "every address with a certificate", host: "0.0.0.0", tls: cfg, want: true},
		{name: "an address beyond with a certificate", host: "192.0.2.2", tls: cfg, want: true},
		{name: "beyond with a certificate and --insecure-listen", host: "192.0.2.2", tls: cfg, insecure: true, want: true},
		{name: "beyond with --insecure-listen only", host: "192.0.2.2", insecure: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := requiresTLS(tc.host, Options{TLS: tc.tls, InsecureListen: tc.insecure}); got != tc.want {
				t.Errorf("got requiresTLS %v, want %v", got, tc.want)
			}
		})
	}
	_, err := Listen(t.Context(), Options{Listen: "0.0.0.0:0", Control: mustTarget(t, "mysql://u@127.0.0.1:1/db"),
		Candidates: []Candidate{{Name: "c", Target: mustTarget(t, "mysql://u@127.0.0.1:1/db")}}})
	if err != ErrNotLoopback {
		t.Errorf("beyond loopback without a certificate: got %v, want %v", err, ErrNotLoopback)
	}
	if !strings.Contains(ErrNotLoopback.Error(), "--tls-cert") || !strings.Contains(ErrNotLoopback.Error(), "--tls-key") {
		t.Errorf("got %q, want it to name --tls-cert and --tls-key", ErrNotLoopback)
	}
}

// tlsMirror is a mirror with a certificate between the shared sandbox
// and itself (reads only), with the files the clients need.
type tlsMirror struct {
	m          *Mirror
	host, port string
	caFile     string
	ca         *wiretest.CA
	db         string
}

// startTLSMirror starts a mirror with a certificate for 127.0.0.1 and
// host on host:0; require forces the rule of an address beyond this host
// where the machine has none to listen on.
func startTLSMirror(t *testing.T, host string, require bool) *tlsMirror {
	t.Helper()
	tg := mustTarget(t, sandboxtest.URL(t))
	ca := wiretest.NewCA(t)
	caFile, cert, key := ca.Files(t, t.TempDir(), ca.Server(t, "127.0.0.1", "localhost", host))
	cfg, err := LoadTLS(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Listen: net.JoinHostPort(host, "0"), Control: tg, Candidates: []Candidate{{Name: "cand", Target: tg}},
		Accounts: map[string]string{"app": tlsPassword}, TLS: cfg}
	m := startMirrorWith(t, opts, func(m *Mirror) {
		if require {
			m.requireTLS = true
		}
	})
	_, port, _ := net.SplitHostPort(m.Addr())
	return &tlsMirror{m: m, host: host, port: port, caFile: caFile, ca: ca, db: tg.DB}
}

// mariadb runs the mariadb client through the mirror as app, its
// password in the environment, and returns what it printed.
func (tm *tlsMirror) mariadb(t *testing.T, password string, args ...string) (string, error) {
	t.Helper()
	if _, err := exec.LookPath("mariadb"); err != nil {
		t.Fatal("the mariadb client is not installed: run 'make test', which installs it")
	}
	args = append([]string{"--no-defaults", "-h", tm.host, "-P", tm.port, "-u", "app", "--connect-timeout=10"}, args...)
	cmd := exec.Command("mariadb", args...)
	cmd.Env = append(os.Environ(), "MYSQL_PWD="+password)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (tm *tlsMirror) verifiedTLS() []string {
	return []string{"--ssl", "--ssl-ca=" + tm.caFile, "--ssl-verify-server-cert"}
}

// driver opens the mirror with go-sql-driver, over TLS (the CA trusted)
// or not.
func (tm *tlsMirror) driver(t *testing.T, withTLS bool) *sql.DB {
	t.Helper()
	dsn := fmt.Sprintf("app:%s@tcp(%s)/%s?timeout=10s&readTimeout=10s&writeTimeout=10s", tlsPassword, net.JoinHostPort(tm.host, tm.port), tm.db)
	if withTLS {
		name := "mirrortest-" + strings.ReplaceAll(t.Name(), "/", "-")
		if err := mysql.RegisterTLSConfig(name, &tls.Config{RootCAs: tm.ca.Pool, ServerName: tm.host}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mysql.DeregisterTLSConfig(name) })
		dsn += "&tls=" + name
	}
	return open(t, dsn)
}

// TestMirrorTLS: on loopback with a certificate, the mariadb client and
// go-sql-driver log in over TLS (the certificate verified) and are
// served; a client without TLS is served too.
func TestMirrorTLS(t *testing.T) {
	tm := startTLSMirror(t, "127.0.0.1", false)
	t.Run("mariadb --ssl: the session is TLS", func(t *testing.T) {
		out, err := tm.mariadb(t, tlsPassword, append(tm.verifiedTLS(), "-e", `\s`)...)
		if err != nil {
			t.Fatalf("mariadb --ssl through the mirror: %v\n%s", err, out)
		}
		if !strings.Contains(out, "Cipher in use is") {
			t.Errorf("got\n%s\nwant an SSL line with the cipher in use", out)
		}
		if strings.Contains(out, tlsPassword) {
			t.Errorf("the output shows the password:\n%s", out)
		}
	})
	t.Run("mariadb --ssl: statements through", func(t *testing.T) {
		out, err := tm.mariadb(t, tlsPassword, append(tm.verifiedTLS(), "-N", "-e", "SELECT 40 + 2")...)
		if err != nil || strings.TrimSpace(out) != "42" {
			t.Errorf("got %q, %v, want 42", out, err)
		}
	})
	t.Run("mariadb --ssl: a wrong password is refused", func(t *testing.T) {
		out, err := tm.mariadb(t, "wrong", append(tm.verifiedTLS(), "-e", "SELECT 1")...)
		if err == nil || !strings.Contains(out, "ERROR 1045 (28000)") {
			t.Errorf("got %q, %v, want ERROR 1045 (28000)", out, err)
		}
	})
	t.Run("go-sql-driver over TLS", func(t *testing.T) {
		var n int
		if err := tm.driver(t, true).QueryRow("SELECT 42").Scan(&n); err != nil || n != 42 {
			t.Errorf("got %d, %v, want 42", n, err)
		}
	})
	t.Run("an SSLRequest and the TLS hello in one segment", func(t *testing.T) {
		nc, err := net.DialTimeout("tcp", tm.m.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		g, seq := readSeq(t, nc)
		if seq != 0 || binary.LittleEndian.Uint16(g[bytes.IndexByte(g[1:], 0)+1+1+4+8+1:])&wire.CapSSL == 0 {
			t.Fatalf("got greeting %d %q, want packet 0 offering CLIENT_SSL", seq, g)
		}
		caps := uint32(wire.CapProtocol41 | wire.CapSecureConn | wire.CapPluginAuth | wire.CapLongPassword | wire.CapSSL)
		short := binary.LittleEndian.AppendUint32(nil, caps)
		short = append(short, 0, 0, 0, 1, 45)
		short = append(short, make([]byte, 23)...)
		// The client's hello goes in the write that carries the
		// SSLRequest, so that the mirror reads both at once.
		tc := tls.Client(&prefixConn{Conn: nc, first: append([]byte{byte(len(short)), 0, 0, 1}, short...)},
			&tls.Config{RootCAs: tm.ca.Pool, ServerName: "127.0.0.1"})
		if err := tc.Handshake(); err != nil {
			t.Fatalf("TLS handshake: %v", err)
		}
		resp := append(bytes.Clone(short), "app"...)
		resp = append(resp, 0, 20)
		resp = append(resp, wire.NativeScramble(greetingNonce(g), tlsPassword)...)
		resp = append(resp, "mysql_native_password"...)
		resp = append(resp, 0)
		tc.Write(append([]byte{byte(len(resp)), 0, 0, 2}, resp...))
		if ok, seq := readSeq(t, tc); ok[0] != 0 || seq != 3 {
			t.Fatalf("got packet %d %q, want OK as packet 3", seq, ok)
		}
	})
	t.Run("a client without TLS is served on loopback", func(t *testing.T) {
		out, err := tm.mariadb(t, tlsPassword, "--skip-ssl", "-e", `\s`)
		if err != nil || !strings.Contains(out, "Not in use") {
			t.Errorf("got %v\n%s\nwant SSL not in use", err, out)
		}
	})
}

// nonLoopback is an address of this machine beyond loopback, or "".
func nonLoopback() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// TestMirrorTLSRequired: listening beyond this host with a certificate,
// a client without TLS is refused with error 3159 and its session
// closed, and one with TLS is served.
func TestMirrorTLSRequired(t *testing.T) {
	host, require := nonLoopback(), false
	if host == "" {
		// No address to listen on beyond loopback: the rule is forced.
		host, require = "127.0.0.1", true
	}
	tm := startTLSMirror(t, host, require)
	if !tm.m.requireTLS {
		t.Fatalf("listening on %s with a certificate: got requireTLS false, want true", tm.m.Addr())
	}
	t.Run("mariadb without TLS: 3159", func(t *testing.T) {
		out, err := tm.mariadb(t, tlsPassword, "--skip-ssl", "-e", "SELECT 1")
		if err == nil || !strings.Contains(out, "ERROR 3159 (HY000): Connections using insecure transport are prohibited") {
			t.Errorf("got %q, %v, want ERROR 3159 (HY000)", out, err)
		}
	})
	t.Run("go-sql-driver without TLS: 3159", func(t *testing.T) {
		err := tm.driver(t, false).Ping()
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != target.ERSecureTransportRequired || string(me.SQLState[:]) != "HY000" {
			t.Errorf("got %v, want error 3159 (HY000)", err)
		}
	})
	t.Run("mariadb --ssl: served", func(t *testing.T) {
		out, err := tm.mariadb(t, tlsPassword, append(tm.verifiedTLS(), "-e", `\s`)...)
		if err != nil || !strings.Contains(out, "Cipher in use is") {
			t.Errorf("got %v\n%s\nwant the session served over TLS", err, out)
		}
	})
	t.Run("go-sql-driver over TLS: served", func(t *testing.T) {
		var n int
		if err := tm.driver(t, true).QueryRow("SELECT 42").Scan(&n); err != nil || n != 42 {
			t.Errorf("got %d, %v, want 42", n, err)
		}
	})
	// The two refused are counted, and said; the two served are not.
	waitFor(t, 10*time.Second, "the refused clients counted", func() bool { return tm.m.Summary().RefusedPlain >= 2 })
	s := tm.m.Summary()
	var text strings.Builder
	if err := WriteText(&text, s); err != nil {
		t.Fatal(err)
	}
	if s.RefusedPlain != 2 || !strings.Contains(text.String(), "clients refused for want of TLS (error 3159): 2\n") {
		t.Errorf("got %d refused without TLS and the summary\n%s\nwant 2, said", s.RefusedPlain, text.String())
	}
}

// readSeq reads one packet from a raw client connection: its payload and
// sequence number.
func readSeq(t *testing.T, r io.Reader) ([]byte, byte) {
	t.Helper()
	h := make([]byte, 4)
	if _, err := io.ReadFull(r, h); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, int(h[0])|int(h[1])<<8|int(h[2])<<16)
	if _, err := io.ReadFull(r, b); err != nil {
		t.Fatal(err)
	}
	return b, h[3]
}

// greetingNonce is the 20-byte scramble of a greeting.
func greetingNonce(g []byte) []byte {
	p := g[bytes.IndexByte(g[1:], 0)+2:] // past the version
	nonce := bytes.Clone(p[4:12])
	return append(nonce, p[4+8+1+2+1+2+2+1+10:][:12]...)
}

// prefixConn sends first with the first write.
type prefixConn struct {
	net.Conn
	first []byte
}

func (c *prefixConn) Write(p []byte) (int, error) {
	if c.first != nil {
		b := append(c.first, p...)
		c.first = nil
		if _, err := c.Conn.Write(b); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}
