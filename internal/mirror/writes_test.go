package mirror

import (
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/usage"
)

// checksum is CHECKSUM TABLE sbtest1 on db.
func checksum(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var name string
	var sum int64
	if err := db.QueryRow("CHECKSUM TABLE sbtest1").Scan(&name, &sum); err != nil {
		t.Fatalf("checksum: %v", err)
	}
	return sum
}

func TestMirrorWrites(t *testing.T) {
	p := newPair(t)
	t.Run("a candidate that is the control's own server is refused", func(t *testing.T) {
		alias := mustTarget(t, strings.Replace(p.ctl.URL(), "127.0.0.1", "localhost", 1))
		_, err := Listen(t.Context(), Options{Listen: "127.0.0.1:0", Control: p.ctlT, Candidates: []Candidate{{Name: "same", Target: alias}}, Writes: true})
		var ue *usage.Error
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "candidate same is the control's own server") {
			t.Fatalf("got %v, want a usage error naming candidate same as the control's own server", err)
		}
	})
	// A queue that the test's load never fills: a dropped write would
	// leave the candidate apart, which is what the summary says, not what
	// this test checks.
	m := startMirror(t, Options{Listen: "127.0.0.1:0", Control: p.ctlT, Candidates: []Candidate{{Name: "cand", Target: p.candT}}, Writes: true, Queue: 100000})
	_, port, _ := net.SplitHostPort(m.Addr())
	wp := &pair{ctl: p.ctl, cand: p.cand, ctlT: p.ctlT, candT: p.candT, m: m, port: port}
	ctlDB, candDB := pinned(t, dsnOf(p.ctl)), pinned(t, dsnOf(p.cand))

	t.Run("sysbench oltp_read_write, prepared: the writes reach the candidate, no differences", func(t *testing.T) {
		if checksum(t, ctlDB) != checksum(t, candDB) {
			t.Fatal("the tables differ before the run")
		}
		out, err := wp.sysbenchTest("oltp_read_write", 2, "--db-ps-mode=auto", "--threads=1", "--rate=40")
		if err != nil {
			t.Fatal(err)
		}
		s := settled(t, m)
		for _, prefix := range []string{"update `sbtest1` set `k` = `k` + ?", "delete from `sbtest1`", "insert into `sbtest1`", "begin", "commit", pointSelect} {
			if cl := classOf(s, prefix); cl == nil || cl.Candidates[0].Compared == 0 {
				t.Errorf("class %q: got none compared\n%s", prefix, summaryText(s))
			}
		}
		if s.Differing != 0 || s.Dropped != 0 {
			t.Errorf("got %d differing, %d dropped, want 0 and 0\n%s\n%s", s.Differing, s.Dropped, summaryText(s), out)
		}
		if a, b := checksum(t, ctlDB), checksum(t, candDB); a != b {
			t.Errorf("after the run: got checksums %d on the control, %d on the candidate, want them equal", a, b)
		}
	})
	t.Run("a write whose outcome differs is found", func(t *testing.T) {
		// Row 9 gone on the candidate: the update changes no row there. Row
		// 5000 there only: the insert fails there only.
		if _, err := candDB.Exec("DELETE FROM sbtest1 WHERE id = 9"); err != nil {
			t.Fatal(err)
		}
		if _, err := candDB.Exec("INSERT INTO sbtest1 (id, k, c, pad) VALUES (5000, 1, 'x', 'y')"); err != nil {
			t.Fatal(err)
		}
		db := pinned(t, wp.throughDSN())
		if _, err := db.Exec("UPDATE sbtest1 SET k = k + 1 WHERE id = 9"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("INSERT INTO sbtest1 (id, k, c, pad) VALUES (5000, 2, 'z', 'w')"); err != nil {
			t.Fatal(err)
		}
		s := settled(t, m)
		for _, tc := range []struct{ class, kind string }{
			{"update `sbtest1` set `k` = `k` + ? where `id` = ?", "affected rows"},
			{"insert into `sbtest1` ( `id` , `k` , `c` , `pad` ) values", "error on the candidate only (1062)"},
		} {
			cl := classOf(s, tc.class)
			if cl == nil || cl.Candidates[0].Sample == nil || !strings.Contains(cl.Candidates[0].Sample.Kind, tc.kind) {
				t.Errorf("class %q: got %+v, want a difference of %q\n%s", tc.class, cl, tc.kind, summaryText(s))
			}
		}
	})
	t.Run("a transaction that wrote: its reads are compared on the twin's own transaction", func(t *testing.T) {
		db := pinned(t, wp.throughDSN())
		before := settled(t, m)
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("UPDATE sbtest1 SET c = 'in tx' WHERE id = 12"); err != nil {
			t.Fatal(err)
		}
		var c string
		if err := tx.QueryRow("SELECT c FROM sbtest1 WHERE id = 12").Scan(&c); err != nil || c != "in tx" {
			t.Fatalf("the read in the transaction: got %q, %v, want 'in tx'", c, err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		s := settled(t, m)
		if cl := classOf(s, pointSelect); cl == nil || cl.NotMirrored[inWrittenTx] != 0 || compared(cl) == compared(classOf(before, pointSelect)) {
			t.Errorf("got the point select's class %+v, want the read in the transaction compared", cl)
		}
		if s.Differing != before.Differing {
			t.Errorf("got %d differing, want %d as before\n%s", s.Differing, before.Differing, summaryText(s))
		}
		var got string
		if err := candDB.QueryRow("SELECT c FROM sbtest1 WHERE id = 12").Scan(&got); err != nil || got == "in tx" {
			t.Errorf("the candidate's row after the rollback: got %q, %v, want it rolled back", got, err)
		}
	})
	t.Run("administration is never sent to a candidate", func(t *testing.T) {
		db := pinned(t, wp.throughDSN())
		var id int64
		if err := db.QueryRow("SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		// A KILL of a session that is not there: the control refuses it,
		// and a candidate would have killed its own session of that id.
		db.Exec(fmt.Sprintf("KILL %d", id+100000))
		s := settled(t, m)
		if cl := classOf(s, "kill"); cl == nil || cl.NotMirrored[notSent] != 1 || cl.Candidates[0].Mirrored != 0 {
			t.Errorf("got the KILL's class %+v, want it counted not sent, not mirrored", cl)
		}
	})
}
