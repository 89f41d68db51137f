package mirror

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/sandbox"
)

// The faults of issue #46, each against real sandboxes: a stalled
// candidate, the control killed, clients that leave mid-result or break
// the protocol, and mysqlslap, the real client. The candidate killed
// mid-run is TestMirror's last case.

// throughDSN is the DSN of the control's account through the mirror.
func (p *pair) throughDSN() string {
	return fmt.Sprintf("%s@tcp(127.0.0.1:%s)/%s?timeout=5s", p.ctl.User, p.port, p.ctl.Database)
}

// pinned is a connection pool of one connection, so that its statements
// run on one session.
func pinned(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db := open(t, dsn)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	return db
}

// sessionsOn counts the sessions of db's account on db's server, db's
// own left out: the mirror's control connections, and any the test
// opened directly.
func sessionsOn(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1)").Scan(&n); err != nil {
		t.Fatalf("count the sessions: %v", err)
	}
	return n
}

// timed runs f and returns how long it took.
func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

func TestMirrorCandidateStalled(t *testing.T) {
	p := newPair(t)
	// A small queue, so that the stall fills it at once; the timeout well
	// above the stall, so that the candidate is waited for, not lost.
	m := startMirror(t, Options{Listen: "127.0.0.1:0", Control: p.ctlT, Candidates: []Candidate{{Name: "cand", Target: p.candT}}, Queue: 8, Timeout: 30 * time.Second})
	_, port, _ := net.SplitHostPort(m.Addr())
	dsn := fmt.Sprintf("%s@tcp(127.0.0.1:%s)/%s?timeout=5s", p.ctl.User, port, p.ctl.Database)
	ctlDB := pinned(t, dsnOf(p.ctl))
	base := sessionsOn(t, ctlDB)

	cand := pinned(t, dsnOf(p.cand))
	lock, err := pinned(t, dsnOf(p.cand)).Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.ExecContext(t.Context(), "LOCK TABLES sbtest1 WRITE"); err != nil {
		t.Fatalf("lock the candidate's table: %v", err)
	}
	locked := true
	unlock := func() {
		if locked {
			locked = false
			if _, err := lock.ExecContext(context.Background(), "UNLOCK TABLES"); err != nil {
				t.Errorf("unlock the candidate's table: %v", err)
			}
		}
	}
	defer unlock()

	client := pinned(t, dsn)
	var c string
	if err := client.QueryRow("SELECT c FROM sbtest1 WHERE id = 1").Scan(&c); err != nil {
		t.Fatalf("the first read through the mirror: %v", err)
	}
	waitFor(t, 5*time.Second, "the twin waiting on the candidate's lock", func() bool {
		var n int
		err := cand.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE LIKE 'Waiting for table%lock%'").Scan(&n)
		return err == nil && n > 0
	})

	// For stallFor the candidate stays locked: each statement of the
	// client, and each new session, must take far less.
	const stallFor, bound = 3 * time.Second, 500 * time.Millisecond
	before := m.Summary()
	var n int
	var worst time.Duration
	for start := time.Now(); time.Since(start) < stallFor; n++ {
		id := n%1000 + 1
		d := timed(func() {
			if err := client.QueryRow("SELECT c FROM sbtest1 WHERE id = " + strconv.Itoa(id)).Scan(&c); err != nil {
				t.Fatalf("read %d through the mirror: %v", n, err)
			}
		})
		if n%50 == 0 {
			// A new session while the candidate is stalled.
			d += timed(func() {
				s := open(t, dsn)
				var one int
				if err := s.QueryRow("SELECT 1").Scan(&one); err != nil {
					t.Fatalf("a new session through the mirror: %v", err)
				}
				s.Close()
			})
		}
		worst = max(worst, d)
	}
	t.Logf("with the candidate stalled for %s: %d reads, the slowest %s", stallFor, n, worst)
	if worst > bound {
		t.Errorf("with the candidate stalled: got a statement of %s, want each under %s", worst, bound)
	}
	after := m.Summary()
	if got, want := after.Dropped-before.Dropped, int64(n-9); got < want {
		t.Errorf("got %d reads dropped of %d, want at least %d (the queue holds 8, the twin one)", got, n, want)
	}
	if cl := classOf(after, pointSelect); cl == nil || cl.Candidates[0].Dropped == 0 {
		t.Errorf("got no drops counted in the point select's class: %+v", cl)
	}

	// A session that ends while its twin waits gives back its control
	// connection at once: a stalled candidate must not hold the control's
	// connections.
	client.Close()
	waitFor(t, 3*time.Second, "the control's sessions back to those before the client", func() bool {
		return sessionsOn(t, ctlDB) <= base
	})

	unlock()
	client2 := pinned(t, dsn)
	mark := m.Summary().Compared
	waitFor(t, 10*time.Second, "reads compared again once the candidate is free", func() bool {
		client2.QueryRow("SELECT c FROM sbtest1 WHERE id = 3").Scan(&c)
		return m.Summary().Compared > mark+1
	})
	if s := m.Summary(); s.Candidates[0].Lost != 0 || s.Differing != 0 {
		t.Errorf("after the stall: got the candidate lost %d times and %d differing, want 0 and 0", s.Candidates[0].Lost, s.Differing)
	}
}

func TestMirrorControlKilled(t *testing.T) {
	p := newPair(t)
	ctlDB := pinned(t, dsnOf(p.ctl))
	idleThrough, idleDirect := pinned(t, p.throughDSN()), pinned(t, dsnOf(p.ctl)+"?timeout=5s")
	for _, db := range []*sql.DB{idleThrough, idleDirect} {
		if err := db.Ping(); err != nil {
			t.Fatal(err)
		}
	}
	// A statement in flight through the mirror and one directly, when the
	// control dies.
	type result struct {
		err error
		at  time.Time
	}
	busy := func(dsn string) chan result {
		db := pinned(t, dsn)
		if err := db.Ping(); err != nil {
			t.Fatal(err)
		}
		ch := make(chan result, 1)
		go func() {
			_, err := db.Exec("SELECT SLEEP(20)")
			ch <- result{err, time.Now()}
		}()
		return ch
	}
	busyThrough, busyDirect := busy(p.throughDSN()), busy(dsnOf(p.ctl)+"?timeout=5s")
	waitFor(t, 5*time.Second, "both sleeps running on the control", func() bool {
		var n int
		err := ctlDB.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(20)'").Scan(&n)
		return err == nil && n == 2
	})
	killed := time.Now()
	if err := sandbox.Kill(t.Context(), p.ctl.Home, p.ctl.Name); err != nil {
		t.Fatalf("kill the control: %v", err)
	}
	const bound = 5 * time.Second
	get := func(ch chan result, what string) error {
		select {
		case r := <-ch:
			if r.err == nil {
				t.Fatalf("%s: got no error with the control killed", what)
			}
			if d := r.at.Sub(killed); d > bound {
				t.Errorf("%s: got its error %s after the kill, want under %s", what, d, bound)
			}
			return r.err
		case <-time.After(bound):
			t.Fatalf("%s: no answer within %s of the control's kill", what, bound)
		}
		return nil
	}
	through, direct := get(busyThrough, "the statement through the mirror"), get(busyDirect, "the statement sent directly")
	if !errors.Is(through, mysql.ErrInvalidConn) || through.Error() != direct.Error() {
		t.Errorf("in flight: got %v through the mirror, want the error seen directly, %v", through, direct)
	}
	// An idle session's next statement fails as it does directly.
	var one int
	errThrough, errDirect := idleThrough.QueryRow("SELECT 1").Scan(&one), idleDirect.QueryRow("SELECT 1").Scan(&one)
	if errThrough == nil || errDirect == nil {
		t.Errorf("idle sessions after the kill: got %v through the mirror, %v directly, want errors", errThrough, errDirect)
	}
	// A new session through the mirror is refused at once, with an error
	// that names the control.
	var err error
	d := timed(func() { err = open(t, p.throughDSN()).Ping() })
	var me *mysql.MySQLError
	if !errors.As(err, &me) || !strings.Contains(me.Message, "control") || d > bound {
		t.Errorf("a new session with the control down: got %v after %s, want the server's error naming the control, under %s", err, d, bound)
	}

	if _, err := sandbox.Start(t.Context(), p.ctl.Home, p.ctl.Name); err != nil {
		t.Fatalf("start the control again: %v", err)
	}
	before := p.m.Summary()
	out := p.mustSysbench(t, 1, "--db-ps-mode=disable")
	waitFor(t, 5*time.Second, "reads compared after the control came back", func() bool {
		return p.m.Summary().Compared > before.Compared+10
	})
	if s := p.m.Summary(); s.Differing != 0 {
		t.Errorf("after the control came back: got %d differing, want 0\n%s", s.Differing, out)
	}
}

func TestMirrorClientBreaks(t *testing.T) {
	p := newPair(t)
	ctlDB := pinned(t, dsnOf(p.ctl))
	other := pinned(t, p.throughDSN())
	var one int
	if err := other.QueryRow("SELECT 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
	base := sessionsOn(t, ctlDB)
	// stillServed checks the other session and that the broken one's
	// control connection is gone.
	stillServed := func(t *testing.T) {
		t.Helper()
		waitFor(t, 5*time.Second, "the broken session's control connection closed", func() bool {
			return sessionsOn(t, ctlDB) <= base
		})
		var n int
		if err := other.QueryRow("SELECT COUNT(*) FROM sbtest1").Scan(&n); err != nil || n != 1000 {
			t.Errorf("the other session: got %d, %v, want 1000 rows", n, err)
		}
	}
	t.Run("a client that leaves mid-result", func(t *testing.T) {
		nc := rawLogin(t, p.m.Addr(), p.ctl.User)
		if got := sessionsOn(t, ctlDB); got != base+1 {
			t.Fatalf("got %d control sessions with the raw client, want %d", got, base+1)
		}
		// About 30 MB: more than the sockets between hold.
		q := "SELECT id, REPEAT(c, 250) FROM " + p.ctl.Database + ".sbtest1"
		nc.Write(append([]byte{byte(len(q) + 1), 0, 0, 0, 0x03}, q...))
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(nc, make([]byte, 256<<10)); err != nil {
			t.Fatalf("read the first 256 KiB of the result: %v", err)
		}
		nc.Close()
		stillServed(t)
	})
	cases := []struct {
		name string
		send []byte
	}{
		{"a packet out of sequence", []byte{9, 0, 0, 3, 0x03, 'S', 'E', 'L', 'E', 'C', 'T', ' ', '1'}},
		{"an empty packet", []byte{0, 0, 0, 0}},
		{"a header, then silence and a close", []byte{100, 0, 0, 0, 0x03, 'S'}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nc := rawLogin(t, p.m.Addr(), p.ctl.User)
			nc.Write(tc.send)
			if tc.name == "a header, then silence and a close" {
				nc.Close()
			} else {
				nc.SetReadDeadline(time.Now().Add(5 * time.Second))
				if n, err := nc.Read(make([]byte, 64)); err != io.EOF {
					t.Errorf("got %d bytes, %v, want the session closed (EOF)", n, err)
				}
			}
			stillServed(t)
		})
	}
	t.Run("a handshake response too short", func(t *testing.T) {
		nc, err := net.DialTimeout("tcp", p.m.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		h := make([]byte, 4)
		if _, err := io.ReadFull(nc, h); err != nil {
			t.Fatal(err)
		}
		io.ReadFull(nc, make([]byte, int(h[0])|int(h[1])<<8|int(h[2])<<16))
		nc.Write([]byte{3, 0, 0, 1, 1, 2, 3})
		b, _ := io.ReadAll(nc)
		if len(b) < 5 || b[4] != 0xff {
			t.Errorf("got %q, want an ERR packet and the connection closed", b)
		}
		stillServed(t)
	})
}

var slapAvg = regexp.MustCompile(`Average number of seconds to run all queries: [0-9.]+ seconds`)

func TestMirrorMysqlslap(t *testing.T) {
	slap, err := exec.LookPath("mariadb-slap")
	if err != nil {
		if slap, err = exec.LookPath("mysqlslap"); err != nil {
			t.Skip("mysqlslap is not installed: apt-get install mariadb-client (or run 'make test', which installs it)")
		}
	}
	p := newPair(t)
	before := p.m.Summary()
	const concurrency, iterations, queries = 4, 2, 400
	out, err := exec.Command(slap, "-h127.0.0.1", "-P"+p.port, "-u"+p.ctl.User, "--create-schema="+p.ctl.Database,
		"--query=SELECT c FROM sbtest1 WHERE id = 17", "--concurrency="+strconv.Itoa(concurrency),
		"--iterations="+strconv.Itoa(iterations), "--number-of-queries="+strconv.Itoa(queries)).CombinedOutput()
	if err != nil || !slapAvg.Match(out) {
		t.Fatalf("mysqlslap through the mirror: %v\n%s", err, out)
	}
	// mysqlslap runs queries in all over each iteration's sessions. A
	// statement is counted once its reply is sent, and compared later.
	var s *Summary
	var cl *ClassSummary
	deadline := time.Now().Add(5 * time.Second)
	for {
		s = p.m.Summary()
		cl = classOf(s, pointSelect)
		if cl != nil && cl.Through >= iterations*queries && s.Compared+s.Dropped >= s.Mirrored {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("got class %+v, want the point select through %d times at least, each compared or dropped\n%s", cl, iterations*queries, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := s.Through - before.Through; got < iterations*queries {
		t.Errorf("got %d statements through, want at least %d", got, iterations*queries)
	}
	if s.Sessions-before.Sessions < concurrency*iterations {
		t.Errorf("got %d sessions, want at least %d", s.Sessions-before.Sessions, concurrency*iterations)
	}
	// --create-schema names the table's own database: mysqlslap must
	// have left it as it was (it drops only a schema it created).
	var rows int
	if err := open(t, dsnOf(p.ctl)).QueryRow("SELECT COUNT(*) FROM sbtest1").Scan(&rows); err != nil || rows != 1000 {
		t.Fatalf("the control's table after mysqlslap: got %d rows, %v, want 1000", rows, err)
	}
	if cl.Candidates[0].Compared == 0 || s.Differing != 0 {
		t.Errorf("got %d compared, %d differing, want some compared and none differing", cl.Candidates[0].Compared, s.Differing)
	}
}
