package wire

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

func TestInterpolate(t *testing.T) {
	when := time.Date(2024, 2, 29, 13, 14, 15, 120000000, time.UTC)
	cases := []struct {
		name        string
		query       string
		args        []any
		noBackslash bool
		want        string
	}{
		{"ints", "SELECT c FROM t WHERE id=? AND k BETWEEN ? AND ?", []any{int64(5), 1, uint32(7)}, false, "SELECT c FROM t WHERE id=5 AND k BETWEEN 1 AND 7"},
		{"string escaped", "UPDATE t SET c=? WHERE id=?", []any{"it's \\ \n\x00\"", int64(1)}, false, `UPDATE t SET c='it\'s \\ \n\0\"' WHERE id=1`},
		{"string under NO_BACKSLASH_ESCAPES", "UPDATE t SET c=?", []any{"it's \\ \n"}, true, "UPDATE t SET c='it''s \\ \n'"},
		{"null and float", "INSERT INTO t VALUES (?, ?)", []any{nil, 1.5}, false, "INSERT INTO t VALUES (NULL, 1.5)"},
		{"small types", "VALUES (?, ?, ?, ?, ?)", []any{true, int8(-1), uint16(2), float32(0.25), []byte(nil)}, false, "VALUES (1, -1, 2, 0.25, NULL)"},
		{"time", "VALUES (?, ?)", []any{when, time.Time{}}, false, "VALUES ('2024-02-29 13:14:15.12', '0000-00-00')"},
		{"placeholder in quotes kept", "SELECT '?', `a?`, ? FROM t", []any{int64(2)}, false, "SELECT '?', `a?`, 2 FROM t"},
		{"escaped quote in literal", `SELECT 'a\'?', ?`, []any{int64(3)}, false, `SELECT 'a\'?', 3`},
		{"backslash ends a literal under NO_BACKSLASH_ESCAPES", `SELECT 'a\', ?`, []any{int64(3)}, true, `SELECT 'a\', 3`},
		{"doubled quote in literal", "SELECT 'a''?', ?", []any{int64(4)}, false, "SELECT 'a''?', 4"},
		{"block comment", "SELECT /* why? */ ?", []any{int64(1)}, false, "SELECT /* why? */ 1"},
		{"unterminated comment", "SELECT ? /* why?", []any{int64(1)}, false, "SELECT 1 /* why?"},
		{"dash comment", "SELECT ? -- why?\n, ?", []any{int64(1), int64(2)}, false, "SELECT 1 -- why?\n, 2"},
		{"dashes without a space are minus signs", "SELECT 1--?", []any{int64(1)}, false, "SELECT 1--1"},
		{"hash comment", "SELECT ? # why?\n", []any{int64(1)}, false, "SELECT 1 # why?\n"},
		{"executable comment runs", "SELECT /*!50000 ? */", []any{int64(1)}, false, "SELECT /*!50000 1 */"},
		{"MariaDB executable comment runs", "SELECT /*M!100000 ? */", []any{int64(1)}, false, "SELECT /*M!100000 1 */"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := interpolate(nil, tc.query, tc.args, tc.noBackslash, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name  string
		query string
		args  []any
	}{
		{"too few arguments", "SELECT ?, ?", []any{1}},
		{"too many arguments", "SELECT ?", []any{1, 2}},
		{"no placeholder in a comment", "SELECT /* ? */ 1", []any{1}},
		{"NaN", "SELECT ?", []any{math.NaN()}},
		{"year 10000", "SELECT ?", []any{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
		{"unsupported type", "SELECT ?", []any{[]int{1}}},
	} {
		if _, err := Interpolate(nil, tc.query, tc.args); err == nil {
			t.Errorf("%s: got nil error, want one", tc.name)
		}
	}
}

func dial(t *testing.T) *Conn {
	t.Helper()
	tg, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Dial(context.Background(), tg.Config(tg.Endpoints()[0], tg.DB), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func mustQuery(t *testing.T, c *Conn, q string) Result {
	t.Helper()
	r, err := c.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}

func TestAgainstServer(t *testing.T) {
	c := dial(t)
	mustQuery(t, c, "DROP TABLE IF EXISTS wire_t")
	mustQuery(t, c, "CREATE TABLE wire_t (id INT PRIMARY KEY, s VARCHAR(100), b LONGBLOB, f DOUBLE, u BIGINT UNSIGNED)")

	ins, err := c.Prepare("INSERT INTO wire_t VALUES (?, ?, ?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	big := []byte(strings.Repeat("x", 100000)) // larger than the read buffer
	for i, args := range [][]any{
		{1, "one", []byte("raw"), 1.25, uint64(1 << 63)},
		{int64(2), nil, big, nil, nil},
		{int32(3), "three", nil, 0.5, uint64(3)},
	} {
		r, err := ins.Exec(args...)
		if err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
		if r.HasRows || r.Affected != 1 {
			t.Errorf("insert %d: got %+v, want 1 affected row and no result set", i, r)
		}
	}
	if _, err := ins.Exec(1, "dup", nil, nil, nil); err == nil {
		t.Error("duplicate key: got nil error")
	} else if me, ok := err.(*mysql.MySQLError); !ok || me.Number != 1062 {
		t.Errorf("duplicate key: got %v, want error 1062", err)
	}
	if c.Broken() {
		t.Fatal("a server error must not break the connection")
	}
	if err := ins.Close(); err != nil {
		t.Fatal(err)
	}

	sel, err := c.Prepare("SELECT id, s, b, f, u FROM wire_t WHERE id >= ?")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // executes after the first may skip the metadata
		r, err := sel.Exec(1)
		if err != nil {
			t.Fatal(err)
		}
		if !r.HasRows || r.Rows != 3 {
			t.Errorf("select: got %+v, want 3 rows", r)
		}
	}
	r, err := sel.Exec(100)
	if err != nil || !r.HasRows || r.Rows != 0 {
		t.Errorf("empty select: got %+v %v, want a result set with no rows", r, err)
	}
	if r := mustQuery(t, c, "SELECT * FROM wire_t"); r.Rows != 3 {
		t.Errorf("text select: got %d rows, want 3", r.Rows)
	}
	if r := mustQuery(t, c, "UPDATE wire_t SET s='z' WHERE id=99"); r.HasRows || r.Affected != 0 {
		t.Errorf("update of nothing: got %+v, want 0 affected", r)
	}
	if r := mustQuery(t, c, "BEGIN"); r.HasRows || r.Affected != 0 {
		t.Errorf("begin: got %+v", r)
	}
	mustQuery(t, c, "COMMIT")

	// A procedure returns several result sets and a final OK.
	mustQuery(t, c, "DROP PROCEDURE IF EXISTS wire_p")
	mustQuery(t, c, "CREATE PROCEDURE wire_p() BEGIN SELECT 1; SELECT id FROM wire_t; END")
	if r := mustQuery(t, c, "CALL wire_p()"); !r.HasRows || r.Rows != 4 {
		t.Errorf("call: got %+v, want 4 rows over two result sets", r)
	}
	if r := mustQuery(t, c, "SELECT 1"); r.Rows != 1 {
		t.Errorf("after call: got %+v, want the connection in step", r)
	}
	if _, err := c.Query("SELEKT 1"); err == nil {
		t.Error("syntax error: got nil error")
	}
	if err := c.Ping(); err != nil {
		t.Errorf("ping: %v", err)
	}
}

func TestInterruptUnblocksARead(t *testing.T) {
	tg, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c, err := Dial(ctx, tg.Config(tg.Endpoints()[0], tg.DB), Options{Blocking: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan error)
	go func() {
		_, err := c.Query("SELECT SLEEP(30)")
		done <- err
	}()
	// Wait until the statement runs on the server.
	watch := dial(t)
	deadline := time.Now().Add(10 * time.Second)
	for mustQuery(t, watch, "SELECT 1 FROM information_schema.processlist WHERE info = 'SELECT SLEEP(30)'").Rows == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the statement never showed in the processlist")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("interrupted query: got nil error")
	}
	if !c.Broken() {
		t.Error("an interrupted connection must be broken")
	}
}
