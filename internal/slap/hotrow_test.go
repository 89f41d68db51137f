package slap

import (
	"testing"
)

func TestParseHotRow(t *testing.T) {
	tests := []struct {
		name, q string
		want    *hotRow
	}{
		{"flash sale", "UPDATE items SET stock = stock - 1 WHERE id = 1 AND stock > 0",
			&hotRow{table: "items", column: "stock", step: -1, key: "id = 1"}},
		{"quoted, qualified, increment", "update `shop`.`acct` set `bal`=`bal`+5 where `id`=7;",
			&hotRow{table: "`shop`.`acct`", column: "`bal`", step: 5, key: "`id`=7"}},
		{"two key columns", "UPDATE t SET n = n - 2 WHERE a = 1 AND b = 2",
			&hotRow{table: "t", column: "n", step: -2, key: "a = 1 AND b = 2"}},
		{"another column", "UPDATE t SET n = m - 1 WHERE id = 1", nil},
		{"no key left", "UPDATE t SET n = n - 1 WHERE n > 0", nil},
		{"an OR", "UPDATE t SET n = n - 1 WHERE id = 1 OR id = 2", nil},
		{"a string literal", "UPDATE t SET n = n - 1 WHERE name = 'a and n'", nil},
		{"a subquery", "UPDATE t SET n = n - 1 WHERE id = (SELECT 1)", nil},
		{"by zero", "UPDATE t SET n = n - 0 WHERE id = 1", nil},
		{"no WHERE", "UPDATE t SET n = n - 1", nil},
		{"a column whose name holds the other", "UPDATE t SET n = n - 1 WHERE id = 1 AND nn > 0",
			&hotRow{table: "t", column: "n", step: -1, key: "id = 1 AND nn > 0"}},
		{"a select", "SELECT stock FROM items WHERE id = 1", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := parseHotRow(tc.q)
			switch {
			case tc.want == nil && got != nil:
				t.Fatalf("got %+v, want none", *got)
			case tc.want != nil && got == nil:
				t.Fatalf("got none, want %+v", *tc.want)
			case tc.want != nil && *got != *tc.want:
				t.Fatalf("got %+v, want %+v", *got, *tc.want)
			}
		})
	}
}

// TestFindHotRow: the statement is checked only when nothing else in the
// list writes to its table.
func TestFindHotRow(t *testing.T) {
	hot := "UPDATE items SET stock = stock - 1 WHERE id = 1"
	tests := []struct {
		name  string
		query []string
		found bool
	}{
		{"alone", []string{hot}, true},
		{"with reads", []string{"SELECT * FROM items WHERE id = 1", hot, "SELECT 1"}, true},
		{"twice", []string{hot, hot}, true},
		{"with another writer of the table", []string{hot, "INSERT INTO items VALUES (2, 10)"}, false},
		{"with a writer of another table", []string{hot, "INSERT INTO orders VALUES (1)"}, true},
		{"two hot rows", []string{hot, "UPDATE items SET stock = stock - 1 WHERE id = 2"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var q []stmt
			for _, s := range tc.query {
				q = append(q, stmt{text: s})
			}
			h := findHotRow(q)
			if (h != nil) != tc.found {
				t.Fatalf("got %v, want found %v", h, tc.found)
			}
			for i, st := range q {
				if want := tc.found && st.text == hot; st.hot != want {
					t.Errorf("statement %d: got hot %v, want %v", i, st.hot, want)
				}
			}
		})
	}
}

// TestHotTally: a level's iterations add up, and a step of two counts
// lost updates, not units.
func TestHotTally(t *testing.T) {
	h := &hotRow{table: "items", column: "stock", step: -2, key: "id = 1"}
	var one hotTally
	one.add(100, 60, 20, 0)
	if c := one.check(h); !c.OK() || c.Before != 100 || c.After != 60 {
		t.Errorf("one iteration, exact: got %+v, want ok from 100 to 60", c)
	}
	var lost hotTally
	lost.add(100, 70, 20, 0) // 20 acknowledged, -40 expected, -30 seen: 5 updates lost
	if c := lost.check(h); c.LostUpdates != 5 {
		t.Errorf("lost: got %d lost updates, want 5 (%s)", c.LostUpdates, c.Finding())
	}
	var two hotTally
	two.add(100, 60, 20, 0)
	two.add(100, 58, 20, 1) // one in doubt, which did commit: -40 or -42 both hold
	if c := two.check(h); !c.OK() || c.Observed != -82 {
		t.Errorf("two iterations: got %+v, want ok with a change of -82", c)
	}
	var none hotTally
	if c := none.check(h); c != nil {
		t.Errorf("no iteration: got %+v, want no check", c)
	}
}

// TestHotCount follows the list's transactions: rows count once their
// transaction commits.
func TestHotCount(t *testing.T) {
	begin, hot, commit, rollback := stmt{txn: txnBegin}, stmt{hot: true}, stmt{txn: txnCommit}, stmt{txn: txnRollback}
	type step struct {
		st   stmt
		n    int64  // rows changed, when it succeeds
		code uint16 // the error, when it fails
		lost bool
	}
	tests := []struct {
		name         string
		steps        []step
		rows, unsure int64
	}{
		{"autocommit", []step{{st: hot, n: 1}, {st: hot, n: 0}, {st: hot, n: 1}}, 2, 0},
		{"committed", []step{{st: begin}, {st: hot, n: 1}, {st: commit}}, 1, 0},
		{"rolled back", []step{{st: begin}, {st: hot, n: 1}, {st: rollback}}, 0, 0},
		{"certification failure at commit", []step{{st: begin}, {st: hot, n: 1}, {st: commit, code: 1213}}, 0, 0},
		{"deadlock after the update", []step{{st: begin}, {st: hot, n: 1}, {st: stmt{}, code: 1213}, {st: commit}}, 0, 0},
		{"lock wait timeout keeps the rest", []step{{st: begin}, {st: hot, n: 1}, {st: stmt{}, code: 1205}, {st: commit}}, 1, 0},
		{"commit unanswered", []step{{st: begin}, {st: hot, n: 1}, {st: commit, lost: true}}, 0, 1},
		{"update unanswered", []step{{st: hot, lost: true}}, 0, 1},
		{"BEGIN commits the open one", []step{{st: begin}, {st: hot, n: 1}, {st: begin}, {st: hot, n: 1}}, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c hotCount
			for _, s := range tc.steps {
				if s.code != 0 || s.lost {
					c.failed(s.st, s.code, s.lost)
				} else {
					c.ok(s.st, s.n)
				}
			}
			c.closed() // an open transaction is rolled back
			if c.rows != tc.rows || c.unsure != tc.unsure {
				t.Errorf("got rows %d, unsure %d; want %d, %d", c.rows, c.unsure, tc.rows, tc.unsure)
			}
		})
	}
}

func TestHotRowUntracked(t *testing.T) {
	for _, q := range [][]string{
		{"SET autocommit=0", "UPDATE t SET n = n - 1 WHERE id = 1"},
		{"BEGIN", "SAVEPOINT a", "UPDATE t SET n = n - 1 WHERE id = 1", "ROLLBACK TO SAVEPOINT a", "COMMIT"},
	} {
		var list []stmt
		for _, s := range q {
			list = append(list, stmt{text: s})
		}
		if h := findHotRow(list); h != nil {
			t.Errorf("%q: got a hot row, want none: the tally cannot follow it", q)
		}
	}
}
