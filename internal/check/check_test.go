package check

import (
	"context"
	"strings"
	"testing"
	"time"
)

func runCheck(t *testing.T, srcURL, dstURL string, opts Options) *Report {
	t.Helper()
	src, dst := connect(t, "source", srcURL), connect(t, "target", dstURL)
	if opts.SkipAccounts == nil {
		opts.SkipAccounts = DefaultSkipAccounts
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Run(ctx, src, dst, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep
}

func dump(t *testing.T, rep *Report) {
	t.Helper()
	var b strings.Builder
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
}

// TestCheck runs check on real servers built to trip each check, and on a
// pair with nothing against the move. The sandboxes are shared by the
// subtests.
func TestCheck(t *testing.T) {
	srv := startServers(t)

	t.Run("each check found once", func(t *testing.T) {
		rep := runCheck(t, srv.dirty, srv.target, Options{})
		tests := []struct {
			name, check, object, severity string
		}{
			{"a MyISAM table", "engine", "shop.legacy_log", Warning},
			{"a table without a primary key or a usable unique key", "no_primary_key", "shop.events_raw", Error},
			{"a table whose unique key could serve", "no_primary_key", "shop.codes", Warning},
			{"a trigger", "missing_trigger", "shop.customers_bi", Error},
			{"a foreign key dropped", "missing_foreign_key", "shop.orders", Error},
			{"its index", "missing_index", "shop.orders", Warning},
			{"a foreign key's ON DELETE changed", "foreign_key_differs", "shop.payments", Error},
			{"a procedure's parameter character set changed", "routine_differs", "shop.add_customer", Warning},
			{"an event's schedule and status changed", "event_differs", "shop.rollup", Error},
			{"an event", "missing_event", "shop.purge_raw", Error},
			{"an account missing on the target", "missing_account", "'report'@'%'", Error},
			{"an account with fewer privileges", "fewer_privileges", "'app'@'%'", Error},
			{"a collation the target lacks", "missing_collation", "utf8mb3_shakedown_ci", Error},
			{"binlog off on the source", "binlog_off", "log_bin", Error},
			{"a zero date", "zero_date", "shop.customers.created", Error},
			{"AUTO_INCREMENT at 95% of its maximum", "auto_increment_near_max", "shop.counters.id", Warning},
			{"differing sql_mode", "sql_mode", "sql_mode", Warning},
			{"differing lower_case_table_names", "lower_case_table_names", "lower_case_table_names", Warning},
			{"statistics frozen after the copy", "stale_statistics", "shop.customers", Warning},
			{"a database not copied yet", "missing_database", "intl", Notice},
		}
		perCheck := map[string]int{}
		for _, tc := range tests {
			perCheck[tc.check]++
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				var got []Finding
				for _, f := range rep.Findings {
					if f.Check == tc.check && f.Object == tc.object {
						got = append(got, f)
					}
				}
				if len(got) != 1 {
					t.Fatalf("findings %s on %s: got %d, want 1: %+v", tc.check, tc.object, len(got), got)
				}
				if got[0].Severity != tc.severity {
					t.Errorf("severity of %s on %s: got %s, want %s", tc.check, tc.object, got[0].Severity, tc.severity)
				}
				if got[0].Message == "" || got[0].Fix == "" {
					t.Errorf("%s on %s: got message %q and fix %q, want both", tc.check, tc.object, got[0].Message, got[0].Fix)
				}
				if n := rep.Count(tc.check, ""); n != perCheck[tc.check] {
					t.Errorf("findings %s in all: got %d, want %d", tc.check, n, perCheck[tc.check])
				}
			})
		}
		for _, f := range rep.Findings {
			if f.Check == "fewer_privileges" && (!strings.Contains(f.Message, "INSERT ON shop.*") || !strings.Contains(f.Message, "UPDATE ON shop.*")) {
				t.Errorf("fewer_privileges: got %q, want INSERT and UPDATE ON shop.* named", f.Message)
			}
			if f.Check == "no_primary_key" && f.Object == "shop.codes" && !strings.Contains(f.Message, "uk_code") {
				t.Errorf("no_primary_key on shop.codes: got %q, want the unique key uk_code named", f.Message)
			}
			if f.Check == "routine_differs" && (!strings.Contains(f.Message, "n utf8mb3_general_ci on the source, n utf8mb4_general_ci on the target") ||
				!strings.Contains(f.Fix, "SHOW CREATE PROCEDURE `shop`.`add_customer`")) {
				t.Errorf("routine_differs: got %q, fix %q; want the parameter's collations on both sides and SHOW CREATE PROCEDURE", f.Message, f.Fix)
			}
			if f.Check == "event_differs" && (!strings.Contains(f.Message, "schedule EVERY 1 HOUR") || !strings.Contains(f.Message, "status ENABLED on the source, DISABLED on the target")) {
				t.Errorf("event_differs: got %q, want the schedules and the statuses", f.Message)
			}
			if f.Check == "stale_statistics" && !strings.Contains(f.Fix, "shakedown analyze") {
				t.Errorf("stale_statistics fix: got %q, want it to point at shakedown analyze", f.Fix)
			}
		}
		if n := rep.Count("reserved_word", ""); n != 0 {
			t.Errorf("reserved_word from MariaDB to MariaDB: got %d, want 0", n)
		}
		if n := rep.Count("unsupported_feature", ""); n != 0 {
			t.Errorf("unsupported_feature on a MariaDB target: got %d, want 0 (MariaDB has triggers, events, routines, FULLTEXT)", n)
		}
		if len(rep.NotChecked) != 0 {
			t.Errorf("not checked with a privileged user: got %+v, want none", rep.NotChecked)
		}
		if t.Failed() {
			dump(t, rep)
		}
	})

	t.Run("a clean pair gives no errors", func(t *testing.T) {
		rep := runCheck(t, srv.clean, srv.target, Options{})
		if rep.Errors != 0 {
			dump(t, rep)
			t.Fatalf("errors: got %d, want 0", rep.Errors)
		}
		if rep.Count("missing_database", Notice) != 1 {
			t.Errorf("missing_database inventory: got %d, want 1 notice (the target has not had the copy yet)", rep.Count("missing_database", Notice))
		}
	})

	t.Run("the feature table follows the flavour the server reports", func(t *testing.T) {
		rep := runCheck(t, srv.dirty, srv.tidb, Options{})
		if rep.Target.Flavour != "tidb" {
			t.Fatalf("target flavour: got %q, want tidb (the server reports %s)", rep.Target.Flavour, rep.Target.Version)
		}
		want := map[string]string{
			"procedure shop.add_customer":              Error,
			"trigger shop.customers_bi":                Error,
			"event shop.purge_raw":                     Error,
			"event shop.rollup":                        Error,
			"FULLTEXT index ft_name on shop.customers": Error,
			"2 AUTO_INCREMENT columns":                 Notice,
		}
		got := map[string]string{}
		for _, f := range rep.Findings {
			if f.Check == "unsupported_feature" {
				got[f.Object] = f.Severity
			}
		}
		for obj, sev := range want {
			if got[obj] != sev {
				t.Errorf("unsupported_feature %s: got %q, want %q", obj, got[obj], sev)
			}
		}
		if len(got) != len(want) {
			t.Errorf("unsupported_feature: got %v, want %v", got, want)
		}
		for _, f := range rep.Findings {
			if f.Check == "unsupported_feature" && !strings.Contains(f.Message, "TiDB 7.5.0") {
				t.Errorf("unsupported_feature message: got %q, want the target named as TiDB 7.5.0", f.Message)
			}
		}
		if f := findingOf(rep, "reserved_word"); f == nil || f.Object != "shop.codes.rank" || f.Severity != Warning || rep.Count("reserved_word", "") != 1 {
			t.Errorf("reserved_word: got %+v (%d in all), want one warning on shop.codes.rank (RANK is reserved on TiDB, not on MariaDB)", f, rep.Count("reserved_word", ""))
		}
		if rep.Count("auto_increment_near_max", Error) != 1 {
			t.Errorf("auto_increment_near_max on TiDB: got %d errors, want 1 (ids go in batches)", rep.Count("auto_increment_near_max", Error))
		}
	})

	t.Run("a user without privileges gets not checked", func(t *testing.T) {
		rep := runCheck(t, withUser(srv.dirty, "lowpriv", "lowpriv-secret"), srv.target, Options{})
		need := map[string]string{}
		for _, n := range rep.NotChecked {
			if n.Side == "source" {
				need[n.Check] = n.Need()
			}
		}
		tests := []struct{ check, want string }{
			{"missing_account", "needs SELECT on mysql.user"},
			{"fewer_privileges", "needs SELECT on mysql.user"},
			{"missing_trigger", "needs TRIGGER on shop.*"},
			{"missing_event", "needs EVENT on shop.*"},
			{"missing_routine", "needs SELECT on mysql.*"},
			{"missing_database", "needs SHOW DATABASES"},
		}
		for _, tc := range tests {
			if !strings.HasPrefix(need[tc.check], tc.want) {
				t.Errorf("not checked %s: got %q, want %q...", tc.check, need[tc.check], tc.want)
			}
		}
		for _, id := range []string{"missing_account", "fewer_privileges", "missing_trigger", "missing_event"} {
			if n := rep.Count(id, ""); n != 0 {
				t.Errorf("%s while not checked: got %d findings, want 0", id, n)
			}
		}
		f := findingOf(rep, "migration_privileges")
		if f == nil || f.Severity != Error || !strings.Contains(f.Message, "REPLICATION SLAVE") || f.Object != "'lowpriv'@'%'" {
			t.Errorf("migration_privileges: got %+v, want an error on 'lowpriv'@'%%' naming REPLICATION SLAVE", f)
		}
		if t.Failed() {
			dump(t, rep)
		}
	})
}

func findingOf(rep *Report, check string) *Finding {
	for i := range rep.Findings {
		if rep.Findings[i].Check == check {
			return &rep.Findings[i]
		}
	}
	return nil
}
