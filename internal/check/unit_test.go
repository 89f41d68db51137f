package check

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/golden"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/vars"
)

// TestFeatureTable applies the feature table to servers as they report
// themselves: VERSION() and the flavour target.Detect derives from it.
func TestFeatureTable(t *testing.T) {
	tests := []struct {
		name    string
		server  target.Server
		lacks   []string
		notLack []string
	}{
		{"TiDB 6.5: no foreign keys enforced yet", target.Server{Version: "5.7.25-TiDB-v6.5.3", Flavour: "tidb"},
			[]string{"stored_routine", "trigger", "event", "fulltext_index", "spatial", "foreign_key", "subpartition"}, nil},
		{"TiDB 7.5 enforces foreign keys", target.Server{Version: "8.0.11-TiDB-v7.5.0", Flavour: "tidb"},
			[]string{"stored_routine", "trigger", "event", "fulltext_index", "auto_increment"}, []string{"foreign_key"}},
		{"vtgate creates no triggers, functions or events", target.Server{Version: "8.4.6-Vitess", Flavour: "vitess"},
			[]string{"stored_routine", "trigger", "event"}, []string{"removed_function", "json_type", "foreign_key"}},
		{"MySQL 5.7 keeps the old functions", target.Server{Version: "5.7.44-log", Flavour: "mysql"},
			[]string{"descending_index", "sequence"}, []string{"removed_function", "nonnative_partitioning", "trigger"}},
		{"MySQL 8.0 removed functions", target.Server{Version: "8.0.36", Flavour: "mysql"},
			[]string{"removed_function", "nonnative_partitioning", "sequence", "mariadb_type"}, []string{"descending_index", "trigger", "event"}},
		{"Percona Server reads as MySQL", target.Server{Version: "8.0.35-27", Flavour: "percona"},
			[]string{"removed_function"}, []string{"descending_index"}},
		{"MariaDB 10.6 ignores DESC", target.Server{Version: "10.6.16-MariaDB", Flavour: "mariadb"},
			[]string{"functional_index", "json_type", "descending_index"}, []string{"trigger", "sequence", "removed_function"}},
		{"MariaDB 11.4 has descending indexes", target.Server{Version: "11.4.2-MariaDB-log", Flavour: "mariadb"},
			[]string{"functional_index"}, []string{"descending_index", "event"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]bool{}
			for _, g := range lacks(parseServer(tc.server)) {
				got[g.feature] = true
				if _, ok := severityRank[g.severity]; g.why == "" || g.fix == "" || !ok {
					t.Errorf("%s/%s: got why %q, fix %q, severity %q; want all set", g.flavour, g.feature, g.why, g.fix, g.severity)
				}
			}
			for _, f := range tc.lacks {
				if !got[f] {
					t.Errorf("lacks %s: got false, want true", f)
				}
			}
			for _, f := range tc.notLack {
				if got[f] {
					t.Errorf("lacks %s: got true, want false", f)
				}
			}
		})
	}
	// Every feature of the table has a detector's items.
	for _, g := range gaps {
		if _, ok := featureItems[g.feature]; !ok {
			t.Errorf("feature %s: no entry in featureItems", g.feature)
		}
	}
}

func TestParseServer(t *testing.T) {
	tests := []struct {
		server  target.Server
		flavour string
		nums    [3]int
		name    string
	}{
		{target.Server{Version: "10.11.19-MariaDB-0+deb12u1", Flavour: "mariadb"}, "mariadb", [3]int{10, 11, 19}, "MariaDB 10.11.19"},
		{target.Server{Version: "8.0.11-TiDB-v7.5.0", Flavour: "tidb"}, "tidb", [3]int{7, 5, 0}, "TiDB 7.5.0"},
		{target.Server{Version: "8.4.3", Flavour: "mysql"}, "mysql", [3]int{8, 4, 3}, "MySQL 8.4.3"},
		{target.Server{Version: "8.0.35-27", Flavour: "percona"}, "mysql", [3]int{8, 0, 35}, "MySQL 8.0.35"},
		{target.Server{Version: "5.7", Flavour: "mysql"}, "mysql", [3]int{5, 7, 0}, "MySQL 5.7.0"},
	}
	for _, tc := range tests {
		v := parseServer(tc.server)
		if v.flavour != tc.flavour || v.nums != tc.nums || v.name() != tc.name {
			t.Errorf("parseServer(%q): got %s %v %q, want %s %v %q", tc.server.Version, v.flavour, v.nums, v.name(), tc.flavour, tc.nums, tc.name)
		}
	}
	v := parseServer(target.Server{Version: "8.0.31", Flavour: "mysql"})
	for _, c := range []struct {
		min, max   string
		atLeast, b bool
	}{{"8.0.31", "8.0.32", true, true}, {"8.0.32", "8.0.31", false, false}, {"", "", true, true}, {"5.7", "9", true, true}} {
		if v.atLeast(c.min) != c.atLeast || v.below(c.max) != c.b {
			t.Errorf("8.0.31 atLeast(%q)/below(%q): got %v/%v, want %v/%v", c.min, c.max, v.atLeast(c.min), v.below(c.max), c.atLeast, c.b)
		}
	}
}

func TestReservedWords(t *testing.T) {
	tests := []struct {
		server   target.Server
		reserved []string
		free     []string
	}{
		{target.Server{Version: "5.7.44", Flavour: "mysql"}, []string{"SELECT", "GENERATED"}, []string{"RANK", "WINDOW", "LATERAL"}},
		{target.Server{Version: "8.0.13", Flavour: "mysql"}, []string{"RANK", "WINDOW", "GROUPS"}, []string{"LATERAL", "INTERSECT"}},
		{target.Server{Version: "8.0.36", Flavour: "mysql"}, []string{"LATERAL", "INTERSECT"}, []string{"OPTIMIZER_COSTS"}},
		{target.Server{Version: "10.11.6-MariaDB", Flavour: "mariadb"}, []string{"RETURNING", "OFFSET", "ROWS"}, []string{"WINDOW", "DATABASE", "RANK"}},
		{target.Server{Version: "8.0.11-TiDB-v7.5.0", Flavour: "tidb"}, []string{"TIDB_CURRENT_TSO", "RANK", "ARRAY"}, []string{"RETURNING"}},
	}
	for _, tc := range tests {
		s := &snapshot{server: parseServer(tc.server)}
		words := s.reservedWords()
		for _, w := range tc.reserved {
			if !words[w] {
				t.Errorf("%s: %s reserved: got false, want true", tc.server.Version, w)
			}
		}
		for _, w := range tc.free {
			if words[w] {
				t.Errorf("%s: %s reserved: got true, want false", tc.server.Version, w)
			}
		}
	}
}

func TestCovers(t *testing.T) {
	have := map[priv]bool{
		{name: "SELECT", db: "shop"}:                               true,
		{name: "INSERT", db: "app\\_%"}:                            true,
		{name: "UPDATE", db: "shop", table: "orders"}:              true,
		{name: "SELECT", db: "hr", table: "staff", column: "name"}: true,
		{name: "EXECUTE", db: "shop", table: "PROCEDURE p"}:        true,
		{name: "REPLICATION CLIENT"}:                               true,
	}
	tests := []struct {
		name string
		p    priv
		want bool
	}{
		{"database grant covers a table", priv{name: "SELECT", db: "shop", table: "orders"}, true},
		{"database grant covers itself", priv{name: "SELECT", db: "shop"}, true},
		{"not another database", priv{name: "SELECT", db: "shop2"}, false},
		{"not a global grant", priv{name: "SELECT"}, false},
		{"wildcard database", priv{name: "INSERT", db: "app_eu", table: "t"}, true},
		{"escaped underscore is literal", priv{name: "INSERT", db: "appXeu"}, false},
		{"table grant covers a column", priv{name: "UPDATE", db: "shop", table: "orders", column: "qty"}, true},
		{"table grant not the database", priv{name: "UPDATE", db: "shop"}, false},
		{"column grant not the table", priv{name: "SELECT", db: "hr", table: "staff"}, false},
		{"column grant covers itself", priv{name: "SELECT", db: "hr", table: "staff", column: "name"}, true},
		{"routine grant", priv{name: "EXECUTE", db: "shop", table: "PROCEDURE p"}, true},
		{"global covers everything", priv{name: "REPLICATION CLIENT", db: "x"}, true},
	}
	for _, tc := range tests {
		if got := covers(have, tc.p); got != tc.want {
			t.Errorf("%s: covers(%s): got %v, want %v", tc.name, tc.p, got, tc.want)
		}
	}
	if canonPriv("Binlog monitor") != "REPLICATION CLIENT" || canonPriv("CONNECTION_ADMIN") != "CONNECTION ADMIN" {
		t.Errorf("canonPriv: got %q and %q, want REPLICATION CLIENT and CONNECTION ADMIN", canonPriv("Binlog monitor"), canonPriv("CONNECTION_ADMIN"))
	}
}

func TestGrantStatements(t *testing.T) {
	got := grantStatements([]priv{
		{name: "UPDATE", db: "shop"}, {name: "INSERT", db: "shop"}, {name: "GRANT OPTION", db: "shop"},
		{name: "SELECT", db: "hr", table: "staff", column: "name"}, {name: "RELOAD"},
		{name: "EXECUTE", db: "shop", table: "PROCEDURE add"},
	}, "'app'@'%'")
	want := "on the target: GRANT EXECUTE ON PROCEDURE `shop`.`add` TO 'app'@'%'; GRANT INSERT, UPDATE ON `shop`.* TO 'app'@'%' WITH GRANT OPTION; " +
		"GRANT RELOAD ON *.* TO 'app'@'%'; GRANT SELECT (`name`) ON `hr`.`staff` TO 'app'@'%';"
	if got != want {
		t.Errorf("grantStatements:\ngot  %s\nwant %s", got, want)
	}
}

func TestSQLModeMessage(t *testing.T) {
	got := sqlModeMessage("STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION", "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION,WEIRD_MODE")
	for _, want := range []string{"ONLY_FULL_GROUP_BY only on the target (on: queries that select columns not in GROUP BY", "WEIRD_MODE only on the target"} {
		if !strings.Contains(got, want) {
			t.Errorf("sqlModeMessage: got %q, want it to contain %q", got, want)
		}
	}
	if strings.Contains(got, "STRICT_TRANS_TABLES") {
		t.Errorf("sqlModeMessage: got %q, want modes both sides have left out", got)
	}
	tests := []struct {
		mode, want string
	}{
		{"STRICT_TRANS_TABLES,NO_ZERO_DATE", Error},
		{"NO_ZERO_IN_DATE", Warning},
		{"TRADITIONAL", Error},
		{"STRICT_ALL_TABLES", ""},
		{"", ""},
	}
	for _, tc := range tests {
		r := &runner{dst: &snapshot{vars: map[string]string{"sql_mode": tc.mode}}}
		if got := r.zeroDatesRejected(); got != tc.want {
			t.Errorf("zeroDatesRejected(%q): got %q, want %q", tc.mode, got, tc.want)
		}
	}
}

func TestRetention(t *testing.T) {
	tests := []struct {
		name string
		v    map[string]string
		want time.Duration
		ok   bool
	}{
		{"MySQL 8 seconds", map[string]string{"binlog_expire_logs_seconds": "3600", "expire_logs_days": "0"}, time.Hour, true},
		{"days", map[string]string{"expire_logs_days": "2"}, 48 * time.Hour, true},
		{"forever", map[string]string{"binlog_expire_logs_seconds": "0", "expire_logs_days": "0"}, 0, true},
		{"MariaDB fractional days", map[string]string{"expire_logs_days": "0.5"}, 12 * time.Hour, true},
		{"unknown", map[string]string{}, 0, false},
	}
	for _, tc := range tests {
		got, ok := retention(tc.v)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: got %v %v, want %v %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want NotChecked
	}{
		{"privilege", &mysql.MySQLError{Number: 1142, Message: "SELECT command denied"}, NotChecked{Privilege: "SELECT on mysql.user", Detail: "SELECT command denied"}},
		{"missing table", &mysql.MySQLError{Number: 1109, Message: "Unknown table 'EVENTS'"}, NotChecked{Missing: "information_schema.EVENTS", Detail: "Unknown table 'EVENTS'"}},
		{"timeout", fmt.Errorf("read: %w", context.DeadlineExceeded), NotChecked{Detail: "reading information_schema.EVENTS took longer than 30s (--query-timeout)"}},
		{"other server error", &mysql.MySQLError{Number: 1030, Message: "Got error 28"}, NotChecked{Detail: "reading information_schema.EVENTS failed: Got error 28"}},
	}
	for _, tc := range tests {
		got := classify(tc.err, "information_schema.EVENTS", "SELECT on mysql.user", 30*time.Second)
		if tc.name == "privilege" {
			got.Missing = ""
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// sampleReport is a report with one finding of each severity, for the
// writers.
func sampleReport() *Report {
	return &Report{
		Version:   DocumentVersion,
		Source:    Endpoint{URL: "mysql://app@10.0.0.1:3306/shop", Version: "10.11.6-MariaDB", Flavour: "mariadb"},
		Target:    Endpoint{URL: "mysql://app@10.0.0.2:4000/shop", Version: "8.0.11-TiDB-v7.5.0", Flavour: "tidb"},
		Started:   time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Seconds:   0.42,
		Databases: []string{"shop"},
		Errors:    1, Warnings: 1, Notices: 1,
		Findings: []Finding{
			{Check: "binlog_off", Severity: Error, Object: "log_bin", Message: "the source writes no binary log", Fix: "log_bin and server_id in my.cnf"},
			{Check: "engine", Severity: Warning, Object: "shop.legacy", Message: "MyISAM table", Fix: "ALTER TABLE `shop`.`legacy` ENGINE=InnoDB"},
			{Check: "missing_database", Severity: Notice, Object: "intl", Message: "the target has no database intl yet", Fix: "create it"},
		},
		NotChecked: []NotChecked{{Check: "missing_account", Side: "source", Privilege: "SELECT on mysql.user", Detail: "denied"}},
		Variables:  []vars.Difference{{Name: "sql_mode", Values: []string{"STRICT_TRANS_TABLES", "ONLY_FULL_GROUP_BY"}, Relevant: true}},
	}
}

func TestWriters(t *testing.T) {
	rep := sampleReport()
	var text bytes.Buffer
	if err := WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.txt", text.Bytes())

	var js bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.json", js.Bytes())
	back, err := ReadJSON(js.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, rep) {
		t.Errorf("ReadJSON(WriteJSON(r)): got %+v, want %+v", back, rep)
	}
	if _, err := ReadJSON([]byte(`{"version": 99}`)); err == nil {
		t.Errorf("ReadJSON of version 99: got nil error, want one")
	}

	var page bytes.Buffer
	if err := WriteHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"binlog_off", "ENGINE=InnoDB", "needs SELECT on mysql.user", "ONLY_FULL_GROUP_BY", "1 error, 1 warning, 1 notice"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML page: want it to contain %q", want)
		}
	}
}

func TestCatalogue(t *testing.T) {
	seen := map[string]bool{}
	var ids []string
	for _, c := range Catalogue {
		if seen[c.ID] {
			t.Errorf("check id %s listed twice", c.ID)
		}
		seen[c.ID] = true
		ids = append(ids, c.ID)
	}
	sort.Strings(ids)
	if len(ids) < 30 {
		t.Errorf("catalogue: got %d checks, want at least 30", len(ids))
	}
}

// FuzzParseServer feeds version strings as servers report them: parsing
// never fails, the name it gives reads back the same numbers, and a
// version is either at least or below another.
func FuzzParseServer(f *testing.F) {
	for _, s := range []string{"10.11.19-MariaDB-0+deb12u1", "8.0.11-TiDB-v7.5.0", "8.4.3", "5.7.44-log", "", "x.y", "8.0.11-TiDB-v", "99999999999999999999.1"} {
		f.Add(s, "mysql")
		f.Add(s, "tidb")
	}
	f.Fuzz(func(t *testing.T, version, fl string) {
		v := parseServer(target.Server{Version: version, Flavour: flavour.Name(fl)})
		again := parseNums(v.name()[strings.LastIndex(v.name(), " ")+1:])
		if again != v.nums {
			t.Errorf("parseServer(%q): name %q reads back %v, want %v", version, v.name(), again, v.nums)
		}
		if v.atLeast("8.0.0") == v.below("8.0.0") {
			t.Errorf("parseServer(%q): atLeast and below 8.0.0 agree, want exactly one", version)
		}
	})
}

// FuzzDBMatches checks the LIKE matcher of database grants against the
// rule it implements: a pattern without wildcards matches itself only.
func FuzzDBMatches(f *testing.F) {
	for _, c := range [][2]string{{"app\\_%", "app_eu"}, {"shop", "shop"}, {"s_op", "shop"}, {"%", ""}, {"%%_", "a"}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, pattern, db string) {
		got := dbMatches(pattern, db)
		if !strings.ContainsAny(pattern, "_%") && got != (pattern == db) {
			t.Errorf("dbMatches(%q, %q): got %v, want %v", pattern, db, got, pattern == db)
		}
		if pattern == db && !got {
			t.Errorf("dbMatches(%q, itself): got false, want true", pattern)
		}
	})
}

// TestBinlogOffIsOneFinding: with log_bin off, binlog_format and the rest
// are named in the one finding's fix, not counted as errors of their own;
// with log_bin on, each wrong setting is its own finding.
func TestBinlogOffIsOneFinding(t *testing.T) {
	maria := parseServer(target.Server{Version: "10.11.6-MariaDB", Flavour: "mariadb"})
	tests := []struct {
		name     string
		vars     map[string]string
		checks   []string
		fixHolds []string
	}{
		{"log_bin off, statement format", map[string]string{"log_bin": "OFF", "binlog_format": "STATEMENT", "binlog_row_image": "FULL", "server_id": "1"},
			[]string{"binlog_off"}, []string{"log_bin", "binlog_format=ROW (now STATEMENT)"}},
		{"log_bin off, all wrong", map[string]string{"log_bin": "OFF", "binlog_format": "MIXED", "binlog_row_image": "MINIMAL", "server_id": "0"},
			[]string{"binlog_off"}, []string{"server_id", "binlog_format=ROW (now MIXED)", "binlog_row_image=FULL (now MINIMAL)"}},
		{"log_bin on, statement format", map[string]string{"log_bin": "ON", "binlog_format": "STATEMENT", "binlog_row_image": "FULL", "server_id": "1"},
			[]string{"binlog_format"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &runner{rep: &Report{}, src: &snapshot{role: "source", server: maria, vars: tc.vars}, dst: &snapshot{role: "target", server: maria}}
			r.checkReplication()
			var got []string
			for _, f := range r.rep.Findings {
				if f.Severity == Error {
					got = append(got, f.Check)
				}
			}
			if !reflect.DeepEqual(got, tc.checks) {
				t.Fatalf("errors: got %v, want %v", got, tc.checks)
			}
			for _, w := range tc.fixHolds {
				if fix := r.rep.Findings[0].Fix; !strings.Contains(fix, w) {
					t.Errorf("fix: got %q, want it to name %q", fix, w)
				}
			}
		})
	}
}
