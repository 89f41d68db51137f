package mirror

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The sizes of issue #46's faults: 5,000 clients at once, and a 64 MiB
// statement and row, through the mirror to real sandboxes.

// openSessions is how many client sessions m serves now.
func (m *Mirror) openSessions() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}

// raiseFileLimit makes room for n more open files in this process (the
// mirror's three sockets a client), raising the hard limit where it may.
func raiseFileLimit(t *testing.T, n uint64) {
	t.Helper()
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		t.Fatal(err)
	}
	if l.Cur >= n {
		return
	}
	want := l
	want.Cur = n
	want.Max = max(l.Max, n)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
		t.Fatalf("the test needs %d open files and may have %d (hard limit %d): %v; raise it (ulimit -n %d) or run as root", n, l.Cur, l.Max, err, n)
	}
}

func setGlobals(t *testing.T, dsns []string, sets ...string) {
	t.Helper()
	for _, dsn := range dsns {
		db := open(t, dsn)
		for _, s := range sets {
			if _, err := db.Exec("SET GLOBAL " + s); err != nil {
				t.Fatalf("SET GLOBAL %s: %v", s, err)
			}
		}
	}
}

// TestMirrorFiveThousandClients holds 5,000 clients of mysqlslap at once
// through the mirror, each in a read that waits on the control for the
// test's table lock until all 5,000 are open: every one is served with
// the control's answer, another client is answered meanwhile, and every
// session, and its connections, is gone after.
func TestMirrorFiveThousandClients(t *testing.T) {
	slap, err := exec.LookPath("mariadb-slap")
	if err != nil {
		if slap, err = exec.LookPath("mysqlslap"); err != nil {
			t.Fatal("mysqlslap is not installed: run 'make test', which installs mariadb-client")
		}
	}
	const clients = 5000
	raiseFileLimit(t, 3*clients+1000)
	p := newPair(t)
	setGlobals(t, []string{dsnOf(p.ctl), dsnOf(p.cand)}, fmt.Sprintf("max_connections = %d", clients+500))
	ctlDB := pinned(t, dsnOf(p.ctl))
	base := sessionsOn(t, ctlDB)
	before := p.m.Summary()

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	// The reads wait for the table until every client is in: however
	// slowly 5,000 connect on a loaded machine, all are open at once.
	gateDB := open(t, dsnOf(p.ctl))
	gate, err := gateDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gate.ExecContext(ctx, "LOCK TABLES sbtest1 WRITE"); err != nil {
		t.Fatal(err)
	}
	unlocked := false
	unlock := func() {
		if !unlocked {
			unlocked = true
			if _, err := gate.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
				t.Errorf("UNLOCK TABLES: %v", err)
			}
			gate.Close()
			gateDB.Close() // its session is not the mirror's to close
		}
	}
	defer unlock()
	cmd := exec.CommandContext(ctx, slap, "-h127.0.0.1", "-P"+p.port, "-u"+p.ctl.User, "--create-schema="+p.ctl.Database,
		"--query=SELECT COUNT(*) FROM sbtest1", "--concurrency="+strconv.Itoa(clients), "--iterations=1", "--number-of-queries="+strconv.Itoa(clients))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	peak, answered := 0, false
	other := pinned(t, p.throughDSN())
	for peak < clients {
		select {
		case err := <-done:
			t.Fatalf("mysqlslap ended with %d sessions open at the most, want %d: %v\n%s", peak, clients, err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		peak = max(peak, p.m.openSessions())
		if !answered && peak >= clients/2 {
			// Another client is served while thousands are open.
			var one int
			qctx, qcancel := context.WithTimeout(ctx, 10*time.Second)
			err := other.QueryRowContext(qctx, "SELECT 1").Scan(&one)
			qcancel()
			if err != nil || one != 1 {
				t.Fatalf("another client with %d sessions open: got %d, %v", p.m.openSessions(), one, err)
			}
			answered = true
		}
	}
	unlock()
	select {
	case err := <-done:
		if err != nil || !slapAvg.MatchString(out.String()) {
			t.Fatalf("mysqlslap with %d clients: %v\n%s", clients, err, out.String())
		}
	case <-ctx.Done():
		t.Fatalf("mysqlslap did not end: %s", out.String())
	}
	s := p.m.Summary()
	if got := s.Sessions - before.Sessions; got < clients {
		t.Errorf("served %d sessions, want %d", got, clients)
	}
	waitFor(t, 30*time.Second, "every session closed", func() bool { return p.m.openSessions() <= 1 })
	waitFor(t, 30*time.Second, "the control's sessions closed", func() bool { return sessionsOn(t, ctlDB) <= base+1 })
}

// TestMirrorBigStatementAndRow sends a 64 MiB statement and reads a
// 64 MiB row through the mirror: the client gets the control's answer,
// the candidate's is compared, and a statement over the control's
// max_allowed_packet fails as it does directly.
func TestMirrorBigStatementAndRow(t *testing.T) {
	p := newPair(t)
	setGlobals(t, []string{dsnOf(p.ctl), dsnOf(p.cand)}, "max_allowed_packet = 256 * 1024 * 1024")
	db := pinned(t, p.throughDSN()+"&maxAllowedPacket=0")
	const size = 64 << 20
	var n int64
	if err := db.QueryRow("SELECT LENGTH('" + strings.Repeat("x", size) + "')").Scan(&n); err != nil || n != size {
		t.Fatalf("a 64 MiB statement through the mirror: got %d, %v, want %d", n, err, size)
	}
	var row sql.RawBytes
	rows, err := db.Query(fmt.Sprintf("SELECT REPEAT('y', %d)", size))
	if err != nil {
		t.Fatalf("a 64 MiB row through the mirror: %v", err)
	}
	for rows.Next() {
		if err := rows.Scan(&row); err != nil {
			t.Fatal(err)
		}
		if len(row) != size || row[0] != 'y' || row[size-1] != 'y' {
			t.Fatalf("a 64 MiB row through the mirror: got %d bytes", len(row))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	waitFor(t, 30*time.Second, "both compared", func() bool {
		s := p.m.Summary()
		return s.Compared >= 2 && s.Compared+s.Dropped >= s.Mirrored
	})
	if s := p.m.Summary(); s.Differing != 0 {
		t.Errorf("%d differing, want none", s.Differing)
	}
	// Over the control's max_allowed_packet (the client lets it go): the
	// session fails as it does directly, and other sessions go on.
	setGlobals(t, []string{dsnOf(p.ctl)}, "max_allowed_packet = 16 * 1024 * 1024")
	tooBig := "SELECT LENGTH('" + strings.Repeat("x", 20<<20) + "')"
	direct := pinned(t, dsnOf(p.ctl)+"?maxAllowedPacket=268435456").QueryRow(tooBig).Scan(&n)
	through := pinned(t, p.throughDSN()+"&maxAllowedPacket=268435456").QueryRow(tooBig).Scan(&n)
	// The control drops the connection (directly, the client's write is
	// reset); through the mirror the session ends too.
	if direct == nil || through == nil {
		t.Errorf("a 20 MiB statement with the control's max_allowed_packet at 16 MiB: got %v through the mirror, %v directly; want both to fail", through, direct)
	}
	var one int
	if err := pinned(t, p.throughDSN()).QueryRow("SELECT 1").Scan(&one); err != nil {
		t.Errorf("another session after the refused statement: %v", err)
	}
}
