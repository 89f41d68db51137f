package flavour

import (
	"strings"
	"testing"
)

func TestFromVersion(t *testing.T) {
	for _, tt := range []struct {
		version, comment string
		want             Name
	}{
		{"10.11.19-MariaDB-0+deb12u1", "Debian 12", MariaDB},
		{"8.0.11-TiDB-v8.4.0-alpha-390de884f4", "TiDB Server (Apache License 2.0) Community Edition, MySQL 8.0 compatible", TiDB},
		{"8.4.6-Vitess", "Vitess", Vitess},
		{"8.0.31-go-mysql-server", "", GMS},
		{"8.0.36-28", "Percona Server (GPL), Release 28", Percona},
		{"8.0.31", "Dolt", MySQL}, // Dolt is told apart by a probe
		{"8.4.3", "MySQL Community Server - GPL", MySQL},
	} {
		if got := FromVersion(tt.version, tt.comment); got != tt.want {
			t.Errorf("FromVersion(%q, %q): got %s, want %s", tt.version, tt.comment, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	if got, err := Parse("TiDB"); err != nil || got != TiDB {
		t.Errorf("Parse(TiDB): got %q, %v; want tidb", got, err)
	}
	_, err := Parse("oracle")
	if err == nil || !strings.Contains(err.Error(), "mariadb, mysql, percona, tidb, vitess, galera, dolt, go-mysql-server") {
		t.Errorf("Parse(oracle): got %v, want an error listing every flavour", err)
	}
}

func TestNoLimit(t *testing.T) {
	for _, tt := range []struct {
		f     Name
		v     string
		value float64
		want  bool
	}{
		{TiDB, "max_connections", 0, true},
		{TiDB, "max_connections", 100, false},
		{TiDB, "max_prepared_stmt_count", -1, true},
		{TiDB, "max_prepared_stmt_count", 0, false},
		{MariaDB, "max_connections", 0, false},
		{MySQL, "max_prepared_stmt_count", -1, false},
	} {
		if got := tt.f.NoLimit(tt.v, tt.value); got != tt.want {
			t.Errorf("%s.NoLimit(%s, %v): got %v, want %v", tt.f, tt.v, tt.value, got, tt.want)
		}
	}
}

func TestDialectAndVerbs(t *testing.T) {
	if !Galera.IsMariaDB() || TiDB.IsMariaDB() || !Percona.IsMySQL() || Vitess.IsMySQL() || Dolt.IsMySQL() {
		t.Error("dialects: want Galera to speak MariaDB's, Percona to be MySQL, and Vitess, Dolt and TiDB neither")
	}
	if got := TiDB.AnalyzeVerb(true); got != "ANALYZE TABLE " {
		t.Errorf("TiDB.AnalyzeVerb(local): got %q, want plain ANALYZE TABLE (1235 otherwise)", got)
	}
	if got := Dolt.AnalyzeVerb(true); got != "ANALYZE TABLE " {
		t.Errorf("Dolt.AnalyzeVerb(local): got %q, want plain ANALYZE TABLE (a syntax error otherwise)", got)
	}
	if got := MariaDB.AnalyzeVerb(true); got != "ANALYZE NO_WRITE_TO_BINLOG TABLE " {
		t.Errorf("MariaDB.AnalyzeVerb(local): got %q", got)
	}
	if TiDB.ReadOnlyTransactions() || !MariaDB.ReadOnlyTransactions() {
		t.Error("read-only transactions: want TiDB without, MariaDB with")
	}
}

// tidbCollations is what TiDB v8.4 with new collations lists.
var tidbCollations = Collations{
	"ascii_bin": "ascii", "binary": "binary", "gbk_bin": "gbk", "gbk_chinese_ci": "gbk",
	"latin1_bin": "latin1", "utf8_bin": "utf8", "utf8_general_ci": "utf8", "utf8_unicode_ci": "utf8",
	"utf8mb4_0900_ai_ci": "utf8mb4", "utf8mb4_0900_bin": "utf8mb4", "utf8mb4_bin": "utf8mb4",
	"utf8mb4_general_ci": "utf8mb4", "utf8mb4_unicode_ci": "utf8mb4",
}

func TestNearest(t *testing.T) {
	for _, tt := range []struct {
		want, got string
		changed   bool
	}{
		{"utf8mb4_general_ci", "utf8mb4_general_ci", false},
		{"latin1_swedish_ci", "latin1_bin", true},
		{"utf8mb3_general_ci", "utf8_general_ci", true},
		{"utf8mb3_unicode_ci", "utf8_unicode_ci", true},
		{"utf8mb4_uca1400_ai_ci", "utf8mb4_general_ci", true},
		{"utf8mb4_nopad_bin", "utf8mb4_bin", true},
		{"cp1251_general_ci", "utf8mb4_general_ci", true},
		{"UTF8MB4_BIN", "UTF8MB4_BIN", false},
	} {
		got, changed := tidbCollations.Nearest(tt.want)
		if got != tt.got || changed != tt.changed {
			t.Errorf("Nearest(%s): got %s, %v; want %s, %v", tt.want, got, changed, tt.got, tt.changed)
		}
	}
	if got, changed := (Collations{}).Nearest("latin1_swedish_ci"); changed || got != "latin1_swedish_ci" {
		t.Errorf("an empty list: got %s, %v; want the collation kept", got, changed)
	}
}

func TestRewrite(t *testing.T) {
	in := "CREATE TABLE `a` (\n  `name` varchar(20) COLLATE latin1_swedish_ci DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci"
	seen := map[string]string{}
	got := tidbCollations.Rewrite(in, func(from, to string) { seen[from] = to })
	want := "CREATE TABLE `a` (\n  `name` varchar(20) COLLATE latin1_bin DEFAULT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=latin1 COLLATE=latin1_bin"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if seen["latin1_swedish_ci"] != "latin1_bin" || len(seen) != 1 {
		t.Errorf("changes: got %v, want latin1_swedish_ci -> latin1_bin", seen)
	}
	db := "CREATE DATABASE IF NOT EXISTS `shop` /*!40100 DEFAULT CHARACTER SET latin1 COLLATE latin1_swedish_ci */"
	if got := tidbCollations.Rewrite(db, nil); !strings.Contains(got, "COLLATE latin1_bin */") {
		t.Errorf("database: got %s, want latin1_bin", got)
	}
	if got := tidbCollations.Rewrite("SELECT 'collateral' FROM t", nil); got != "SELECT 'collateral' FROM t" {
		t.Errorf("a word that starts with collate: got %s, want it kept", got)
	}
}

func FuzzRewrite(f *testing.F) {
	f.Add("CREATE TABLE t (a text COLLATE latin1_swedish_ci) COLLATE=`cp1251_bin`")
	f.Add("COLLATE")
	f.Fuzz(func(t *testing.T, stmt string) {
		out := tidbCollations.Rewrite(stmt, nil)
		// Rewriting what it wrote changes nothing more.
		if again := tidbCollations.Rewrite(out, nil); again != out {
			t.Errorf("Rewrite is not idempotent: %q -> %q -> %q", stmt, out, again)
		}
	})
}

func TestCatalogSchema(t *testing.T) {
	asked := []string{"shop", "app_2"}
	for _, tt := range []struct {
		f          Name
		name, want string
	}{
		{Vitess, "vt_shop_0", "shop"},
		{Vitess, "vt_shop_-80", "shop"},
		{Vitess, "vt_app_2_80-", "app_2"},
		{Vitess, "vt_other_0", "vt_other_0"},
		{Vitess, "shop", "shop"},
		{MariaDB, "vt_shop_0", "vt_shop_0"},
	} {
		if got := tt.f.CatalogSchema(tt.name, asked); got != tt.want {
			t.Errorf("%s.CatalogSchema(%q): got %q, want %q", tt.f, tt.name, got, tt.want)
		}
	}
}
