package client

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire"
	"github.com/shakedown/shakedown/internal/workload"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

func testTarget(t *testing.T) *target.Target {
	t.Helper()
	tg, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	db, err := tg.Open(tg.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"CREATE TABLE IF NOT EXISTS client_t (id INT PRIMARY KEY, v INT)", "REPLACE INTO client_t VALUES (1, 0)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return tg
}

// Every transport runs the same statements and counts them alike: a result
// set is a read, affected rows a write, anything else (and a ping) other.
func TestTransportsCountAlike(t *testing.T) {
	tg := testTarget(t)
	ctx := context.Background()
	ep := tg.Endpoints()[0]
	dialWire := func(ps bool) func(*testing.T, *workload.Counts) workload.Conn {
		return func(t *testing.T, counts *workload.Counts) workload.Conn {
			w, err := wire.Dial(ctx, tg.Config(ep, tg.DB), wire.Options{Blocking: true})
			if err != nil {
				t.Fatal(err)
			}
			return NewWire(w, ps, counts)
		}
	}
	dialSQL := func(ps bool) func(*testing.T, *workload.Counts) workload.Conn {
		return func(t *testing.T, counts *workload.Counts) workload.Conn {
			db, err := tg.Open(ep, 1)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			c, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return NewSQL(c, ps, counts)
		}
	}
	perStatement := func(t *testing.T, counts *workload.Counts) workload.Conn {
		d := NewDialer(tg, Options{DB: tg.DB, PS: true, Plan: IOPlan{Mode: "blocking", IO: wire.Options{Blocking: true}}})
		return NewPerStatement(func(ctx context.Context) (workload.Conn, error) {
			return d.Connect(ctx, 0, counts)
		}, func(c workload.Conn) { c.Close() })
	}
	cases := []struct {
		name string
		dial func(*testing.T, *workload.Counts) workload.Conn
	}{
		{"wire prepared", dialWire(true)},
		{"wire text", dialWire(false)},
		{"sql prepared", dialSQL(true)},
		{"sql text", dialSQL(false)},
		{"per statement", perStatement},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var counts workload.Counts
			c := tc.dial(t, &counts)
			defer c.Close()
			sel, err := c.Prepare(ctx, "SELECT v FROM client_t WHERE id = ?")
			if err != nil {
				t.Fatal(err)
			}
			defer sel.Close()
			upd, err := c.Prepare(ctx, "UPDATE client_t SET v = v + 1 WHERE id = ?")
			if err != nil {
				t.Fatal(err)
			}
			defer upd.Close()
			if err := sel.Query(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if n, err := upd.Exec(ctx, 1); err != nil || n != 1 {
				t.Fatalf("update: got %d, %v, want 1 row", n, err)
			}
			if n, err := upd.Exec(ctx, 999); err != nil || n != 0 {
				t.Fatalf("update of no row: got %d, %v, want 0", n, err)
			}
			if err := c.Query(ctx, "SELECT ?, 'a?b'", 7); err != nil {
				t.Fatal(err)
			}
			if err := c.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Exec(ctx, "SELECT * FROM no_such_table_here"); target.Code(err) != 1146 {
				t.Errorf("got %v, want error 1146", err)
			}
			r, w, o := counts.Reads.Load(), counts.Writes.Load(), counts.Others.Load()
			if r != 2 || w != 1 || o != 2 {
				t.Errorf("reads/writes/others: got %d/%d/%d, want 2/1/2", r, w, o)
			}
			if c.Broken() {
				t.Error("a server error broke the connection")
			}
		})
	}
}

func TestDialerExplainsAndInits(t *testing.T) {
	tg := testTarget(t)
	ctx := context.Background()

	var counts workload.Counts
	d := NewDialer(tg, Options{DB: tg.DB, Init: "SET @client_init = 42", Configure: func(c *mysql.Config) { c.MultiStatements = true; c.InterpolateParams = false }})
	c, err := d.Connect(ctx, 3, &counts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Query(ctx, "SELECT @client_init; SELECT 2"); err != nil {
		t.Errorf("multi-statement query: %v", err)
	}
	c.Close()

	bad := *tg
	bad.User = "no_such_user_here"
	bd := NewDialer(&bad, Options{DB: tg.DB})
	_, err = bd.Connect(ctx, 0, &counts)
	if target.Code(err) != 1045 || !strings.Contains(err.Error(), "access denied for user \"no_such_user_here\"") {
		t.Errorf("got %v (code %d), want access denied explained with its code", err, target.Code(err))
	}
	if (Policy{RetryConnect: true}).OnConnect(err) != Fail {
		t.Error("access denied must not be tried again")
	}

	id := NewDialer(tg, Options{DB: tg.DB, Init: "SELECT * FROM no_such_table_here"})
	if _, err := id.Connect(ctx, 0, &counts); err == nil || !strings.Contains(err.Error(), "--init-command") || target.Code(err) != 1146 {
		t.Errorf("got %v, want the --init-command failure with its code", err)
	}
}
