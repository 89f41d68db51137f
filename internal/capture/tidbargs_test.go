package capture

import (
	"reflect"
	"testing"
)

func TestTiDBArguments(t *testing.T) {
	for _, tt := range []struct {
		name, sql, text string
		params          []any
		ok              bool
	}{
		{"one", "select * from a where id=? [arguments: 3]", "select * from a where id=?", []any{int64(3)}, true},
		{"several", `INSERT INTO t VALUES (?, ?, ?) [arguments: (51, "a, \"b\"", <nil>)]`, "INSERT INTO t VALUES (?, ?, ?)", []any{int64(51), `a, "b"`, nil}, true},
		{"a decimal as its text", "SELECT ? + 1 [arguments: 1.50]", "SELECT ? + 1", []any{"1.50"}, true},
		{"not prepared", "SELECT 1", "", nil, false},
		{"marks and values disagree", "SELECT '?', ? [arguments: 3]", "", nil, false},
		{"an open string", `SELECT ? [arguments: ("abc)]`, "", nil, false},
		{"no marks", "SELECT 1 [arguments: 3]", "", nil, false},
	} {
		text, params, ok := tidbArguments(tt.sql)
		if ok != tt.ok || text != tt.text || !reflect.DeepEqual(params, tt.params) {
			t.Errorf("%s: got %q, %#v, %v; want %q, %#v, %v", tt.name, text, params, ok, tt.text, tt.params, tt.ok)
		}
	}
}

// TiDB's slow log: each connection is a session (Conn_ID), Result_rows
// are the rows sent, prepared statements carry their values, and the
// server's internal statements are not the application's.
func TestTiDBSlowLog(t *testing.T) {
	got, c := readLog(t, "slow", tidbSlowEntry)
	if len(got) != 1 {
		t.Fatalf("got %d records, want 1 (the internal statement left out)", len(got))
	}
	r := got[0]
	if r.Session != "2097172" || r.DB != "shop" || r.SQL != "select * from a where id=?" || !r.Prepared ||
		!reflect.DeepEqual(r.Params, []any{int64(3)}) || r.RowsSent == nil || *r.RowsSent != 1 {
		t.Errorf("got %+v, want session 2097172, db shop, the prepared text with [3], 1 row sent", r)
	}
	if s := c.Stats.Sources[0]; s.Other != 1 {
		t.Errorf("got %d entries that are not statements, want the internal one", s.Other)
	}
}

const tidbSlowEntry = `# Time: 2026-12-01T23:22:09.966495496Z
# Txn_start_ts: 464087443402047488
# User@Host: shakedown[shakedown] @ 127.0.0.1 [127.0.0.1]
# Conn_ID: 2097172
# Query_time: 0.013856
# DB: shop
# Is_internal: false
# Prepared: false
# Result_rows: 1
# Succ: true
select * from a where id=? [arguments: 3];
# Time: 2026-12-01T23:22:10.002Z
# Conn_ID: 0
# Query_time: 0.0002
# Is_internal: true
# Result_rows: 1
select count(1) from mysql.tidb_ddl_job where job_id >= 0 and type = 62;
`
