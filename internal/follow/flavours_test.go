package follow

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/verify"
)

// TestFlavourTargets follows a MariaDB source into targets of other
// flavours: a copy kept up to date under load and through an ALTER ends
// equal to the source, as verify compares them (their CHECKSUM TABLE
// values are not MariaDB's).
func TestFlavourTargets(t *testing.T) {
	inst := sandboxtest.Start(t, binlogSettings...)
	for _, c := range []struct {
		name string
		url  func(testing.TB) string
		inst func() *sandbox.Instance
		// kill: the follower's statements are killed on the target too.
		// Not on TiDB: the test build (v8.4.0-alpha, unistore) goes down
		// when a running statement is killed, so the fault would test
		// the server.
		kill bool
	}{
		{"tidb", sandboxtest.TiDB, sandboxtest.TiDBInstance, false},
		{"galera", sandboxtest.Galera, sandboxtest.GaleraInstance, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := c.url(t) // skips where the flavour is not installed
			ctx := testCtx(t, 3*time.Minute)
			src, dst := withDB(t, inst.URL(), "shop"), withDB(t, u, "shop")
			admin := open(t, src)
			shop(t, admin, "shop", 40)
			from := copyDB(t, ctx, src, dst)
			// What the copy left unequal (the flavour's types) is the
			// measure: the follower must add nothing to it.
			copied := compare(t, ctx, src, dst)
			if copied.DifferingRows != 0 || copied.Failed != 0 {
				t.Fatalf("the copy differs from its source before anything is followed: %s", reportText(copied))
			}

			lctx, stop := context.WithTimeout(ctx, 2*time.Second)
			defer stop()
			var wg sync.WaitGroup
			var txns int64
			wg.Add(1)
			go func() { defer wg.Done(); txns, _ = churn(lctx, admin, "shop", 4) }()
			sum, err := Run(ctx, src, dst, Options{AllowWrite: true, From: from, Duration: 2 * time.Second, Workers: 3})
			if err != nil {
				t.Fatalf("follow: %v", err)
			}
			wg.Wait()
			if sum.Rows == 0 {
				t.Fatalf("the follower applied no rows while %d transactions committed: %+v", txns, sum)
			}
			// Followers killed with SIGKILL under load, each started again
			// from the saved position: the target must still end equal.
			txns += killDuringLoad(t, ctx, src, dst, admin, 4, 6*time.Second)
			// A follower whose target connections are killed under it
			// applies its batch again.
			if c.kill {
				txns += killTargetConns(t, ctx, src, dst, admin)
			}
			// The target restarted under a follower at work.
			txns += restartTarget(t, ctx, src, dst, admin, c.inst())
			conn := useDB(t, ctx, admin, "shop")
			for _, s := range []string{
				// A collation TiDB lacks: mapped as copy maps it.
				"ALTER TABLE items ADD COLUMN extra VARCHAR(20) CHARACTER SET latin1 COLLATE latin1_swedish_ci DEFAULT 'sept', ADD COLUMN more VARCHAR(20) COLLATE utf8mb4_unicode_ci",
				"INSERT INTO items (id, name, stock, extra, more) VALUES (9001, 'après €1 “ok” Œ', 1, 'huît €', 'ü')",
				"UPDATE users SET visits = visits + 1 WHERE id <= 5",
			} {
				if _, err := conn.ExecContext(ctx, s); err != nil {
					t.Fatalf("source: %s: %v", s, err)
				}
			}
			sum, err = Run(ctx, src, dst, Options{AllowWrite: true, UntilCaughtUp: true})
			if err != nil {
				t.Fatalf("follow until caught up: %v", err)
			}
			if sum.State != StateCaughtUp || sum.DDL != 1 {
				t.Errorf("state %q with %d DDL, want %q with 1", sum.State, sum.DDL, StateCaughtUp)
			}
			t.Logf("%d transactions of load; the last follower: %s", txns, sum.Text())
			followed := compare(t, ctx, src, dst)
			if got, want := reportText(followed), reportText(copied); got != want || followed.DifferingRows != 0 {
				t.Fatalf("verify after following:\n%s\nwant as after the copy:\n%s", got, want)
			}
			if !copied.Equal {
				t.Logf("the copy's own differences, which following left as they were:\n%s", reportText(copied))
			}
		})
	}
}

// restartTarget runs a follower under load and restarts the target server
// (every node of a cluster) under it; the follower must go on past the
// restart. It returns the source's transactions.
func restartTarget(t *testing.T, ctx context.Context, src, dst *target.Target, admin *sql.DB, inst *sandbox.Instance) int64 {
	t.Helper()
	load := startLoad(ctx, admin, "shop", 10)
	log := &logBuf{}
	fl := startFollow(t, ctx, src, dst, Options{AllowWrite: true, Workers: 3, Log: log, RetryFor: 2 * time.Minute})
	name := nameOf([]Pair{{src.DB, dst.DB}})
	dstDB := open(t, dst)
	before := savedAt(dstDB, name)
	fl.waitFor(t, "the follower to apply changes", func() bool { return savedAt(dstDB, name) != before })
	began := time.Now()
	if _, err := sandbox.Restart(ctx, inst.Home, inst.Name, nil); err != nil {
		t.Fatalf("restart the target: %v", err)
	}
	t.Logf("target restarted in %s", time.Since(began).Round(time.Millisecond))
	after := savedAt(dstDB, name)
	fl.waitFor(t, "the follower to go on after the restart", func() bool { return savedAt(dstDB, name) != after })
	txns := load.stop()
	if _, _, err := fl.stop(t); err != nil {
		t.Fatalf("follow across a target restart: %v\nlog:\n%s", err, log)
	}
	return txns
}

// killTargetConns runs a follower under load and kills its connections to
// the target while it applies (every connection of the user but the
// killer's), twice; it returns the source's transactions.
func killTargetConns(t *testing.T, ctx context.Context, src, dst *target.Target, admin *sql.DB) int64 {
	t.Helper()
	killer := open(t, dst)
	killer.SetMaxOpenConns(1)
	load := startLoad(ctx, admin, "shop", 9)
	log := &logBuf{}
	fl := startFollow(t, ctx, src, dst, Options{AllowWrite: true, Workers: 3, Log: log})
	name := nameOf([]Pair{{src.DB, dst.DB}})
	for round := range 2 {
		before := savedAt(killer, name)
		fl.waitFor(t, "the follower to apply changes", func() bool { return savedAt(killer, name) != before })
		// The follower's connections caught in a statement (the server's
		// own sessions are left alone: TiDB does not survive losing them).
		var victims []int64
		deadline := time.Now().Add(30 * time.Second)
		for len(victims) == 0 && time.Now().Before(deadline) {
			victims = ids(t, killer, "SELECT ID FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND (INFO LIKE 'REPLACE INTO%' OR INFO LIKE 'DELETE FROM%' OR INFO LIKE 'COMMIT%')")
		}
		if len(victims) == 0 {
			t.Fatal("caught no follower statement on the target to kill within 30s")
		}
		for _, id := range victims {
			killer.Exec(fmt.Sprintf("KILL %d", id)) //nolint:errcheck // one may have ended by itself
		}
		t.Logf("round %d: killed %d target connections", round+1, len(victims))
	}
	after := savedAt(killer, name)
	fl.waitFor(t, "the follower to go on after the kills", func() bool { return savedAt(killer, name) != after })
	txns := load.stop()
	if _, _, err := fl.stop(t); err != nil {
		t.Fatalf("follow with its target connections killed: %v\nlog:\n%s", err, log)
	}
	return txns
}

// TestFlavourLatin1Text: the follower's reading of latin1 bytes (for a
// target that keeps latin1 text as utf8) is the server's, byte by byte.
func TestFlavourLatin1Text(t *testing.T) {
	db := open(t, mustParse(t, sandboxtest.URL(t)))
	for b := 0; b < 256; b++ {
		var want string
		if err := db.QueryRow(fmt.Sprintf("SELECT CONVERT(_latin1 X'%02X' USING utf8mb4)", b)).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if got := latin1Text([]byte{byte(b)}); got != want {
			t.Errorf("latin1 byte %02X: got %q, want the server's %q", b, got, want)
		}
	}
}

// compare is verify's report on the source's and the target's databases
// (their URLs').
func compare(t *testing.T, ctx context.Context, src, dst *target.Target) *verify.Report {
	t.Helper()
	s, err := verify.Connect(ctx, "source", src, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer s.DB.Close()
	d, err := verify.Connect(ctx, "target", dst, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer d.DB.Close()
	rep, err := verify.Run(ctx, s, d, verify.Options{Threads: 2})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if len(rep.Tables) != 3 {
		t.Fatalf("verify compared %d tables, want items, lines, users: %s", len(rep.Tables), reportText(rep))
	}
	return rep
}

// reportText is what a report found, table by table: its schema
// differences, and the first differing rows.
func reportText(rep *verify.Report) string {
	val := func(p *string) string {
		if p == nil {
			return "NULL"
		}
		return fmt.Sprintf("%q", *p)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "equal %v, %d rows differ, %d tables failed\n", rep.Equal, rep.DifferingRows, rep.Failed)
	for _, tr := range rep.Tables {
		fmt.Fprintf(&b, "  %s: equal %v, %d rows differ, schema %v %s\n", tr.Table, tr.Equal, tr.DifferingRows, tr.SchemaDifferences, tr.Error)
		for i, r := range tr.Rows {
			if i == 5 {
				break
			}
			fmt.Fprintf(&b, "    %s:", r.Kind)
			for _, k := range r.Key {
				fmt.Fprintf(&b, " %s=%s", k.Column, val(k.Value))
			}
			for _, c := range r.Changes {
				fmt.Fprintf(&b, "; %s: source %s, target %s", c.Column, val(c.Source), val(c.Target))
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}
