package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// check against a Galera cluster: a MyISAM table is not replicated, a
// table without a primary key replicates by scans, and AUTO_INCREMENT ids
// skip by the cluster's size; table locks the source takes are not held
// cluster-wide.
func TestCheckGalera(t *testing.T) {
	src, dst := sandboxtest.URL(t), sandboxtest.Galera(t)
	mustExec(t, adminDB(t, src),
		"DROP DATABASE IF EXISTS galsrc",
		"CREATE DATABASE galsrc",
		"CREATE TABLE galsrc.plain (a INT) ENGINE=InnoDB",
		"CREATE TABLE galsrc.old (id INT PRIMARY KEY) ENGINE=MyISAM",
		"CREATE TABLE galsrc.orders (id INT AUTO_INCREMENT PRIMARY KEY, note TEXT)",
	)
	// A client that locks a table on the source, on one session: the
	// source's Com_lock_tables counts it.
	conn, err := adminDB(t, src).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"LOCK TABLES galsrc.orders WRITE", "UNLOCK TABLES"} {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn.Close()
	code, out, errOut := runCLI(context.Background(), "check", strings.Replace(src, "/sbtest", "/galsrc", 1), dst, "--skip-accounts=%")
	if code != ExitDifferences {
		t.Fatalf("check: got exit %d, want %d\n%s\n%s", code, ExitDifferences, out, errOut)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"ERROR engine galsrc.old MyISAM table: MariaDB Galera replicates InnoDB tables only",
		"ERROR no_primary_key galsrc.plain no primary key: MariaDB Galera certifies and applies every row change by its primary key",
		"Galera sets auto_increment_increment to the number of nodes",
		"WARNING table_locks LOCK TABLES the source has run LOCK TABLES",
		"on MariaDB Galera a table lock is taken on one node only",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("check: no %q in\n%s", want, out)
		}
	}
}
