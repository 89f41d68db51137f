package target

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/wire/wiretest"
)

// TestPasswordNeedingEncoding: a password with / # ? or @ left as it is
// must fail before any connection, without a word of the password.
func TestPasswordNeedingEncoding(t *testing.T) {
	cases := []struct {
		name string
		url  string
	}{
		{"slash and hash", "mysql://sp:Kq@zX/w:Vb#1@127.0.0.1/sbtest"},
		{"hash", "mysql://sp:Kq#zX@127.0.0.1:3306/sbtest"},
		{"question mark", "mysql://sp:Kq?zX@127.0.0.1:3306/sbtest"},
		{"slash", "mysql://sp:Kq/zX@127.0.0.1:3306/sbtest"},
		{"at sign", "mysql://sp:Kq@zX@127.0.0.1:3306/sbtest"},
		{"space", "mysql://sp:Kq zX@127.0.0.1:3306/sbtest"},
	}
	secrets := []string{"Kq", "zX", "Vb"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := Parse(tc.url)
			if err == nil {
				t.Fatalf("got a target (hosts %v), want an error", tg.Hosts)
			}
			msg := err.Error()
			if !strings.Contains(msg, "percent-encoded") {
				t.Errorf("got %q, want it to suggest percent-encoding", msg)
			}
			for _, s := range secrets {
				if strings.Contains(msg, s) {
					t.Errorf("message %q shows %q, part of the password", msg, s)
				}
			}
		})
	}
	tg, err := Parse("mysql://sp:p%40ss%2Fw%3Ard%231@127.0.0.1/sbtest")
	if err != nil || tg.Password != "p@ss/w:rd#1" || tg.Hosts[0] != "127.0.0.1" {
		t.Errorf("percent-encoded: got %v, %+v, want password p@ss/w:rd#1 on 127.0.0.1", err, tg)
	}
}

func TestURLParameters(t *testing.T) {
	cases := []struct {
		name    string
		url     string
		wantErr string
		check   func(*Target) bool
	}{
		{"charset", "mysql://u@h/db?charset=latin1", "", func(t *Target) bool { return t.Charset == "latin1" && t.Collation == "" }},
		{"collation brings its charset", "mysql://u@h/db?collation=utf8mb4_bin", "", func(t *Target) bool { return t.Charset == "utf8mb4" && t.Collation == "utf8mb4_bin" }},
		{"tls values", "mysql://u@h/db?tls=skip-verify", "", func(t *Target) bool { return t.TLS == "skip-verify" }},
		{"socket and timeout", "mysql://u@/db?socket=/tmp/s&timeout=3s", "", func(t *Target) bool { return t.Socket == "/tmp/s" && t.ConnectTimeout.Seconds() == 3 }},
		{"tls=maybe lists the values", "mysql://u@h/db?tls=maybe", `tls="maybe": want one of true, false, skip-verify, preferred`, nil},
		{"compress refused", "mysql://u@h/db?compress=true", "compress is not supported: remove ?compress=true", nil},
		{"unknown parameter", "mysql://u@h/db?autocommit=1", `unknown parameter "autocommit"; known: socket, tls, tls-ca, tls-cert, tls-key, timeout, connect_timeout, charset, collation, password_env`, nil},
		{"typo in a parameter", "mysql://u@h/db?chrset=utf8mb4", `unknown parameter "chrset" (did you mean "charset"?)`, nil},
		{"charset is a name, nothing else", "mysql://u@h/db?charset=utf8mb4%3BDROP", "want a name such as utf8mb4", nil},
		{"malformed parameters", "mysql://u@h/db?charset=utf8mb4;DROP", "malformed parameters", nil},
		{"unsafe charset", "mysql://u@h/db?charset=gbk", "charset=gbk: not supported", nil},
		{"a fragment", "mysql://u@h/db#x", "percent-encode", nil},
		{"not a URL", "44021", `target "44021" is not a URL: write mysql://user@host:port/db`, nil},
		{"not a URL, with a password", "bench:Kq@host", `target "...@host" is not a URL`, nil},
		{"two ports", "mysql://u@h:1:2/db", `target URL: "h:1:2" has more than one port`, nil},
		{"two ports on a host list", "mysql://u@a,b:1:2/db", `"a,b:1:2" has more than one port`, nil},
		{"IPv6 in brackets", "mysql://u@[::1]:3307/db", "", func(t *Target) bool { return t.Hosts[0] == "::1" && t.Ports[0] == 3307 }},
		{"zero timeout", "mysql://u@h/db?timeout=0s", "want a duration", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := Parse(tc.url)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(tg) {
				t.Errorf("got %+v", tg)
			}
			if len(tg.Params) != 0 {
				t.Errorf("Params: got %v, want none from the URL (the driver would SET them unquoted)", tg.Params)
			}
		})
	}
}

func TestConfigCharset(t *testing.T) {
	tg, err := Parse("mysql://u@127.0.0.1:3306/db?charset=latin1&collation=latin1_bin")
	if err != nil {
		t.Fatal(err)
	}
	c := tg.Config(tg.Endpoints()[0], "db")
	if c.Collation != "latin1_bin" || len(c.Params) != 0 {
		t.Errorf("got collation %q and params %v, want latin1_bin and none", c.Collation, c.Params)
	}
	if dsn := c.FormatDSN(); !strings.Contains(dsn, "charset=latin1") {
		t.Errorf("DSN %q: want charset=latin1", dsn)
	}
	if _, err := mysql.NewConnector(c); err != nil {
		t.Errorf("NewConnector: %v", err)
	}
}

func TestNamesDB(t *testing.T) {
	cases := []struct {
		url    string
		want   bool
		wantDB string
	}{
		{"mysql://u@h:3306/shop", true, "shop"},
		{"mysql://u@h:3306/", false, DefaultDB},
		{"mysql://u@h:3306", false, DefaultDB},
	}
	for _, tc := range cases {
		tg, err := Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if tg.NamesDB() != tc.want || tg.DB != tc.wantDB {
			t.Errorf("%s: got %v %q, want %v %q", tc.url, tg.NamesDB(), tg.DB, tc.want, tc.wantDB)
		}
	}
}

func TestTLSFiles(t *testing.T) {
	ca := wiretest.NewCA(t)
	dir := t.TempDir()
	caFile, certFile, keyFile := ca.Files(t, dir, ca.Server(t, "127.0.0.1"))
	junk := filepath.Join(dir, "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		query   string
		wantErr string
		check   func(*testing.T, *Target)
	}{
		{"a CA verifies the server by its host", "tls-ca=" + caFile, "", func(t *testing.T, tg *Target) {
			c := tg.Config(tg.Endpoints()[0], "")
			if tg.TLS != "true" || c.TLS == nil || c.TLS.RootCAs == nil || c.TLS.InsecureSkipVerify || c.TLS.ServerName != "db1" {
				t.Errorf("got TLS %q, config %+v; want verification against the CA for host db1", tg.TLS, c.TLS)
			}
		}},
		{"skip-verify keeps the client certificate", "tls=skip-verify&tls-cert=" + certFile + "&tls-key=" + keyFile, "", func(t *testing.T, tg *Target) {
			c := tg.Config(tg.Endpoints()[0], "")
			if c.TLS == nil || !c.TLS.InsecureSkipVerify || len(c.TLS.Certificates) != 1 {
				t.Errorf("got config %+v, want a client certificate and no verification", c.TLS)
			}
		}},
		{"tls=false with a CA", "tls=false&tls-ca=" + caFile, "tls=false with tls-ca", nil},
		{"a certificate without its key", "tls-cert=" + certFile, "tls-cert and tls-key go together", nil},
		{"no such CA file", "tls-ca=" + filepath.Join(dir, "nope.pem"), "tls-ca: open", nil},
		{"a CA file without a certificate", "tls-ca=" + junk, "no PEM certificate", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := Parse("mysql://u@db1:3306/x?" + tc.query)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, tg)
		})
	}
}

func TestPasswordEnv(t *testing.T) {
	env := map[string]string{"TIDB_PW": "s3cret", "MYSQL_PWD": "other"}
	getenv := func(k string) string { return env[k] }
	tg, err := Parse("mysql://app@h:4000/shop?password_env=TIDB_PW")
	if err != nil {
		t.Fatal(err)
	}
	var c Credentials
	if err := c.Fill(tg, getenv); err != nil {
		t.Fatal(err)
	}
	if tg.Password != "s3cret" || tg.PasswordFrom != "TIDB_PW" || len(tg.Params) != 0 {
		t.Errorf("got password %q from %q, params %v; want TIDB_PW's, and no session variable", tg.Password, tg.PasswordFrom, tg.Params)
	}
	tg, _ = Parse("mysql://app@h:4000/shop?password_env=UNSET_PW")
	if err := c.Fill(tg, getenv); err == nil || !strings.Contains(err.Error(), "UNSET_PW is not set") {
		t.Errorf("unset variable: got %v, want it named", err)
	}
	if _, err := Parse("mysql://app@h/shop?password_env=A-B"); err == nil || !strings.Contains(err.Error(), "name of an environment variable") {
		t.Errorf("bad name: got %v", err)
	}
}
