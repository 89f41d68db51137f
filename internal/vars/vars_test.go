package vars

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/golden"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

func TestNormalize(t *testing.T) {
	cases := []struct{ in, want string }{
		{"ON", "1"}, {"yes", "1"}, {"TRUE", "1"}, {"OFF", "0"}, {"No", "0"}, {"false", "0"},
		{"1", "1"}, {"1.000000", "1"}, {"0.500000", "0.5"}, {"18446744073709551615", "18446744073709551615"},
		{"-1", "-1"}, {"O_DIRECT", "o_direct"}, {"  utf8mb4 ", "utf8mb4"},
		{"STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION", "no_engine_substitution,strict_trans_tables"},
		{"NO_ENGINE_SUBSTITUTION,STRICT_TRANS_TABLES", "no_engine_substitution,strict_trans_tables"},
		{"", ""},
	}
	for _, tc := range cases {
		if got := Normalize(tc.in); got != tc.want {
			t.Errorf("Normalize(%q): got %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestIgnored(t *testing.T) {
	cases := []struct {
		name string
		want bool
	}{
		{"server_id", true}, {"server_uuid", true}, {"hostname", true}, {"port", true}, {"socket", true},
		{"datadir", true}, {"pid_file", true}, {"gtid_binlog_pos", true}, {"log_bin_basename", true},
		{"log_bin_index", true}, {"relay_log_index", true}, {"general_log_file", true}, {"plugin_dir", true},
		{"timestamp", true}, {"innodb_data_home_dir", true}, {"ssl_cert", true},
		{"innodb_flush_log_at_trx_commit", false}, {"log_bin", false}, {"innodb_adaptive_hash_index", false},
		{"open_files_limit", false}, {"innodb_log_file_size", false}, {"version", false}, {"general_log", false},
	}
	for _, tc := range cases {
		if got := Ignored(tc.name); got != tc.want {
			t.Errorf("Ignored(%q): got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// durable and relaxed mirror the demo's two sandboxes.
func durableRelaxed() (map[string]string, map[string]string) {
	base := func() map[string]string {
		return map[string]string{
			"innodb_buffer_pool_size": "268435456", "log_bin": "ON", "binlog_format": "MIXED",
			"sql_mode": "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO", "innodb_log_file_size": "67108864",
			"version": "10.11.19-MariaDB-log", "max_connections": "151", "aria_pagecache_buffer_size": "134217728",
		}
	}
	a, b := base(), base()
	a["innodb_flush_log_at_trx_commit"], b["innodb_flush_log_at_trx_commit"] = "1", "0"
	a["sync_binlog"], b["sync_binlog"] = "1", "0"
	a["server_id"], b["server_id"] = "1", "2"
	a["port"], b["port"] = "3306", "3307"
	a["datadir"], b["datadir"] = "/a/", "/b/"
	a["max_connections"], b["max_connections"] = "151", "151.000"
	a["log_bin"], b["log_bin"] = "ON", "1"
	a["sql_mode"], b["sql_mode"] = "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO", "error_for_division_by_zero,strict_trans_tables"
	b["aria_pagecache_buffer_size"] = "67108864"
	b["innodb_buffer_pool_size"] = "134217728"
	a["innodb_log_files_in_group"] = "1"
	delete(b, "version")
	return a, b
}

func TestDiffOrderAndExplanations(t *testing.T) {
	a, b := durableRelaxed()
	diffs := Diff(a, b)
	var names []string
	for _, d := range diffs {
		names = append(names, d.Name)
	}
	// Variables both servers have first, then those one lacks.
	want := []string{"innodb_flush_log_at_trx_commit", "sync_binlog", "innodb_buffer_pool_size", "aria_pagecache_buffer_size", "innodb_log_files_in_group", "version"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("order: got %v, want %v", names, want)
	}
	for _, d := range diffs[:3] {
		if !d.Relevant || d.Explain == "" || d.Group == "" {
			t.Errorf("%s: got relevant=%v group=%q explain=%q, want it explained", d.Name, d.Relevant, d.Group, d.Explain)
		}
	}
	if got := diffs[2].Notes; len(got) != 2 || !strings.Contains(got[1], "0.50x") {
		t.Errorf("buffer pool notes: got %q, want the candidate flagged at 0.50x", got)
	}
	if got := diffs[5]; got.Values[1] != Missing || !got.OneSide {
		t.Errorf("version: got %+v, want the candidate's missing, one side only", got)
	}
	if diffs[3].Relevant {
		t.Errorf("aria_pagecache_buffer_size: got relevant, want an ordinary difference")
	}
}

func TestDiffOfItselfIsEmpty(t *testing.T) {
	a, _ := durableRelaxed()
	if got := Diff(a, a); len(got) != 0 {
		t.Errorf("got %d differences, want none: %+v", len(got), got)
	}
	all := Compare([]map[string]string{a, a}, true)
	if len(all) == 0 {
		t.Fatalf("--all: got nothing, want every variable")
	}
	for _, d := range all {
		if !d.Equal {
			t.Errorf("--all of itself: %s not equal", d.Name)
		}
		if d.Name == "server_id" || d.Name == "datadir" {
			t.Errorf("--all: got per-instance %s, want it ignored", d.Name)
		}
	}
	if all[0].Name != "innodb_flush_log_at_trx_commit" {
		t.Errorf("--all: first got %s, want the relevant ones first", all[0].Name)
	}
}

func TestRedoLogCapacity(t *testing.T) {
	a := map[string]string{"innodb_log_file_size": "50331648", "innodb_log_files_in_group": "2"}
	b := map[string]string{"innodb_redo_log_capacity": "100663296"}
	c := map[string]string{"innodb_log_file_size": "100663296"}
	for name, sets := range map[string][]map[string]string{"MySQL 5.7 vs 8.0.30": {a, b}, "MySQL 5.7 vs MariaDB": {a, c}} {
		for _, d := range Compare(sets, false) {
			if d.Name == redoCapacity {
				t.Errorf("%s: redo log capacity differs: %v, want the same 96 MiB", name, d.Values)
			}
		}
	}
	if d := Compare([]map[string]string{b, {"innodb_redo_log_capacity": "1048576"}}, false); len(d) == 0 || d[0].Name != redoCapacity {
		t.Errorf("different capacities: got %+v, want the derived figure first", d)
	}
}

func TestWriteTextGolden(t *testing.T) {
	a, b := durableRelaxed()
	a["optimizer_switch"] = "index_merge=on,index_merge_union=on,mrr=off,mrr_cost_based=off,derived_merge=on,derived_with_keys=on"
	b["optimizer_switch"] = "index_merge=on,index_merge_union=on,mrr=on,mrr_cost_based=off,derived_merge=on,derived_with_keys=on"
	var buf bytes.Buffer
	if err := WriteText(&buf, []string{"durable", "relaxed"}, Diff(a, b), false); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "diff.golden", buf.Bytes())
	buf.Reset()
	if err := WriteText(&buf, []string{"a", "a"}, nil, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "No differences") {
		t.Errorf("no differences: got %q", buf.String())
	}
}

func TestWriteJSON(t *testing.T) {
	a, b := durableRelaxed()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, []string{"durable", "relaxed"}, Diff(a, b)); err != nil {
		t.Fatal(err)
	}
	var doc Document
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Servers) != 2 || doc.Differences[0].Name != "innodb_flush_log_at_trx_commit" || doc.Differences[0].Values[1] != "0" {
		t.Errorf("got %+v, want flush_log_at_trx_commit first with 1 and 0", doc)
	}
}

func TestWriteHTMLEscapes(t *testing.T) {
	d := []Difference{{Name: "init_connect", Values: []string{"<script>x</script>", "SET NAMES utf8"}}}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, []string{"a<b", "c"}, d); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "<script>") || !strings.Contains(out, "&lt;script&gt;") || !strings.Contains(out, "a&lt;b") {
		t.Errorf("got %s, want values and names escaped", out)
	}
	if !strings.Contains(out, `class="vars-diff"`) || !strings.Contains(out, `class="other"`) {
		t.Errorf("got %s, want the table and row classes", out)
	}
}

func TestCollect(t *testing.T) {
	tg, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	db, err := tg.OpenNoDB(tg.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := Collect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"innodb_flush_log_at_trx_commit", "sync_binlog", "max_connections", "version"} {
		if _, ok := got[k]; !ok {
			t.Errorf("%s: missing", k)
		}
	}
	if d := Diff(got, got); len(d) != 0 {
		t.Errorf("a server against itself: got %d differences, want none", len(d))
	}
}

// Across flavours hundreds of variables exist on one side only: they are
// summed up apart, so that the values both servers have stay readable.
func TestOneSideApart(t *testing.T) {
	a := map[string]string{"sort_buffer_size": "2097152", "wsrep_on": "OFF", "aria_pagecache_buffer_size": "1", "innodb_flush_log_at_trx_commit": "1"}
	b := map[string]string{"sort_buffer_size": "262144", "tidb_mem_quota_query": "1073741824"}
	diffs := Diff(a, b)
	var oneSide []string
	for i, d := range diffs {
		if d.OneSide {
			oneSide = append(oneSide, d.Name)
		} else if i > 0 && diffs[i-1].OneSide {
			t.Errorf("got %s after a one-side variable, want every variable both have first", d.Name)
		}
	}
	if len(oneSide) != 4 {
		t.Fatalf("one-side variables: got %v, want 4", oneSide)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, []string{"mariadb", "tidb"}, diffs, false); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"On some servers only: 4 variables",
		"only on [1]: 3, of them known to change performance or behaviour: innodb_flush_log_at_trx_commit",
		"only on [2]: 1, of them known to change performance or behaviour: tidb_mem_quota_query\n",
		"1 variables differ, 1 of them known to change performance or behaviour (*); 4 more exist on some servers only",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("got\n%s\nwant it to contain %q", out, want)
		}
	}
	if strings.Contains(out, "wsrep_on ") {
		t.Errorf("got\n%s\nwant one-side variables summed up, not listed", out)
	}
	buf.Reset()
	if err := WriteText(&buf, []string{"mariadb", "tidb"}, diffs, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "On some servers only:\nvariable") || !strings.Contains(buf.String(), "wsrep_on") {
		t.Errorf("with all: got\n%s\nwant one line per one-side variable", buf.String())
	}
	buf.Reset()
	if err := WriteHTML(&buf, []string{"mariadb", "tidb"}, diffs); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	if i, j := strings.Index(html, `<details class="vars-one-side">`), strings.Index(html, "wsrep_on"); i < 0 || j < i {
		t.Errorf("html: got %s, want one-side variables inside a closed details element", html)
	}
}

func TestSameServer(t *testing.T) {
	tests := []struct {
		name string
		a, b map[string]string
		same bool
		how  string
	}{
		{"mysql by server_uuid", map[string]string{"server_uuid": "u1", "hostname": "h", "port": "1"}, map[string]string{"server_uuid": "u1", "hostname": "h2", "port": "2"}, true, "server_uuid u1"},
		{"mysql, two servers", map[string]string{"server_uuid": "u1"}, map[string]string{"server_uuid": "u2"}, false, "server_uuid u1"},
		{"mariadb by hostname and port", map[string]string{"hostname": "h", "port": "3306"}, map[string]string{"hostname": "h", "port": "3306"}, true, "h:3306"},
		{"mariadb, another port", map[string]string{"hostname": "h", "port": "3306"}, map[string]string{"hostname": "h", "port": "3307"}, false, "h:3306"},
		{"nothing known", map[string]string{}, map[string]string{}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			same, how := SameServer(tc.a, tc.b)
			if same != tc.same || how != tc.how {
				t.Errorf("got %v %q, want %v %q", same, how, tc.same, tc.how)
			}
		})
	}
}

// On TiDB, variables it keeps for compatibility change nothing, and
// max_connections = 0 means no limit: neither reads as a slower server.
func TestCompareTiDB(t *testing.T) {
	maria := map[string]string{"version": "10.11.19-MariaDB", "innodb_buffer_pool_size": "1073741824", "max_connections": "151", "sql_mode": "STRICT_TRANS_TABLES"}
	tidb := map[string]string{"version": "8.0.11-TiDB-v8.4.0", "innodb_buffer_pool_size": "134217728", "max_connections": "0", "sql_mode": "ONLY_FULL_GROUP_BY"}
	got := map[string]Difference{}
	for _, d := range Diff(maria, tidb) {
		got[d.Name] = d
	}
	if d := got["innodb_buffer_pool_size"]; d.Relevant || len(d.Notes) != 2 || !strings.Contains(d.Notes[1], "TiDB keeps this variable for compatibility and ignores it") || strings.Contains(d.Notes[1], "buffer pool below") {
		t.Errorf("innodb_buffer_pool_size: got %+v, want not relevant, noted as ignored by TiDB alone", d)
	}
	if d := got["max_connections"]; !d.Relevant || len(d.Notes) != 2 || d.Notes[1] != "0 means no limit on TiDB" {
		t.Errorf("max_connections: got %+v, want relevant, noted as no limit", d)
	}
	if d := got["sql_mode"]; !d.Relevant {
		t.Errorf("sql_mode: got %+v, want relevant: TiDB honours it", d)
	}
	if d := Diff(maria, map[string]string{"version": "10.11.19-MariaDB", "innodb_buffer_pool_size": "134217728"}); len(d) == 0 || !d[0].Relevant {
		t.Errorf("MariaDB against MariaDB: got %+v, want the buffer pool relevant", d)
	}
}

// Between two TiDB servers, TiDB's own variables are explained.
func TestCompareTiDBOwn(t *testing.T) {
	a := map[string]string{"version": "8.0.11-TiDB-v8.4.0", "tidb_txn_mode": "pessimistic"}
	b := map[string]string{"version": "8.0.11-TiDB-v8.4.0", "tidb_txn_mode": "optimistic"}
	d := Diff(a, b)
	if len(d) != 1 || !d[0].Relevant || d[0].Group != "semantics" || !strings.Contains(d[0].Explain, "write conflict") {
		t.Errorf("got %+v, want tidb_txn_mode explained as semantics", d)
	}
}
