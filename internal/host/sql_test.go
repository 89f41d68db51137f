package host

import (
	"context"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox/gmstest"
	"github.com/shakedown/shakedown/internal/target"
)

// TestSQLFactsRemote collects from a remote-style server (go-mysql-server,
// which has fewer variables than MariaDB or MySQL): every SQL row has its
// value or says the server lacks the variable, and every host row says it
// is not local.
func TestSQLFactsRemote(t *testing.T) {
	srv := gmstest.Start(t)
	tgt, err := target.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	db, err := tgt.OpenNoDB(tgt.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	f := Collect(ctx, Options{Remote: "db.example.com", SQL: db, Hostname: "client", Now: fixedNow})
	if !f.Subject.Remote {
		t.Errorf("subject: got %+v, want remote", f.Subject)
	}
	sqlRows, known := 0, 0
	for _, x := range f.Facts {
		if x.Group != "sql" {
			if x.Known() || !strings.HasPrefix(x.Reason, "not local: the server runs on db.example.com") {
				t.Errorf("%s: got %q %q, want unknown as not local", x.Name, x.Value, x.Reason)
			}
			continue
		}
		sqlRows++
		switch {
		case x.Known():
			known++
		case !strings.HasPrefix(x.Reason, "the server has no variable "+strings.TrimPrefix(x.Name, "mysql.")):
			t.Errorf("%s: got reason %q, want it to say the server lacks the variable", x.Name, x.Reason)
		}
	}
	if sqlRows != len(sqlVariables) {
		t.Errorf("SQL rows: got %d, want %d", sqlRows, len(sqlVariables))
	}
	for _, name := range []string{"mysql.version", "mysql.max_connections"} {
		if x, _ := f.Get(name); !x.Known() {
			t.Errorf("%s: got unknown (%s), want the value go-mysql-server gives", name, x.Reason)
		}
	}
	t.Logf("%d of %d SQL rows known on go-mysql-server", known, sqlRows)
	for _, x := range f.Facts {
		if x.Group == "sql" {
			t.Logf("%s: %q %s", x.Name, x.Value, x.Reason)
		}
	}
	if pid, _, reason := LocalServer(ctx, db); pid != 0 || reason == "" {
		t.Errorf("LocalServer: got pid %d reason %q, want none with a reason (go-mysql-server has no pid file)", pid, reason)
	}
}
