package dbcopy

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

// TestCopyAccounts copies, with Accounts, the accounts that hold
// privileges on the copied database to another server: they log in there
// with their own password, and hold the same privileges on the database
// under its new name, and no global ones; an account of another database
// stays behind.
func TestCopyAccounts(t *testing.T) {
	insts := sandboxtest.StartAll(t, nil, nil)
	open := func(i *sandbox.Instance, user, db string) (*target.Target, *sql.DB) {
		tg, err := target.Parse(fmt.Sprintf("mysql://%s@127.0.0.1:%d/%s", user, i.Port, db))
		if err != nil {
			t.Fatal(err)
		}
		pool, err := tg.OpenNoDB(tg.Endpoints()[0], 2)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pool.Close() })
		return tg, pool
	}
	src, srcDB := open(insts[0], insts[0].User, "acc")
	dst, dstDB := open(insts[1], insts[1].User, "acc_new")
	mustExec(t, srcDB,
		"CREATE DATABASE acc", "CREATE TABLE acc.t (id INT PRIMARY KEY)", "INSERT INTO acc.t VALUES (1), (2)",
		"CREATE DATABASE other",
		"CREATE USER 'app'@'%' IDENTIFIED BY 'app-secret'", "GRANT SELECT, INSERT ON acc.* TO 'app'@'%'", "GRANT PROCESS ON *.* TO 'app'@'%'",
		"CREATE USER 'rep'@'localhost'", "GRANT SELECT ON acc.t TO 'rep'@'localhost'",
		"CREATE USER 'bystander'@'%'", "GRANT SELECT ON other.* TO 'bystander'@'%'",
	)
	res, err := Run(testCtx(t), src, dst, Options{AllowWrite: true, Accounts: true, NoAnalyze: true})
	if err != nil {
		t.Fatalf("copy: %v", err)
	}
	if res.Accounts != 2 {
		t.Errorf("accounts copied: got %d, want 2 (app, rep)", res.Accounts)
	}
	grants := func(who string) string {
		rows, err := dstDB.Query("SHOW GRANTS FOR " + who)
		if err != nil {
			return "error: " + err.Error()
		}
		defer rows.Close()
		var all []string
		for rows.Next() {
			var g string
			rows.Scan(&g)
			all = append(all, g)
		}
		if err := rows.Err(); err != nil {
			return "error: " + err.Error()
		}
		return strings.Join(all, "\n")
	}
	cases := []struct {
		name, who string
		want      []string
		not       []string
	}{
		{"database grant under the new name", "'app'@'%'", []string{"GRANT SELECT, INSERT ON `acc_new`.*"}, []string{"PROCESS", "`acc`."}},
		{"table grant", "'rep'@'localhost'", []string{"GRANT SELECT ON `acc_new`.`t`"}, nil},
		{"another database's account", "'bystander'@'%'", []string{"error: "}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := grants(c.who)
			for _, w := range c.want {
				if !strings.Contains(g, w) {
					t.Errorf("grants of %s on the target: got %q, want %q", c.who, g, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(g, n) {
					t.Errorf("grants of %s on the target: got %q, want no %q", c.who, g, n)
				}
			}
		})
	}
	app, err := target.Parse(fmt.Sprintf("mysql://app:app-secret@127.0.0.1:%d/acc_new", insts[1].Port))
	if err != nil {
		t.Fatal(err)
	}
	pool, err := app.Open(app.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var n int
	if err := pool.QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Errorf("app's own login on the target: got %d rows, %v; want 2 rows", n, err)
	}
}
