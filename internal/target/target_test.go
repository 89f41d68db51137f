package target

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/sbflag"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name    string
		url     string
		want    []string // endpoints
		user    string
		db      string
		wantErr string
	}{
		{"full", "mysql://bench:s3cret@10.0.0.1:3307/app", []string{"10.0.0.1:3307"}, "bench", "app", ""},
		{"defaults", "mysql://", []string{"localhost:3306"}, DefaultUser, DefaultDB, ""},
		{"host lists", "mysql://u@h1,h2:3306,3307/db", []string{"h1:3306", "h2:3307"}, "u", "db", ""},
		{"socket", "mysql://u@/db?socket=/tmp/m.sock", []string{"/tmp/m.sock"}, "u", "db", ""},
		{"wrong scheme", "postgres://u@h/db", nil, "", "", "must start with mysql://"},
		{"bad port", "mysql://u@h:99999/db", nil, "", "", "not a port number"},
		{"bad timeout", "mysql://u@h/db?timeout=soon", nil, "", "", "want a duration"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := Parse(tc.url)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ep := range tg.Endpoints() {
				got = append(got, ep.String())
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("endpoints: got %v, want %v", got, tc.want)
			}
			if tg.User != tc.user || tg.DB != tc.db {
				t.Errorf("user/db: got %s/%s, want %s/%s", tg.User, tg.DB, tc.user, tc.db)
			}
		})
	}
}

func TestPasswordNeverShown(t *testing.T) {
	tg, err := Parse("mysql://bench:TopSecret99@127.0.0.1:3306/sbtest")
	if err != nil {
		t.Fatal(err)
	}
	if tg.Password != "TopSecret99" {
		t.Fatalf("password: got %q, want it parsed", tg.Password)
	}
	shown := []string{
		tg.String(), tg.Redacted(),
		tg.Explain(tg.Endpoints()[0], &mysql.MySQLError{Number: 1045, Message: "Access denied"}).Error(),
		tg.Explain(tg.Endpoints()[0], errors.New("boom")).Error(),
	}
	for _, s := range shown {
		if strings.Contains(s, "TopSecret99") {
			t.Errorf("password shown in %q", s)
		}
	}
	if _, err := Parse("mysql://u:TopSecret99@h:bad/db"); err == nil || strings.Contains(err.Error(), "TopSecret99") {
		t.Errorf("parse error must not echo the password: %v", err)
	}
}

func TestSysbenchFlags(t *testing.T) {
	fs := sbflag.NewFlagSet("t")
	var f Flags
	f.Bind(fs)
	err := fs.Parse([]string{"--mysql_host=a,b", "--mysql-port=3306,3307,3308", "--mysql_user=x", "--mysql-password=p", "--mysql-db=d", "--connect-timeout=2s"})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := f.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ep := range tg.Endpoints() {
		got = append(got, ep.String())
	}
	if want := "a:3306 b:3307 a:3308"; strings.Join(got, " ") != want {
		t.Errorf("round-robin endpoints: got %v, want %s", got, want)
	}
	if tg.User != "x" || tg.Password != "p" || tg.DB != "d" || tg.ConnectTimeout != 2*time.Second {
		t.Errorf("got user %q db %q timeout %v, want x d 2s", tg.User, tg.DB, tg.ConnectTimeout)
	}
}

func TestFlagsOverrideURL(t *testing.T) {
	fs := sbflag.NewFlagSet("t")
	var f Flags
	f.Bind(fs)
	if err := fs.Parse([]string{"--target=mysql://u@h:1/db1", "--mysql-db=db2"}); err != nil {
		t.Fatal(err)
	}
	tg, err := f.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if tg.DB != "db2" || tg.User != "u" {
		t.Errorf("got db %q user %q, want db2 u", tg.DB, tg.User)
	}
}

func TestConnLost(t *testing.T) {
	cases := []struct {
		name string
		err  error
		lost bool
		code uint16
	}{
		{"deadlock", &mysql.MySQLError{Number: 1213}, false, 1213},
		{"killed", &mysql.MySQLError{Number: 1927}, true, 1927},
		{"invalid conn", mysql.ErrInvalidConn, true, CRServerLost},
		{"plain", errors.New("x"), false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsConnLost(tc.err); got != tc.lost {
				t.Errorf("IsConnLost: got %v, want %v", got, tc.lost)
			}
			if got := Code(tc.err); got != tc.code {
				t.Errorf("Code: got %d, want %d", got, tc.code)
			}
		})
	}
}

// Explain says the failure for the user and keeps the driver's error, so
// that callers read its code without wrapping it again.
func TestExplainWrapsTheCause(t *testing.T) {
	tg, err := Parse("mysql://bench@127.0.0.1:3306/sbtest")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		cause error
		code  uint16
		text  string
	}{
		{"access denied", &mysql.MySQLError{Number: 1045, Message: "Access denied"}, 1045, "access denied for user"},
		{"refused", syscall.ECONNREFUSED, CRServerLost, "connection refused"},
		{"other", errors.New("boom"), 0, "boom"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tg.Explain(tg.Endpoints()[0], tc.cause)
			if !errors.Is(err, tc.cause) {
				t.Errorf("errors.Is(Explain(err), err): got false, want true")
			}
			if got := Code(err); got != tc.code {
				t.Errorf("Code: got %d, want %d", got, tc.code)
			}
			if !strings.Contains(err.Error(), tc.text) {
				t.Errorf("message %q: want it to contain %q", err, tc.text)
			}
		})
	}
}
