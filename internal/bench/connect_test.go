package bench

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// job parses a command line against the shared test server, whose URL
// ends in /sbtest; db replaces that database when set.
func job(t *testing.T, verb, db string, args ...string) *Job {
	t.Helper()
	url := sandboxtest.URL(t)
	if db != "" {
		url = strings.TrimSuffix(url, "/sbtest") + "/" + db
	}
	j, err := Parse(verb, append(args, "--target="+url), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestConnectDetects(t *testing.T) {
	j := job(t, "run", "", "ping")
	db, srv, err := j.connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if srv.Flavour != "mariadb" || srv.Version == "" {
		t.Errorf("got %+v, want a MariaDB and its version", srv)
	}
}

func TestConnectExplains(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().(*net.TCPAddr).Port
	l.Close()
	refused, err := Parse("run", []string{"ping", fmt.Sprintf("--target=mysql://u@127.0.0.1:%d/db", dead)}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		j    *Job
		code uint16
		want string
	}{
		{"no such database", job(t, "run", "no_such_db_here", "ping"), 1049, `database "no_such_db_here" does not exist`},
		{"nobody listening", refused, target.CRServerLost, "connection refused"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := tc.j.connect(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if got := target.Code(err); got != tc.code {
				t.Errorf("code: got %d, want %d: the explanation must keep the driver's error", got, tc.code)
			}
		})
	}
}
