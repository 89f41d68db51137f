package fingerprint

import (
	"strings"
	"testing"
)

func FuzzLex(f *testing.F) {
	for _, s := range []string{
		"SELECT * FROM t WHERE a = 1 AND b IN (1,2,3) AND c = 'x''y' -- c",
		"INSERT INTO t VALUES (1,'a'),(2,'b')",
		"/* x */ select `a``b`, @@v, @u, _utf8mb4'z', x'1F', 0b101, .5e-3 from t # z",
		"CREATE USER u IDENTIFIED BY 'pw'",
		"SELECT 'unterminated",
		"/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;",
		"/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1 */",
		"/*M!100100 SET @x = 5 */ /*!40000 ALTER TABLE t /* why */ DISABLE KEYS */",
		"SELECT /*+ MAX_EXECUTION_TIME(1000) */ a FROM t /*!",
		"/* only a comment */",
	} {
		f.Add(s)
	}
	an := NewAnalyzer()
	f.Fuzz(func(t *testing.T, sql string) {
		lx := Lex(sql)
		for _, l := range lx.Literals {
			if l.Pos < 0 || l.Pos > l.End || l.End > len(sql) {
				t.Fatalf("literal %q at %d..%d outside the statement of %d bytes", l.Text, l.Pos, l.End, len(sql))
			}
		}
		red, changed := Redact(sql)
		if !changed && red != sql {
			t.Fatalf("Redact changed the statement without saying so: %q -> %q", sql, red)
		}
		if changed && !strings.Contains(red, Redacted) {
			t.Fatalf("Redact said it replaced a password but %q holds no %s", red, Redacted)
		}
		info, _ := an.Analyze(sql)
		if quick := an.Info(sql); quick.Digest != info.Digest {
			t.Fatalf("Info and Analyze disagree on %q: %s, %s", sql, quick.Fingerprint, info.Fingerprint)
		}
		if len(info.Digest) != 16 {
			t.Fatalf("digest %q of %q: want 16 hex digits", info.Digest, sql)
		}
		if info.ReadOnly && !info.Parsed {
			t.Fatalf("a statement the parser could not read is read-only: %q", sql)
		}
	})
}
