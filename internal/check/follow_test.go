package check

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// settings is the Setting of each prerequisite, in order.
func settings(ps []Prerequisite) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.Setting)
	}
	return out
}

// TestFollowGrants reads the current user's rights to the binary log from
// SHOW GRANTS as MariaDB and MySQL print it.
func TestFollowGrants(t *testing.T) {
	const user = "'f'@'%'"
	both := []string{"REPLICATION SLAVE", "REPLICATION CLIENT"}
	tests := []struct {
		name  string
		f     flavour.Name
		lines []string
		want  []string // the settings lacking
	}{
		{"MariaDB root: ALL PRIVILEGES, password and socket clauses after TO", flavour.MariaDB, []string{
			"GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` IDENTIFIED VIA mysql_native_password USING 'invalid' OR unix_socket WITH GRANT OPTION",
			"GRANT PROXY ON ''@'%' TO 'root'@'localhost' WITH GRANT OPTION",
		}, nil},
		{"SELECT only", flavour.MariaDB, []string{
			"GRANT SELECT ON *.* TO `f`@`%` IDENTIFIED BY PASSWORD '*0123456789ABCDEF0123456789ABCDEF01234567'",
		}, both},
		{"usage only", flavour.MySQL, []string{"GRANT USAGE ON *.* TO `f`@`%`"}, both},
		{"MariaDB 10.5.2+: REPLICATION CLIENT printed as BINLOG MONITOR", flavour.MariaDB, []string{
			"GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `f`@`%`",
		}, nil},
		{"MariaDB 11: REPLICATION REPLICA is REPLICATION SLAVE", flavour.MariaDB, []string{
			"GRANT REPLICATION REPLICA, BINLOG MONITOR ON *.* TO `f`@`%`",
		}, nil},
		{"SLAVE MONITOR and REPLICATION SLAVE ADMIN are neither", flavour.MariaDB, []string{
			"GRANT SLAVE MONITOR, REPLICATION SLAVE ADMIN, REPLICATION MASTER ADMIN ON *.* TO `f`@`%`",
		}, both},
		{"MySQL 8: dynamic privileges on a line of their own", flavour.MySQL, []string{
			"GRANT SELECT, REPLICATION SLAVE ON *.* TO `f`@`%`",
			"GRANT BINLOG_ADMIN,REPLICATION_SLAVE_ADMIN ON *.* TO `f`@`%`",
		}, []string{"REPLICATION CLIENT"}},
		{"MySQL: SUPER reads positions, as check allows", flavour.MySQL, []string{
			"GRANT SUPER, REPLICATION SLAVE ON *.* TO `f`@`%`",
		}, nil},
		{"grants on a database or a column are not global", flavour.MariaDB, []string{
			"GRANT USAGE ON *.* TO `f`@`%`",
			"GRANT ALL PRIVILEGES ON `shop`.* TO `f`@`%`",
			"GRANT SELECT (`a`, `b`), INSERT (`a`) ON `shop`.`t` TO `f`@`%`",
		}, both},
		{"a name in quotes that reads like the grammar", flavour.MariaDB, []string{
			"GRANT SELECT ON *.* TO `x ON *.* TO y, REPLICATION SLAVE`@`%`",
			"GRANT REPLICATION CLIENT ON `a ON *.*`.* TO `f`@`%`",
		}, both},
		{"a role's name and the default role grant nothing", flavour.MariaDB, []string{
			"GRANT `replication` TO `f`@`%`",
			"GRANT USAGE ON *.* TO `f`@`%`",
			"SET DEFAULT ROLE `replication` FOR `f`@`%`",
		}, both},
		{"MariaDB's current role's grants count", flavour.MariaDB, []string{
			"GRANT `replication` TO `f`@`%`",
			"GRANT USAGE ON *.* TO `f`@`%`",
			"GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `replication`",
			"SET DEFAULT ROLE `replication` FOR `f`@`%`",
		}, nil},
		{"MySQL's partial revoke takes nothing global away", flavour.MySQL, []string{
			"GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `f`@`%`",
			"REVOKE SELECT ON `mysql`.* FROM `f`@`%`",
		}, nil},
		{"lower case, as some proxies print it", flavour.MySQL, []string{
			"grant replication slave, replication client on *.* to 'f'@'%'",
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := binlogPrivileges(tc.lines, user, tc.f)
			want := tc.want
			if want == nil {
				want = []string{}
			}
			if !reflect.DeepEqual(settings(got), want) {
				t.Fatalf("got %q, want %q", settings(got), want)
			}
			for _, p := range got {
				if !strings.Contains(p.Problem, user) || p.Fix != "on the source: GRANT "+p.Setting+" ON *.* TO "+user {
					t.Errorf("%s: got problem %q, fix %q, want the account named and GRANT %s ON *.* TO %s", p.Setting, p.Problem, p.Fix, p.Setting, user)
				}
			}
		})
	}
}

// TestFollowGrantLine reads the parts of a line of SHOW GRANTS.
func TestFollowGrantLine(t *testing.T) {
	tests := []struct {
		name string
		line string
		want grantLine
		ok   bool
	}{
		{"column lists dropped", "GRANT SELECT (`a`, `b (c)`), UPDATE (`a`) ON `db`.`t` TO `u`@`%`",
			grantLine{privs: []string{"SELECT", "UPDATE"}, on: "`db`.`t`"}, true},
		{"routine", "GRANT EXECUTE, ALTER ROUTINE ON PROCEDURE `db`.`p` TO `u`@`%`",
			grantLine{privs: []string{"EXECUTE", "ALTER ROUTINE"}, on: "PROCEDURE `db`.`p`"}, true},
		{"roles", "GRANT `r1`@`%`,`r2`@`%` TO `u`@`%`", grantLine{}, true},
		{"escaped quote in a password hash", `GRANT USAGE ON *.* TO 'u'@'%' IDENTIFIED BY PASSWORD 'it\'s ON'`,
			grantLine{privs: []string{"USAGE"}, on: "*.*"}, true},
		{"partial revoke", "REVOKE INSERT ON `mysql`.* FROM `u`@`%`", grantLine{}, false},
		{"default role", "SET DEFAULT ROLE `r` FOR `u`@`%`", grantLine{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseGrantLine(tc.line)
			if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, %v, want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestFollowNoBinlog: a flavour without a MySQL binary log is one
// prerequisite, read from no server (src is nil).
func TestFollowNoBinlog(t *testing.T) {
	for _, f := range []flavour.Name{flavour.TiDB, flavour.Vitess, flavour.Dolt, flavour.GMS} {
		got, err := FollowPrerequisites(context.Background(), nil, f, []string{"shop"})
		if err != nil || len(got) != 1 || got[0].Setting != "binary log" || !strings.Contains(got[0].Problem, f.Title()) {
			t.Errorf("%s: got %+v, %v, want one prerequisite, binary log, naming %s", f, got, err, f.Title())
		}
	}
}

// TestFollowPrerequisites reads a real server of its own: settings changed
// with SET GLOBAL, users created, tables with and without keys.
func TestFollowPrerequisites(t *testing.T) {
	inst := sandboxtest.Start(t, "log_bin=ON", "binlog_format=ROW")
	root := openURL(t, inst.URL())
	exec(t, root,
		"CREATE DATABASE keyed",
		"CREATE TABLE keyed.pk (id INT PRIMARY KEY, v TEXT)",
		"CREATE TABLE keyed.uk (code VARCHAR(20) NOT NULL, v TEXT, UNIQUE KEY uk_code (code))",
		"CREATE VIEW keyed.v AS SELECT v FROM keyed.uk",
		"CREATE DATABASE loose",
		"CREATE TABLE loose.logs (at DATETIME, msg TEXT)",
		"CREATE TABLE loose.nullable_uk (code VARCHAR(20) NULL, UNIQUE KEY uk_code (code))",
		"CREATE TABLE loose.pk (id INT PRIMARY KEY)",
		"CREATE USER 'reader'@'%' IDENTIFIED BY 'reader-secret'",
		"GRANT SELECT ON *.* TO 'reader'@'%'",
		"CREATE USER 'follower'@'%' IDENTIFIED BY 'follower-secret'",
		"GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'follower'@'%'",
		"CREATE ROLE binlog_role",
		"GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO binlog_role",
		"CREATE USER 'roled'@'%' IDENTIFIED BY 'roled-secret'",
		"GRANT binlog_role TO 'roled'@'%'",
		"SET DEFAULT ROLE binlog_role FOR 'roled'@'%'",
	)
	follow := func(t *testing.T, url string, dbs ...string) []Prerequisite {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		got, err := FollowPrerequisites(ctx, openURL(t, url), flavour.MariaDB, dbs)
		if err != nil {
			t.Fatalf("FollowPrerequisites: %v", err)
		}
		return got
	}
	tests := []struct {
		name string
		user string // "" for root
		dbs  []string
		want []string
	}{
		{"root, keyed tables: nothing", "", []string{"keyed"}, []string{}},
		{"keyless tables by name, keyed ones and views not", "", []string{"keyed", "loose"}, []string{"table loose.logs", "table loose.nullable_uk"}},
		{"SELECT only: both replication privileges", "reader", []string{"keyed"}, []string{"REPLICATION SLAVE", "REPLICATION CLIENT"}},
		{"granted both: nothing", "follower", []string{"keyed"}, []string{}},
		{"both through the default role: nothing", "roled", []string{"keyed"}, []string{}},
		{"no databases: no tables read", "reader", nil, []string{"REPLICATION SLAVE", "REPLICATION CLIENT"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := inst.URL()
			if tc.user != "" {
				url = withUser(url, tc.user, tc.user+"-secret")
			}
			got := follow(t, url, tc.dbs...)
			if !reflect.DeepEqual(settings(got), tc.want) {
				t.Fatalf("got %q, want %q: %+v", settings(got), tc.want, got)
			}
			for _, p := range got {
				if n, ok := strings.CutPrefix(p.Setting, "table "); ok {
					if !strings.Contains(p.Fix, "ALTER TABLE "+qualifiedName(n)+" ADD COLUMN id") {
						t.Errorf("%s: got fix %q, want ALTER TABLE %s ADD COLUMN id ...", p.Setting, p.Fix, qualifiedName(n))
					}
				}
				if tc.user != "" && !strings.HasPrefix(p.Setting, "table ") && !strings.Contains(p.Fix, "'"+tc.user+"'@'%'") {
					t.Errorf("%s: got fix %q, want it to name '%s'@'%%'", p.Setting, p.Fix, tc.user)
				}
			}
		})
	}

	t.Run("binlog_format MIXED", func(t *testing.T) {
		exec(t, root, "SET GLOBAL binlog_format = 'MIXED'")
		t.Cleanup(func() { exec(t, root, "SET GLOBAL binlog_format = 'ROW'") })
		got := follow(t, inst.URL(), "keyed")
		if want := []string{"binlog_format"}; !reflect.DeepEqual(settings(got), want) {
			t.Fatalf("got %q, want %q", settings(got), want)
		}
		// check's own finding, word for word: one rule for both.
		if p := got[0]; !strings.HasPrefix(p.Problem, "binlog_format is MIXED: ") || !strings.HasPrefix(p.Fix, "SET GLOBAL binlog_format = 'ROW'") {
			t.Errorf("got %+v, want the problem to give MIXED and the fix SET GLOBAL binlog_format = 'ROW'", p)
		}
	})
}
