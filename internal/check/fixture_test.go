package check

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/verify"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// targetMode is the target's sql_mode in the tests: MySQL 8's zero-date
// modes on top of strict mode, unlike MariaDB's default.
const targetMode = "STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

// servers are the test's sandboxes:
//   - dirty: the source that trips every check (binary log off,
//     lower_case_table_names=1, a collation only it has);
//   - target: with targetMode, and statistics that do not refresh by
//     themselves;
//   - clean: a source with nothing against the move into target;
//   - tidb: a MariaDB that reports itself as TiDB 7.5.0, so the feature
//     table is applied to the flavour the server reports.
type servers struct {
	dirty, target, clean, tidb string
}

// startServers starts the sandboxes and loads the fixtures; they stop when
// t ends.
func startServers(t *testing.T) servers {
	t.Helper()
	dir := customCollation(t)
	insts := sandboxtest.StartAll(t,
		[]string{"lower_case_table_names=1", "character_sets_dir=" + dir},
		[]string{"sql_mode=" + targetMode, "innodb_stats_auto_recalc=OFF"},
		[]string{"log_bin=ON", "binlog_format=ROW", "sql_mode=" + targetMode},
		[]string{"version=8.0.11-TiDB-v7.5.0"},
	)
	s := servers{dirty: insts[0].URL(), target: insts[1].URL(), clean: insts[2].URL(), tidb: insts[3].URL()}
	tdb := openURL(t, s.target)
	exec(t, tdb, targetFixture...)
	exec(t, openURL(t, s.dirty), dirtyFixture...)
	exec(t, openURL(t, s.clean), cleanFixture...)
	return s
}

// customCollation copies the server's character set files into a new
// directory with one more collation, utf8mb3_shakedown_ci, that only a
// server started with that directory has.
func customCollation(t *testing.T) string {
	t.Helper()
	sandboxtest.RequireServer(t)
	var from string
	for _, d := range []string{"/usr/share/mariadb/charsets", "/usr/share/mysql/charsets"} {
		if _, err := os.Stat(filepath.Join(d, "Index.xml")); err == nil {
			from = d
			break
		}
	}
	if from == "" {
		t.Fatal("no character set files in /usr/share/mariadb/charsets or /usr/share/mysql/charsets: run make deps (mariadb-server)")
	}
	dir := filepath.Join(t.TempDir(), "charsets")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatalf("read the server's character set files: %v", err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "Index.xml" {
			s := string(b)
			end := strings.Index(s, "</charset>\n\n<charset name=\"ucs2\">")
			if !strings.Contains(s, `<charset name="utf8mb3">`) || end < 0 {
				t.Fatalf("%s/Index.xml has no utf8mb3 section to add a collation to", from)
			}
			s = s[:end] + `  <collation name="utf8mb3_shakedown_ci" id="1250">
    <rules><reset>a</reset><p>b</p></rules>
  </collation>
` + s[end:]
			b = []byte(s)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var dirtyFixture = []string{
	"CREATE DATABASE shop",
	`CREATE TABLE shop.customers (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50) NOT NULL, created DATE NULL,
		FULLTEXT KEY ft_name (name)) ENGINE=InnoDB`,
	"INSERT INTO shop.customers (name, created) SELECT CONCAT('c', seq), '2024-01-01' + INTERVAL seq DAY FROM shop.seq_1_to_1999",
	"INSERT INTO shop.customers (name, created) VALUES ('zero', '0000-00-00')",
	"ANALYZE TABLE shop.customers",
	"CREATE TABLE shop.legacy_log (id INT PRIMARY KEY, msg TEXT) ENGINE=MyISAM",
	"CREATE TABLE shop.events_raw (at DATETIME, payload VARCHAR(100)) ENGINE=InnoDB",
	"CREATE TABLE shop.codes (code VARCHAR(20) NOT NULL, label VARCHAR(50), `rank` INT, UNIQUE KEY uk_code (code)) ENGINE=InnoDB",
	"CREATE TABLE shop.counters (id TINYINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, n INT) ENGINE=InnoDB",
	"INSERT INTO shop.counters VALUES (243, 0)",
	`CREATE TABLE shop.orders (id INT PRIMARY KEY, customer_id INT NOT NULL,
		CONSTRAINT fk_orders_customer FOREIGN KEY (customer_id) REFERENCES shop.customers (id) ON DELETE CASCADE) ENGINE=InnoDB`,
	`CREATE TABLE shop.payments (id INT PRIMARY KEY, customer_id INT NOT NULL,
		CONSTRAINT fk_payments_customer FOREIGN KEY (customer_id) REFERENCES shop.customers (id) ON DELETE CASCADE) ENGINE=InnoDB`,
	"CREATE TRIGGER shop.customers_bi BEFORE INSERT ON shop.customers FOR EACH ROW SET NEW.name = TRIM(NEW.name)",
	"CREATE EVENT shop.purge_raw ON SCHEDULE EVERY 1 DAY DO DELETE FROM shop.events_raw WHERE at < NOW() - INTERVAL 30 DAY",
	"CREATE EVENT shop.rollup ON SCHEDULE EVERY 1 HOUR STARTS '2026-01-01 00:00:00' DO DELETE FROM shop.events_raw WHERE payload IS NULL",
	"CREATE PROCEDURE shop.add_customer(n VARCHAR(50) CHARACTER SET utf8mb3) INSERT INTO shop.customers (name) VALUES (n)",
	"CREATE DATABASE intl",
	"CREATE TABLE intl.labels (code VARCHAR(20) CHARACTER SET utf8mb3 COLLATE utf8mb3_shakedown_ci PRIMARY KEY)",
	"CREATE USER 'app'@'%' IDENTIFIED BY 'app-secret'",
	"GRANT SELECT, INSERT, UPDATE ON shop.* TO 'app'@'%'",
	"CREATE USER 'report'@'%' IDENTIFIED BY 'report-secret'",
	"GRANT SELECT ON shop.* TO 'report'@'%'",
	"CREATE USER 'lowpriv'@'%' IDENTIFIED BY 'lowpriv-secret'",
	"GRANT SELECT ON shop.* TO 'lowpriv'@'%'",
}

// targetFixture is the target after a copy of the schema that left out the
// trigger, an event, the intl database, an account and a foreign key (with
// its index), made another foreign key RESTRICT, the procedure's parameter
// utf8mb4 (and its sql_mode the target's), the other event daily and
// disabled, gave app fewer privileges, and made legacy_log InnoDB;
// customers was filled with its statistics frozen.
var targetFixture = []string{
	"CREATE DATABASE shop",
	`CREATE TABLE shop.customers (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50) NOT NULL, created DATE NULL,
		FULLTEXT KEY ft_name (name)) ENGINE=InnoDB`,
	"INSERT INTO shop.customers (name, created) SELECT CONCAT('c', seq), '2024-01-01' + INTERVAL seq DAY FROM shop.seq_1_to_2000",
	"CREATE TABLE shop.legacy_log (id INT PRIMARY KEY, msg TEXT) ENGINE=InnoDB",
	"CREATE TABLE shop.events_raw (at DATETIME, payload VARCHAR(100)) ENGINE=InnoDB",
	"CREATE TABLE shop.codes (code VARCHAR(20) NOT NULL, label VARCHAR(50), `rank` INT, UNIQUE KEY uk_code (code)) ENGINE=InnoDB",
	"CREATE TABLE shop.counters (id TINYINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, n INT) ENGINE=InnoDB",
	"CREATE TABLE shop.orders (id INT PRIMARY KEY, customer_id INT NOT NULL) ENGINE=InnoDB",
	`CREATE TABLE shop.payments (id INT PRIMARY KEY, customer_id INT NOT NULL,
		CONSTRAINT fk_payments_customer FOREIGN KEY (customer_id) REFERENCES shop.customers (id)) ENGINE=InnoDB`,
	"CREATE PROCEDURE shop.add_customer(n VARCHAR(50) CHARACTER SET utf8mb4) INSERT INTO shop.customers (name) VALUES (n)",
	"CREATE EVENT shop.rollup ON SCHEDULE EVERY 1 DAY STARTS '2026-01-01 00:00:00' DISABLE DO DELETE FROM shop.events_raw WHERE payload IS NULL",
	"CREATE USER 'app'@'%' IDENTIFIED BY 'app-secret'",
	"GRANT SELECT ON shop.* TO 'app'@'%'",
	"CREATE USER 'lowpriv'@'%' IDENTIFIED BY 'lowpriv-secret'",
	"GRANT SELECT ON shop.* TO 'lowpriv'@'%'",
}

var cleanFixture = []string{
	"CREATE DATABASE inventory",
	"CREATE TABLE inventory.items (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, sku VARCHAR(20) NOT NULL, qty INT NOT NULL DEFAULT 0, UNIQUE KEY (sku))",
	"INSERT INTO inventory.items (sku, qty) SELECT CONCAT('sku', seq), seq FROM inventory.seq_1_to_100",
}

func openURL(t *testing.T, url string) *sql.DB {
	t.Helper()
	tgt, err := target.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	db, err := tgt.OpenNoDB(tgt.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func exec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// connect opens a side the way the command does.
func connect(t *testing.T, role, url string) *schema.Side {
	t.Helper()
	tgt, err := target.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := verify.Connect(ctx, role, tgt, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.DB.Close() })
	return s
}

// withUser is url with another user and password.
func withUser(url, user, password string) string {
	rest := url[strings.Index(url, "@")+1:]
	return "mysql://" + user + ":" + password + "@" + rest
}
