package fingerprint

import (
	"strings"
	"testing"
)

func TestLex(t *testing.T) {
	tests := []struct {
		name, sql, fp string
		lits          []string
	}{
		{"literals", "SELECT * FROM t WHERE a = 1 AND b = 'x''y' AND c = -2.5e3", "select * from t where a = ? and b = ? and c = ?", []string{"1", "x'y", "-2.5e3"}},
		{"in list", "select a from t where id IN (1, 2,3) and x in (select y from u)", "select a from t where id in (?+) and x in (select y from u)", []string{"1", "2", "3"}},
		{"values rows", "INSERT INTO t (a,b) VALUES (1,'a'),(2,'b')", "insert into t (a, b) values (?+)", []string{"1", "a", "2", "b"}},
		{"comments and spaces", "/* app */ SELECT  `Col`\n FROM db.T -- tail\n WHERE x=0x1F # more", "select col from db.t where x = ?", []string{"0x1F"}},
		{"binary minus stays", "SELECT a-1, b - 2 FROM t", "select a - ?, b - ? from t", []string{"1", "2"}},
		{"placeholders", "SELECT a FROM t WHERE id = ? AND n = ?", "select a from t where id = ? and n = ?", []string{"?", "?"}},
		{"escapes", `SELECT 'a\'b\\', "q"`, "select ?, ?", []string{`a'b\`, "q"}},
		{"unterminated", "SELECT 'abc", "select ?", []string{"abc"}},
		{"trailing semicolon", "SELECT 1;", "select ?", []string{"1"}},
		{"executable comment", "/*!40101 SET character_set_client = utf8mb4 */;", "set character_set_client = utf8mb4", nil},
		{"versioned parts", "/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`%`*/ /*!50003 TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1 */",
			"create definer = root @`%` trigger tr before insert on t for each row set new.a = ?", []string{"1"}},
		{"mariadb executable comment", "/*M!100100 SET @x = 5 */", "set @x = ?", []string{"5"}},
		{"plain comment inside", "/*!40000 ALTER TABLE t /* why */ DISABLE KEYS */", "alter table t disable keys", nil},
		{"optimizer hint kept", "SELECT /*+ MAX_EXECUTION_TIME(1000) */ a FROM t", "select /*+ max_execution_time(1000) */ a from t", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lx := Lex(tc.sql)
			if lx.Fingerprint != tc.fp {
				t.Errorf("fingerprint: got %q, want %q", lx.Fingerprint, tc.fp)
			}
			var vals []string
			for _, l := range lx.Literals {
				vals = append(vals, l.Value())
				if l.Pos < 0 || l.End > len(tc.sql) || l.Pos >= l.End {
					t.Errorf("literal %q: bad position %d..%d", l.Text, l.Pos, l.End)
				}
			}
			if strings.Join(vals, "|") != strings.Join(tc.lits, "|") {
				t.Errorf("literals: got %q, want %q", vals, tc.lits)
			}
		})
	}
}

func TestAnalyze(t *testing.T) {
	tests := []struct {
		name     string
		sql      string
		readOnly bool
		write    string
		ordered  bool
		limit    bool
		nondet   string
		parsed   bool
	}{
		{"select", "SELECT a FROM t WHERE id = 1", true, "", false, false, "", true},
		{"ordered limit", "SELECT a FROM t ORDER BY a LIMIT 5", true, "", true, true, "", true},
		{"limit without order", "SELECT a FROM t LIMIT 5", true, "", false, true, "LIMIT without ORDER BY", true},
		{"for update", "SELECT a FROM t WHERE id = 1 FOR UPDATE", false, "SELECT FOR UPDATE", false, false, "", true},
		{"lock in share mode", "SELECT a FROM t LOCK IN SHARE MODE", false, "SELECT FOR SHARE", false, false, "", true},
		{"into outfile", "SELECT a FROM t INTO OUTFILE '/tmp/x'", false, "SELECT ... INTO", false, false, "", true},
		{"insert", "INSERT INTO t VALUES (1)", false, "INSERT", false, false, "", true},
		{"update", "UPDATE t SET a = 1", false, "UPDATE", false, false, "", true},
		{"now", "SELECT NOW(), a FROM t", true, "", false, false, "NOW()", true},
		{"rand", "SELECT a FROM t ORDER BY RAND()", true, "", true, false, "RAND()", true},
		{"get_lock", "SELECT GET_LOCK('x', 1)", false, "GET_LOCK()", false, false, "", true},
		{"show tables", "SHOW TABLES", true, "", false, false, "", true},
		{"show status", "SHOW GLOBAL STATUS", true, "", false, false, "SHOW of server state", true},
		{"describe", "DESCRIBE t", true, "", false, false, "", true},
		{"explain", "EXPLAIN SELECT * FROM t", true, "", false, false, "EXPLAIN: each server plans its own way", true},
		{"explain analyze delete", "EXPLAIN ANALYZE DELETE FROM t", false, "EXPLAIN ANALYZE runs DELETE", false, false, "EXPLAIN: each server plans its own way", true},
		{"set session", "SET @a = 1, sql_mode = 'ANSI'", true, "", false, false, "", true},
		{"set global", "SET GLOBAL max_connections = 10", false, "SET GLOBAL", false, false, "", true},
		{"use", "USE shop", true, "", false, false, "", true},
		{"union ordered", "SELECT a FROM t UNION SELECT b FROM u ORDER BY 1", true, "", true, false, "", true},
		{"version", "SELECT @@version", true, "", false, false, "@@version differs between servers", true},
		{"unparseable", "SELECT a FROM t WHERE x = 1 RETURNING nothing ORDER BY a", false, "not parsed (may write)", true, false, "", false},
		{"two statements", "SELECT 1; DELETE FROM t", false, "several statements in one", false, false, "", false},
	}
	an := NewAnalyzer()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, _ := an.Analyze(tc.sql)
			if info.ReadOnly != tc.readOnly || info.Write != tc.write || info.Ordered != tc.ordered || info.Limit != tc.limit ||
				info.NonDeterministic != tc.nondet || info.Parsed != tc.parsed {
				t.Errorf("got read-only %v write %q ordered %v limit %v nondet %q parsed %v; want %v %q %v %v %q %v",
					info.ReadOnly, info.Write, info.Ordered, info.Limit, info.NonDeterministic, info.Parsed,
					tc.readOnly, tc.write, tc.ordered, tc.limit, tc.nondet, tc.parsed)
			}
		})
	}
	// The cache: a second statement of the same fingerprint is not parsed.
	before := an.Parsed + an.Fallback
	an.Analyze("SELECT a FROM t WHERE id = 2")
	if got := an.Parsed + an.Fallback; got != before {
		t.Errorf("statements parsed: got %d, want %d (same fingerprint, cached)", got, before)
	}
}

// TestExecutableComments checks that a dump's statements, each all
// executable comment, keep fingerprints of their own through the cache: each
// gets what a fresh analyzer gives it, and no two share one.
func TestExecutableComments(t *testing.T) {
	stmts := []string{
		"/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */",
		"/*!40101 SET @OLD_CHARACTER_SET_RESULTS=@@CHARACTER_SET_RESULTS */",
		"/*!40101 SET NAMES utf8mb4 */",
		"/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */",
		"/*!40103 SET TIME_ZONE='+00:00' */",
		"/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */",
		"/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */",
		"/*!40000 ALTER TABLE `t` DISABLE KEYS */",
		"/*!40000 ALTER TABLE `t` ENABLE KEYS */",
		"/*!40000 ALTER TABLE `u` DISABLE KEYS */",
		"/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER tr_a BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1 */",
		"/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER tr_b AFTER UPDATE ON t FOR EACH ROW SET @n = @n + 1 */",
		"/*!50001 DROP VIEW IF EXISTS `v`*/",
		"/*!50001 CREATE ALGORITHM=UNDEFINED */ /*!50001 VIEW `v` AS select 1 AS `a` */",
		"/* a plain comment */",
		"/* another plain comment */",
	}
	an := NewAnalyzer()
	seen := map[string]string{}
	for _, sql := range stmts {
		got, _ := an.Analyze(sql)
		fresh, _ := NewAnalyzer().Analyze(sql)
		if got.Fingerprint != fresh.Fingerprint {
			t.Errorf("%s: got %q through the cache, want %q", sql, got.Fingerprint, fresh.Fingerprint)
		}
		if got.Fingerprint == "" {
			t.Errorf("%s: got an empty fingerprint", sql)
		}
		if other, ok := seen[got.Digest]; ok {
			t.Errorf("%s: got digest %s, shared with %s", sql, got.Digest, other)
		}
		seen[got.Digest] = sql
	}
	// The same statement again (other literals) is one fingerprint.
	a, _ := an.Analyze("/*!40103 SET TIME_ZONE='+00:00' */")
	b, _ := an.Analyze("/*!40103 SET TIME_ZONE='+02:00' */;")
	if a.Digest != b.Digest {
		t.Errorf("same statement, other literal: got digests %s and %s, want one", a.Digest, b.Digest)
	}
}

func TestOrderKeys(t *testing.T) {
	an := NewAnalyzer()
	info, _ := an.Analyze("SELECT id, name FROM t ORDER BY name, 1, id + 1")
	if got := strings.Join(info.OrderKeys, ","); got != "name,#1," {
		t.Errorf("order keys: got %q, want %q", got, "name,#1,")
	}
}

func TestRedact(t *testing.T) {
	tests := []struct {
		name, sql, want string
	}{
		{"create user", "CREATE USER 'u'@'%' IDENTIFIED BY 'hunter2'", "CREATE USER 'u'@'%' IDENTIFIED BY '<redacted>'"},
		{"alter user plugin", "ALTER USER u IDENTIFIED WITH mysql_native_password BY 'pw'", "ALTER USER u IDENTIFIED WITH mysql_native_password BY '<redacted>'"},
		{"mariadb via", "CREATE USER u IDENTIFIED VIA ed25519 USING PASSWORD('pw')", "CREATE USER u IDENTIFIED VIA ed25519 USING PASSWORD('<redacted>')"},
		{"grant", "GRANT ALL ON *.* TO u IDENTIFIED BY \"pw\"", "GRANT ALL ON *.* TO u IDENTIFIED BY '<redacted>'"},
		{"set password", "SET PASSWORD FOR u = 'pw'", "SET PASSWORD FOR u = '<redacted>'"},
		{"change master", "CHANGE MASTER TO MASTER_HOST='h', MASTER_PASSWORD='pw'", "CHANGE MASTER TO MASTER_HOST='h', MASTER_PASSWORD='<redacted>'"},
		{"untouched", "SELECT password FROM users WHERE name = 'x'", "SELECT password FROM users WHERE name = 'x'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := Redact(tc.sql)
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
