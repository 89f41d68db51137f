package mirror

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/wire"
)

// Prepared statements through the mirror, against real sandboxes:
// sysbench's own prepared mode, go-sql-driver's prepare-execute-close per
// query, package wire's client for closes, resets and
// COM_RESET_CONNECTION, and a raw COM_CHANGE_USER.

// wireThrough is a connection of package wire to the mirror, as the
// control's account.
func (p *pair) wireThrough(t *testing.T) *wire.Conn {
	t.Helper()
	tg := mustTarget(t, fmt.Sprintf("mysql://%s@127.0.0.1:%s/%s", p.ctl.User, p.port, p.ctl.Database))
	c, err := client.DialWire(t.Context(), tg.Config(tg.Endpoints()[0], tg.DB), wire.Options{})
	if err != nil {
		t.Fatalf("connect to the mirror: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// preparedOn is the number of prepared statements on db's server.
func preparedOn(t *testing.T, db *sql.DB) int {
	t.Helper()
	var name string
	var n int
	if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'").Scan(&name, &n); err != nil {
		t.Fatalf("count the prepared statements: %v", err)
	}
	return n
}

// settled waits until the session has queued every statement a client
// has had the reply to and the twins have done with all they were given
// (each compared, or met the candidate down or its connection lost), and
// returns the summary then. It reads one candidate's figures, and leaves
// out the classes of session statements, which are not counted mirrored.
func settled(t *testing.T, m *Mirror) *Summary {
	t.Helper()
	var s *Summary
	waitFor(t, 10*time.Second, "every statement through queued, and compared", func() bool {
		s = m.Summary()
		for _, cl := range s.Classes {
			c := cl.Candidates[0]
			if c.Compared+c.Down+c.Lost < c.Mirrored {
				return false
			}
			if cl.Verb == "SET" || cl.Verb == "USE" {
				continue
			}
			n := c.Mirrored + c.Dropped
			for _, k := range cl.NotMirrored {
				n += k
			}
			if n < cl.Through {
				return false
			}
		}
		return true
	})
	return s
}

func summaryText(s *Summary) string {
	var b bytes.Buffer
	WriteText(&b, s)
	return b.String()
}

func TestMirrorPrepared(t *testing.T) {
	p := newPair(t)
	candDB := pinned(t, dsnOf(p.cand))
	t.Run("sysbench's prepared mode: reads compared, no differences", func(t *testing.T) {
		for _, tc := range []struct {
			test    string
			classes []string
		}{
			{"oltp_point_select", []string{pointSelect}},
			{"oltp_read_only", []string{pointSelect, "select sum ( `k` ) from `sbtest1` where `id` between ? and ?",
				"select distinct `c` from `sbtest1` where `id` between ? and ? order by `c`"}},
		} {
			t.Run(tc.test, func(t *testing.T) {
				before := settled(t, p.m)
				out, err := p.sysbenchTest(tc.test, 2, "--db-ps-mode=auto")
				if err != nil {
					t.Fatal(err)
				}
				s := settled(t, p.m)
				if got := s.Compared - before.Compared; got < 100 {
					t.Fatalf("got %d executions compared, want at least 100\n%s\n%s", got, out, summaryText(s))
				}
				if s.Differing != 0 {
					t.Errorf("got %d differing, want 0\n%s", s.Differing, summaryText(s))
				}
				for _, prefix := range tc.classes {
					cl, was := classOf(s, prefix), classOf(before, prefix)
					if cl == nil || (was != nil && cl.Candidates[0].Compared == was.Candidates[0].Compared) || was == nil && cl.Candidates[0].Compared == 0 {
						t.Errorf("class %q: got none compared in this run\n%s", prefix, summaryText(s))
					}
				}
				if n := s.Other[stmtUnknown]; n != 0 {
					t.Errorf("got %d executions of statements the mirror did not know, want 0", n)
				}
			})
		}
	})
	t.Run("a planted difference in a prepared read is found", func(t *testing.T) {
		var orig string
		if err := candDB.QueryRow("SELECT c FROM sbtest1 WHERE id = 7").Scan(&orig); err != nil {
			t.Fatal(err)
		}
		if _, err := candDB.Exec("UPDATE sbtest1 SET c = 'planted' WHERE id = 7"); err != nil {
			t.Fatal(err)
		}
		defer candDB.Exec("UPDATE sbtest1 SET c = ? WHERE id = 7", orig)
		// Ten ids: each point select reads id 7 one time in ten.
		if _, err := p.sysbenchTest("oltp_point_select", 1, "--db-ps-mode=auto", "--table-size=10"); err != nil {
			t.Fatal(err)
		}
		s := settled(t, p.m)
		cl := classOf(s, pointSelect)
		if cl == nil || cl.Candidates[0].Differing == 0 {
			t.Fatalf("got no difference in the point select's class\n%s", summaryText(s))
		}
		sm := cl.Candidates[0].Sample
		if sm == nil || sm.Kind != "rows" || len(sm.Candidate.FirstRows) != 1 || sm.Candidate.FirstRows[0][0] != "planted" ||
			len(sm.Control.FirstRows) != 1 || !strings.HasPrefix(orig, strings.TrimSuffix(sm.Control.FirstRows[0][0], "...")) {
			t.Errorf("got sample %+v, want rows differing, 'planted' on the candidate and %q on the control", sm, orig)
		}
		if s.Differing != cl.Candidates[0].Differing {
			t.Errorf("got %d differing in all, %d in the point select's class, want them all there\n%s", s.Differing, cl.Candidates[0].Differing, summaryText(s))
		}
	})
	t.Run("go-sql-driver's parameters of each type compare alike", func(t *testing.T) {
		// Without interpolateParams the driver prepares, executes and
		// closes each statement with arguments, and binds types each time.
		db := pinned(t, p.throughDSN())
		before := settled(t, p.m)
		const q = "SELECT ?, ? + 1, ? * 2, CONCAT(?, 'x'), ? IS NULL, HEX(?), ? + INTERVAL 1 DAY, c FROM sbtest1 WHERE id = ?"
		var got [8]sql.NullString
		when := time.Date(2024, 2, 29, 13, 14, 15, 120000, time.UTC)
		for i := range 20 {
			dest := []any{&got[0], &got[1], &got[2], &got[3], &got[4], &got[5], &got[6], &got[7]}
			if err := db.QueryRow(q, int64(-i), uint64(1)<<63, 0.25*float64(i), "héllo", nil, []byte{0, 0xff}, when, i+1).Scan(dest...); err != nil {
				t.Fatalf("execution %d through the mirror: %v", i, err)
			}
		}
		if got[0].String != "-19" || got[3].String != "héllox" || got[4].String != "1" || got[5].String != "00FF" {
			t.Errorf("through the mirror got %v, want -19, héllox, 1 and 00FF among them", got)
		}
		s := settled(t, p.m)
		cl := classWith(s, "`hex`")
		if cl == nil || cl.Candidates[0].Compared-compared(classWith(before, "`hex`")) < 20-cl.Candidates[0].Dropped {
			t.Fatalf("got class %+v, want its 20 executions compared (or dropped)\n%s", cl, summaryText(s))
		}
		if cl.Candidates[0].Differing != 0 || cl.Candidates[0].Compared == 0 {
			t.Errorf("got %d compared, %d differing, want some compared and none differing: %+v", cl.Candidates[0].Compared, cl.Candidates[0].Differing, cl.Candidates[0].Sample)
		}
		waitFor(t, 5*time.Second, "the candidate's statements closed", func() bool { return preparedOn(t, candDB) == 0 })
	})
	t.Run("closes and resets reach the twin", func(t *testing.T) {
		c := p.wireThrough(t)
		base := preparedOn(t, candDB)
		var stmts []*wire.Stmt
		for i := range 3 {
			st, err := c.Prepare(fmt.Sprintf("SELECT c FROM sbtest1 WHERE id = ? + %d", i))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Exec(1); err != nil {
				t.Fatal(err)
			}
			stmts = append(stmts, st)
		}
		waitFor(t, 5*time.Second, "three statements prepared on the candidate", func() bool { return preparedOn(t, candDB) == base+3 })
		if err := stmts[0].Reset(); err != nil {
			t.Errorf("COM_STMT_RESET through the mirror: %v", err)
		}
		stmts[1].Close()
		waitFor(t, 5*time.Second, "the closed statement closed on the candidate", func() bool { return preparedOn(t, candDB) == base+2 })
		if _, err := stmts[0].Exec(2); err != nil {
			t.Errorf("an execution after its reset: %v", err)
		}
		// COM_RESET_CONNECTION: the twin's statements go, and its session
		// state with them.
		if _, err := c.Query("SET time_zone = '+05:00'"); err != nil {
			t.Fatal(err)
		}
		if err := c.ResetConnection(); err != nil {
			t.Fatalf("COM_RESET_CONNECTION through the mirror: %v", err)
		}
		waitFor(t, 5*time.Second, "the candidate's statements dropped by the reset", func() bool { return preparedOn(t, candDB) == base })
		before := settled(t, p.m)
		if _, err := c.Query("SELECT @@session.time_zone"); err != nil {
			t.Fatal(err)
		}
		s := settled(t, p.m)
		cl := classOf(s, "select @@session")
		if cl == nil || cl.Candidates[0].Compared != 1 || s.Differing != before.Differing {
			t.Errorf("the time zone after the reset: got class %+v, %d differing (was %d), want it compared once, the same on both\n%s",
				cl, s.Differing, before.Differing, summaryText(s))
		}
	})
	t.Run("COM_CHANGE_USER is refused with a clear error; the session goes on", func(t *testing.T) {
		nc := rawLogin(t, p.m.Addr(), p.ctl.User)
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		cmd := append([]byte{wire.ComChangeUser}, p.ctl.User...)
		cmd = append(cmd, 0, 0)
		cmd = append(append(cmd, p.ctl.Database...), 0)
		nc.Write(append([]byte{byte(len(cmd)), 0, 0, 0}, cmd...))
		reply := readRaw(t, nc)
		if reply[0] != 0xff || binary.LittleEndian.Uint16(reply[1:]) != 1235 || !bytes.Contains(reply, []byte("COM_CHANGE_USER is not supported")) {
			t.Errorf("COM_CHANGE_USER: got %q, want ERR 1235 naming it", reply)
		}
		q := "SELECT 1"
		nc.Write(append([]byte{byte(len(q) + 1), 0, 0, 0, wire.ComQuery}, q...))
		if reply := readRaw(t, nc); reply[0] != 1 {
			t.Errorf("a query after it: got %q, want a result set of one column", reply)
		}
	})
	t.Run("an execution with a cursor is relayed, counted not mirrored", func(t *testing.T) {
		// The raw client has no CLIENT_DEPRECATE_EOF: the EOF after the
		// columns is the reply's end.
		nc := rawLogin(t, p.m.Addr(), p.ctl.User)
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		send := func(payload []byte) {
			nc.Write(append([]byte{byte(len(payload)), byte(len(payload) >> 8), 0, 0}, payload...))
		}
		q := "SELECT id FROM " + p.ctl.Database + ".sbtest1 WHERE id < 3 ORDER BY id"
		send(append([]byte{wire.ComStmtPrepare}, q...))
		ok := readRaw(t, nc)
		if ok[0] != 0 {
			t.Fatalf("prepare: got %q, want OK", ok)
		}
		readRaw(t, nc) // the column
		readRaw(t, nc) // EOF
		exec := append([]byte{wire.ComStmtExecute}, ok[1:5]...)
		send(append(exec, 1, 1, 0, 0, 0)) // CURSOR_TYPE_READ_ONLY
		for i, what := range []string{"the column count", "the column", "the EOF"} {
			if b := readRaw(t, nc); i == 2 && b[0] != 0xfe {
				t.Fatalf("execute: got %q for %s, want EOF", b, what)
			}
		}
		fetch := append([]byte{wire.ComStmtFetch}, ok[1:5]...)
		send(binary.LittleEndian.AppendUint32(fetch, 10))
		var rows int
		for b := readRaw(t, nc); b[0] != 0xfe; b = readRaw(t, nc) {
			rows++
		}
		if rows != 2 {
			t.Errorf("fetch: got %d rows, want 2", rows)
		}
		cl := classWith(p.m.Summary(), "where `id` < ? order by `id`")
		if cl == nil || cl.NotMirrored[stmtCursor] != 1 {
			t.Errorf("got class %+v, want one execution with a cursor counted not mirrored", cl)
		}
	})
	t.Run("types bound by an execution that is not mirrored serve the next", func(t *testing.T) {
		nc := rawLogin(t, p.m.Addr(), p.ctl.User)
		nc.SetDeadline(time.Now().Add(5 * time.Second))
		// cmd sends a command and reads the n packets of its reply,
		// returning the first.
		cmd := func(n int, payload ...byte) []byte {
			t.Helper()
			nc.Write(append([]byte{byte(len(payload)), byte(len(payload) >> 8), 0, 0}, payload...))
			first := readRaw(t, nc)
			if first[0] == 0xff {
				t.Fatalf("got %q", first)
			}
			for range n - 1 {
				readRaw(t, nc)
			}
			return first
		}
		query := func(q string) { t.Helper(); cmd(1, append([]byte{wire.ComQuery}, q...)...) }
		ok := cmd(5, append([]byte{wire.ComStmtPrepare}, "SELECT UPPER(?)"...)...)
		exec := func(bind bool, v string) {
			t.Helper()
			b := append([]byte{wire.ComStmtExecute}, ok[1:5]...)
			b = append(b, 0, 1, 0, 0, 0, 0) // no cursor, once, no NULLs
			if bind {
				b = append(b, 1, 0xfd, 0) // VAR_STRING
			} else {
				b = append(b, 0)
			}
			b = append(append(b, byte(len(v))), v...)
			cmd(5, b...)
		}
		// In a transaction that wrote, the first execution binds the types
		// and is not mirrored; the next, after it, binds none.
		query("BEGIN")
		query("UPDATE " + p.ctl.Database + ".sbtest1 SET k = k WHERE id = 1")
		exec(true, "abc")
		query("COMMIT")
		exec(false, "xyz")
		s := settled(t, p.m)
		cl := classWith(s, "select `upper`")
		if cl == nil || cl.NotMirrored[inWrittenTx] != 1 || cl.NotMirrored[stmtUnknown] != 0 || cl.Candidates[0].Compared != 1 || cl.Candidates[0].Differing != 0 {
			t.Errorf("got class %+v, want one execution in the transaction, the next compared, the same on both", cl)
		}
	})
	t.Run("an execution the control refuses is relayed as its error", func(t *testing.T) {
		db := pinned(t, p.throughDSN())
		_, err := db.Exec("SELECT c FROM nosuch WHERE id = ?", 1)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1146 {
			t.Errorf("got %v, want the control's error 1146", err)
		}
		var one int
		if err := db.QueryRow("SELECT ? + 0", 1).Scan(&one); err != nil || one != 1 {
			t.Errorf("the next execution: got %d, %v, want 1", one, err)
		}
	})
}

// TestMirrorPreparedStalled fills a twin's queue of one with a stalled
// candidate: the prepares dropped meanwhile are made good when their
// statements are next executed, and a dropped close is done once the
// twin moves on.
func TestMirrorPreparedStalled(t *testing.T) {
	p := newPair(t)
	m := startMirror(t, Options{Listen: "127.0.0.1:0", Control: p.ctlT, Candidates: []Candidate{{Name: "cand", Target: p.candT}}, Queue: 1, Timeout: 30 * time.Second})
	_, port, _ := net.SplitHostPort(m.Addr())
	sp := &pair{ctl: p.ctl, cand: p.cand, ctlT: p.ctlT, candT: p.candT, m: m, port: port}
	candDB := pinned(t, dsnOf(p.cand))
	base := preparedOn(t, candDB)
	c := sp.wireThrough(t)
	early, err := c.Prepare("SELECT c FROM sbtest1 WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := early.Exec(1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the statement prepared on the candidate", func() bool { return preparedOn(t, candDB) == base+1 })

	lock, err := pinned(t, dsnOf(p.cand)).Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.ExecContext(t.Context(), "LOCK TABLES sbtest1 WRITE"); err != nil {
		t.Fatalf("lock the candidate's table: %v", err)
	}
	// The twin waits on the first execution, the second fills its queue;
	// the close and the late prepare find it full.
	for i := range 2 {
		if _, err := early.Exec(2 + i); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 5*time.Second, "the twin waiting on the candidate's lock", func() bool {
		var n int
		err := candDB.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE LIKE 'Waiting for table%lock%'").Scan(&n)
		return err == nil && n > 0
	})
	early.Close()
	late, err := c.Prepare("SELECT k FROM sbtest1 WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.ExecContext(t.Context(), "UNLOCK TABLES"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the twin done with its queue", func() bool {
		cl := classOf(m.Summary(), pointSelect)
		return cl != nil && cl.Candidates[0].Compared >= 2
	})
	// The late statement's first execution: the twin prepares it then.
	if _, err := late.Exec(5); err != nil {
		t.Fatal(err)
	}
	s := settled(t, m)
	cl := classOf(s, "select `k` from `sbtest1` where `id` = ?")
	if cl == nil || cl.Candidates[0].Compared != 1 || cl.Candidates[0].Differing != 0 || cl.Candidates[0].Lost != 0 {
		t.Errorf("the statement whose prepare was dropped: got %+v, want its execution compared, the same on both\n%s", cl, summaryText(s))
	}
	// The early statement's close was dropped and done before the late
	// execution: only the late statement is left on the candidate.
	waitFor(t, 5*time.Second, "the dropped close done", func() bool { return preparedOn(t, candDB) == base+1 })
	late.Close()
	waitFor(t, 5*time.Second, "the late statement closed", func() bool { return preparedOn(t, candDB) == base })
}

// readRaw reads one packet's payload from a raw client connection.
func readRaw(t *testing.T, nc io.Reader) []byte {
	t.Helper()
	b, _ := readSeq(t, nc)
	return b
}

// classWith is the class whose statement holds part.
func classWith(s *Summary, part string) *ClassSummary {
	for i := range s.Classes {
		if strings.Contains(s.Classes[i].Statement, part) {
			return &s.Classes[i]
		}
	}
	return nil
}

func compared(cl *ClassSummary) int64 {
	if cl == nil {
		return 0
	}
	return cl.Candidates[0].Compared
}

func TestParseExecute(t *testing.T) {
	// A statement of three parameters: a LONGLONG, a NULL, a string.
	types := []byte{0x08, 0, 0xfd, 0, 0xfe, 0}
	vals := append(binary.LittleEndian.AppendUint64(nil, 42), 3, 'a', 'b', 'c')
	head := []byte{wire.ComStmtExecute, 1, 0, 0, 0, 0, 1, 0, 0, 0}
	pkt := func(parts ...[]byte) []byte { return bytes.Join(append([][]byte{head}, parts...), nil) }
	cases := []struct {
		name    string
		p       []byte
		params  int
		prev    []byte
		wantErr bool
		cursor  bool
		types   []byte
	}{
		{name: "types bound", p: pkt([]byte{0x02, 1}, types, vals), params: 3, types: types},
		{name: "no new types: those bound before", p: pkt([]byte{0x02, 0}, vals), params: 3, prev: types, types: types},
		{name: "no types ever bound", p: pkt([]byte{0x02, 0}, vals), params: 3, wantErr: true},
		{name: "a value cut short", p: pkt([]byte{0x02, 1}, types, vals[:len(vals)-1]), params: 3, wantErr: true},
		{name: "bytes after the values", p: pkt([]byte{0x02, 1}, types, vals, []byte{0}), params: 3, wantErr: true},
		{name: "types cut short", p: pkt([]byte{0x02, 1}, types[:3]), params: 3, wantErr: true},
		{name: "no parameters", p: pkt(), params: 0},
		{name: "a cursor", p: append(append([]byte{}, head[:5]...), 1, 1, 0, 0, 0), params: 0, cursor: true},
		{name: "too short", p: head[:6], params: 0, wantErr: true},
		{name: "a datetime and a NULL-typed value", p: pkt([]byte{0x00, 1}, []byte{0x0c, 0, 0x06, 0, 0x01, 0x80}, []byte{4, 0xe8, 0x07, 2, 29}, []byte{7}), params: 3,
			types: []byte{0x0c, 0, 0x06, 0, 0x01, 0x80}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, cursor, err := parseExecute(tc.p, tc.params, tc.prev)
			if (err != nil) != tc.wantErr {
				t.Fatalf("got error %v, want error: %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if cursor != tc.cursor {
				t.Errorf("got cursor %v, want %v", cursor, tc.cursor)
			}
			if !bytes.Equal(a.types, tc.types) {
				t.Errorf("got types %x, want %x", a.types, tc.types)
			}
			if tc.params == 3 && tc.name != "a datetime and a NULL-typed value" && (!bytes.Equal(a.values, vals) || !bytes.Equal(a.nulls, []byte{0x02})) {
				t.Errorf("got values %x and NULLs %x, want %x and 02", a.values, a.nulls, vals)
			}
		})
	}
}

func TestBoundTypes(t *testing.T) {
	head := []byte{wire.ComStmtExecute, 1, 0, 0, 0, 0, 1, 0, 0, 0}
	types := []byte{0x08, 0, 0xfe, 0}
	cases := []struct {
		name   string
		p      []byte
		params int
		want   []byte
	}{
		{"types bound", append(append(append([]byte{}, head...), 0, 1), types...), 2, types},
		{"none bound", append(append([]byte{}, head...), 0, 0), 2, nil},
		{"cut short", append(append(append([]byte{}, head...), 0, 1), types[:3]...), 2, nil},
		{"no parameters", head, 0, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := boundTypes(tc.p, tc.params); !bytes.Equal(got, tc.want) {
				t.Errorf("got %x, want %x", got, tc.want)
			}
		})
	}
}
