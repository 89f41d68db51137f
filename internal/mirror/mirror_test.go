package mirror

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/dbcopy"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// pair is a control and a candidate sandbox holding the same sysbench
// table, and a mirror between them.
type pair struct {
	ctl, cand   *sandbox.Instance
	ctlT, candT *target.Target
	m           *Mirror
	port        string
}

func mustTarget(t *testing.T, u string) *target.Target {
	t.Helper()
	tg, err := target.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func dsnOf(inst *sandbox.Instance) string {
	return fmt.Sprintf("%s@tcp(127.0.0.1:%d)/%s", inst.User, inst.Port, inst.Database)
}

// newPair starts both sandboxes, prepares sysbench's table on the
// control with sysbench itself, copies it to the candidate with dbcopy,
// and starts a mirror between them.
func newPair(t *testing.T) *pair {
	t.Helper()
	if _, err := exec.LookPath("sysbench"); err != nil {
		t.Fatal("sysbench is not installed: run 'make test', which installs Debian's sysbench")
	}
	insts := sandboxtest.StartAll(t, nil, nil)
	p := &pair{ctl: insts[0], cand: insts[1], ctlT: mustTarget(t, insts[0].URL()), candT: mustTarget(t, insts[1].URL())}
	out, err := exec.Command("sysbench", append(sbConn(p.ctl.Port, p.ctl), "prepare")...).CombinedOutput()
	if err != nil {
		t.Fatalf("sysbench prepare: %v\n%s", err, out)
	}
	if _, err := dbcopy.Run(t.Context(), p.ctlT, p.candT, dbcopy.Options{AllowWrite: true, Replace: true, NoVerify: true, NoAnalyze: true, Threads: 2}); err != nil {
		t.Fatalf("copy to the candidate: %v", err)
	}
	p.m = startMirror(t, Options{Listen: "127.0.0.1:0", Control: p.ctlT, Candidates: []Candidate{{Name: "cand", Target: p.candT}}})
	_, p.port, _ = net.SplitHostPort(p.m.Addr())
	return p
}

// startMirror listens and serves until the test ends.
func startMirror(t *testing.T, opts Options) *Mirror {
	t.Helper()
	return startMirrorWith(t, opts, nil)
}

// startMirrorWith is startMirror with set, when not nil, run on the
// mirror between Listen and Serve.
func startMirrorWith(t *testing.T, opts Options, set func(*Mirror)) *Mirror {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m, err := Listen(ctx, opts)
	if err != nil {
		cancel()
		t.Fatalf("listen: %v", err)
	}
	if set != nil {
		set(m)
	}
	done := make(chan error, 1)
	go func() { done <- m.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("serve did not return within 10s of its context's end")
		}
	})
	return m
}

// sbConn are sysbench's options for inst's table on port.
func sbConn(port int, inst *sandbox.Instance) []string {
	return []string{"oltp_read_only", "--mysql-host=127.0.0.1", fmt.Sprintf("--mysql-port=%d", port), "--mysql-user=" + inst.User,
		"--mysql-db=" + inst.Database, "--tables=1", "--table-size=1000"}
}

var sbErrors = regexp.MustCompile(`errors:\s+(\d+)`)

// sysbench runs oltp_read_only through the mirror and returns its
// output, with an error unless it reports 0 errors.
func (p *pair) sysbench(seconds int, extra ...string) (string, error) {
	return p.sysbenchTest("oltp_read_only", seconds, extra...)
}

// sysbenchTest runs sysbench's test through the mirror, as sysbench does
// oltp_read_only; extra options come after the defaults, and win.
func (p *pair) sysbenchTest(test string, seconds int, extra ...string) (string, error) {
	args := []string{test, "--mysql-host=127.0.0.1", "--mysql-port=" + p.port, "--mysql-user=" + p.ctl.User,
		"--mysql-db=" + p.ctl.Database, "--tables=1", "--table-size=1000", "--threads=4", fmt.Sprintf("--time=%d", seconds), "--report-interval=0"}
	args = append(append(args, extra...), "run")
	out, err := exec.Command("sysbench", args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("sysbench through the mirror: %v\n%s", err, out)
	}
	if m := sbErrors.FindSubmatch(out); m == nil || string(m[1]) != "0" {
		return string(out), fmt.Errorf("sysbench through the mirror: got errors %q, want 0\n%s", m, out)
	}
	return string(out), nil
}

func (p *pair) mustSysbench(t *testing.T, seconds int, extra ...string) string {
	t.Helper()
	out, err := p.sysbench(seconds, extra...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// readRows runs q on db and reads its rows to the end; it returns how
// many there were.
func readRows(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func classOf(s *Summary, prefix string) *ClassSummary {
	for i := range s.Classes {
		if strings.HasPrefix(s.Classes[i].Statement, prefix) {
			return &s.Classes[i]
		}
	}
	return nil
}

func TestMirror(t *testing.T) {
	p := newPair(t)
	t.Run("mariadb client sees what it sees directly", func(t *testing.T) {
		q := "SELECT id, k, c FROM sbtest1 WHERE id < 4 ORDER BY id; SHOW WARNINGS; SELECT 1/0, @@autocommit; SELECT nosuch FROM sbtest1"
		run := func(port string) string {
			cmd := exec.Command("mariadb", "-h", "127.0.0.1", "-P", port, "-u", p.ctl.User, "--skip-ssl", "--force", p.ctl.Database, "-e", q)
			out, _ := cmd.CombinedOutput()
			return string(out)
		}
		direct, through := run(fmt.Sprint(p.ctl.Port)), run(p.port)
		if !strings.Contains(direct, "1054") {
			t.Fatalf("direct output lacks the unknown column's error 1054: %s", direct)
		}
		if through != direct {
			t.Errorf("through the mirror got\n%s\nwant, as directly,\n%s", through, direct)
		}
	})
	t.Run("sysbench oltp_read_only: no errors, no differences", func(t *testing.T) {
		before := p.m.Summary()
		out := p.mustSysbench(t, 2, "--db-ps-mode=disable")
		// The last compared statements may still be on the twins' queues.
		var s *Summary
		waitFor(t, 5*time.Second, "every mirrored read compared", func() bool {
			s = p.m.Summary()
			return s.Compared+s.Dropped >= s.Mirrored
		})
		if s.Compared-before.Compared < 100 {
			t.Fatalf("got %d statements compared, want at least 100\n%s", s.Compared-before.Compared, out)
		}
		if s.Differing != 0 {
			var b bytes.Buffer
			WriteText(&b, s)
			t.Errorf("got %d differing, want 0\n%s", s.Differing, b.String())
		}
		if cl := classOf(s, pointSelect); cl == nil || cl.Candidates[0].Compared == 0 {
			t.Errorf("got no point-select class compared in %+v", s.Classes)
		}
	})
	t.Run("a planted difference is named by class with a sample", func(t *testing.T) {
		cand := open(t, dsnOf(p.cand))
		var orig string
		if err := cand.QueryRow("SELECT c FROM sbtest1 WHERE id = 7").Scan(&orig); err != nil {
			t.Fatal(err)
		}
		if _, err := cand.Exec("UPDATE sbtest1 SET c = 'planted' WHERE id = 7"); err != nil {
			t.Fatal(err)
		}
		defer cand.Exec("UPDATE sbtest1 SET c = ? WHERE id = 7", orig)
		through := open(t, fmt.Sprintf("%s@tcp(127.0.0.1:%s)/%s", p.ctl.User, p.port, p.ctl.Database))
		var want string
		if err := through.QueryRow("SELECT c FROM sbtest1 WHERE id = 7").Scan(&want); err != nil {
			t.Fatal(err)
		}
		var cl *ClassSummary
		waitFor(t, 5*time.Second, "the difference counted", func() bool {
			cl = classOf(p.m.Summary(), pointSelect)
			return cl != nil && cl.Candidates[0].Differing > 0
		})
		sm := cl.Candidates[0].Sample
		if sm == nil || sm.Kind != "rows" || strings.Contains(sm.Statement, "7") ||
			len(sm.Candidate.FirstRows) != 1 || sm.Candidate.FirstRows[0][0] != "planted" ||
			len(sm.Control.FirstRows) != 1 || !strings.HasPrefix(want, strings.TrimSuffix(sm.Control.FirstRows[0][0], "...")) {
			t.Errorf("got sample %+v, want rows differing, the statement redacted, 'planted' on the candidate and %q on the control", sm, want)
		}
		var b bytes.Buffer
		WriteText(&b, p.m.Summary())
		if !strings.Contains(b.String(), "differs on cand: rows") || !strings.Contains(b.String(), "(planted)") {
			t.Errorf("summary does not name the difference:\n%s", b.String())
		}
	})
	t.Run("a range read's sample names where the rows part", func(t *testing.T) {
		cand := open(t, dsnOf(p.cand))
		for _, q := range []string{"UPDATE sbtest1 SET c = 'planted' WHERE id = 57", "INSERT INTO sbtest1 (id, k, c, pad) VALUES (1001, 0, 'extra', '')"} {
			if _, err := cand.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		var orig string
		ctl := open(t, dsnOf(p.ctl))
		if err := ctl.QueryRow("SELECT c FROM sbtest1 WHERE id = 57").Scan(&orig); err != nil {
			t.Fatal(err)
		}
		defer cand.Exec("UPDATE sbtest1 SET c = ? WHERE id = 57", orig)
		defer cand.Exec("DELETE FROM sbtest1 WHERE id = 1001")
		through := open(t, fmt.Sprintf("%s@tcp(127.0.0.1:%s)/%s", p.ctl.User, p.port, p.ctl.Database))
		if n := readRows(t, through, "SELECT id, c FROM sbtest1 WHERE id BETWEEN 1 AND 100"); n != 100 {
			t.Fatalf("range read: got %d rows, want 100", n)
		}
		if n := readRows(t, through, "SELECT id, c FROM sbtest1 WHERE id BETWEEN 991 AND 1010 ORDER BY id"); n != 10 {
			t.Fatalf("range read past the end: got %d rows, want 10", n)
		}
		const middle, past = "select `id` , `c` from `sbtest1` where `id` between ? and ?", "select `id` , `c` from `sbtest1` where `id` between ? and ? order by `id`"
		var s *Summary
		waitFor(t, 5*time.Second, "both differences counted", func() bool {
			s = p.m.Summary()
			a, b := classOf(s, middle), classOf(s, past)
			return a != nil && b != nil && a.Candidates[0].Sample != nil && b.Candidates[0].Sample != nil
		})
		var sm *Sample
		for _, cl := range s.Classes {
			if cl.Statement == middle {
				sm = cl.Candidates[0].Sample
			}
		}
		if d := sm.First; sm.Kind != "rows" || d == nil || d.Control == nil || d.Candidate == nil || d.Control.Row != 57 || d.Candidate.Row != 57 ||
			fmt.Sprint(d.Columns) != "[c]" || len(d.Control.Values) != 2 || !strings.HasPrefix(orig, strings.TrimSuffix(d.Control.Values[1], "...")) ||
			fmt.Sprint(d.Candidate.Values) != "[57 planted]" || fmt.Sprint(sm.Control.FirstRows) != fmt.Sprint(sm.Candidate.FirstRows) {
			t.Errorf("middle row: got %+v, first difference %+v, want row 57 and column c, 'planted' on the candidate and %q on the control, the first rows alike", sm, sm.First, orig)
		}
		sm = classOf(s, past).Candidates[0].Sample
		if d := sm.First; sm.Kind != "row count" || d == nil || d.Control != nil || d.Candidate == nil || d.ExtraOn != "candidate" || d.Extra != 1 ||
			d.Candidate.Row != 11 || fmt.Sprint(d.Candidate.Values) != "[1001 extra]" {
			t.Errorf("extra row: got %+v, first difference %+v, want a row count, 1 more row on the candidate, row 11 (1001, extra)", sm, sm.First)
		}
		var b bytes.Buffer
		WriteText(&b, s)
		for _, want := range []string{
			"  first differs at row 57, column c\n    control:   (57, ",
			"\n    candidate: (57, planted)\n",
			"  first differs at row 11: 1 more row on the candidate\n    candidate: (1001, extra)\n",
		} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("summary: got\n%s\nwant %q in it", b.String(), want)
			}
		}
	})
	t.Run("a malformed packet closes its session only", func(t *testing.T) {
		other := open(t, fmt.Sprintf("%s@tcp(127.0.0.1:%s)/%s", p.ctl.User, p.port, p.ctl.Database))
		other.SetMaxOpenConns(1)
		if err := other.Ping(); err != nil {
			t.Fatal(err)
		}
		nc := rawLogin(t, p.m.Addr(), p.ctl.User)
		// A COM_QUERY whose header says sequence 3.
		nc.Write([]byte{9, 0, 0, 3, 0x03, 'S', 'E', 'L', 'E', 'C', 'T', ' ', '1'})
		nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		if n, err := nc.Read(make([]byte, 64)); err != io.EOF {
			t.Errorf("after a packet out of sequence: got %d bytes, %v, want the session closed (EOF)", n, err)
		}
		var one int
		if err := other.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
			t.Errorf("another session after it: got %d, %v, want 1", one, err)
		}
	})
	t.Run("the candidate killed mid-run: sysbench sees no errors", func(t *testing.T) {
		var sbErr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, sbErr = p.sysbench(3, "--db-ps-mode=disable")
		}()
		start := p.m.Summary().Compared
		waitFor(t, 5*time.Second, "statements compared before the kill", func() bool { return p.m.Summary().Compared > start+50 })
		if err := sandbox.Kill(t.Context(), p.cand.Home, p.cand.Name); err != nil {
			t.Fatalf("kill the candidate: %v", err)
		}
		waitFor(t, 5*time.Second, "the candidate said lost", func() bool { return p.m.Summary().Candidates[0].Lost > 0 })
		wg.Wait()
		if sbErr != nil {
			t.Fatal(sbErr)
		}
		if _, err := sandbox.Start(t.Context(), p.cand.Home, p.cand.Name); err != nil {
			t.Fatalf("start the candidate again: %v", err)
		}
		through := open(t, fmt.Sprintf("%s@tcp(127.0.0.1:%s)/%s", p.ctl.User, p.port, p.ctl.Database))
		through.SetMaxOpenConns(1)
		waitFor(t, 10*time.Second, "the candidate back", func() bool {
			through.Exec("SELECT 1")
			c := p.m.Summary().Candidates[0]
			return c.Back > 0 && !c.Down
		})
	})
}

// rawLogin logs in to the mirror by hand (an empty password) and returns
// the connection after its OK.
func rawLogin(t *testing.T, addr, user string) net.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	read := func() []byte {
		h := make([]byte, 4)
		if _, err := io.ReadFull(nc, h); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, int(h[0])|int(h[1])<<8|int(h[2])<<16)
		if _, err := io.ReadFull(nc, b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	read() // the greeting
	caps := uint32(wire.CapProtocol41 | wire.CapSecureConn | wire.CapPluginAuth | wire.CapLongPassword)
	resp := binary.LittleEndian.AppendUint32(nil, caps)
	resp = append(resp, 0, 0, 0, 1, 45)
	resp = append(resp, make([]byte, 23)...)
	resp = append(append(resp, user...), 0, 0)
	resp = append(resp, "mysql_native_password"...)
	resp = append(resp, 0)
	nc.Write(append([]byte{byte(len(resp)), 0, 0, 1}, resp...))
	if ok := read(); ok[0] != 0 {
		t.Fatalf("raw login: got %q, want OK", ok)
	}
	nc.SetDeadline(time.Time{})
	return nc
}

// pointSelect is the class of sysbench's point select, as fingerprinted.
const pointSelect = "select `c` from `sbtest1` where `id` = ?"
