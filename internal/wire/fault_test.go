package wire

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/wire/lenenc"
	"github.com/shakedown/shakedown/internal/wire/wiretest"
)

// Fault injection: a fake server misbehaves and the client must end each
// statement with an error (or its result) instead of waiting for ever.

// hangLimit bounds how long a test waits for a call that should return at
// once; a call still blocked then is reported as a hang.
const hangLimit = 20 * time.Second

func fakeConfig(addr string) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.Net = "tcp"
	cfg.Addr = addr
	cfg.User = "u"
	cfg.DBName = "d"
	cfg.Timeout = 5 * time.Second
	cfg.Logger = &mysql.NopLogger{}
	return cfg
}

// within runs f and fails the test if it has not returned after hangLimit.
func within[T any](t *testing.T, what string, f func() (T, error)) (T, error) {
	t.Helper()
	type out struct {
		v   T
		err error
	}
	ch := make(chan out, 1)
	go func() {
		var v T
		var err error
		if x, ok := execs.Load(t); ok {
			// A looped connection is used from its loop's task.
			x.(*loopExec).do(func() { v, err = f() })
		} else {
			v, err = f()
		}
		ch <- out{v, err}
	}()
	select {
	case o := <-ch:
		return o.v, o.err
	case <-time.After(hangLimit):
		t.Fatalf("%s: still blocked after %v", what, hangLimit)
		panic("unreachable")
	}
}

var modes = []struct {
	name string
	opts Options
}{{"polled", Options{}}, {"blocking", Options{Blocking: true}}, {"looped", Options{Looped: true}}}

// dialFake connects to srv; the connection is interrupted (and so cannot
// hang the test for ever) when the test ends.
func dialFake(t *testing.T, srv *wiretest.Server, opts Options) *Conn {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, err := within(t, "dial", func() (*Conn, error) { return dialIn(t, ctx, fakeConfig(srv.Addr()), opts) })
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// serve answers each command with reply until the connection ends.
func serve(reply func(s *wiretest.Session, cmd []byte) error) func(*wiretest.Session) {
	return func(s *wiretest.Session) {
		for {
			cmd, err := s.ReadCommand()
			if err != nil || cmd[0] == comQuit {
				return
			}
			if cmd[0] == comStmtClose {
				continue
			}
			if err := reply(s, cmd); err != nil {
				return
			}
		}
	}
}

func wantServerError(t *testing.T, err error, code uint16) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != code {
		t.Fatalf("got error %v, want server error %d", err, code)
	}
}

func TestErrorInTheMiddleOfRows(t *testing.T) {
	rows := func(s *wiretest.Session, binary bool) error {
		if err := s.Columns("id", "v"); err != nil {
			return err
		}
		for i := range 3 {
			v := []byte(strings.Repeat("x", i))
			var err error
			if binary {
				err = s.BinaryRow([]byte("1"), v)
			} else {
				err = s.TextRow([]byte("1"), v)
			}
			if err != nil {
				return err
			}
		}
		return s.Err(1242, "21000", "Subquery returns more than 1 row")
	}
	srv := wiretest.Start(t, wiretest.Config{}, serve(func(s *wiretest.Session, cmd []byte) error {
		switch cmd[0] {
		case comQuery:
			if string(cmd[1:]) == "SELECT 1" {
				if err := s.Columns("1"); err != nil {
					return err
				}
				if err := s.TextRow([]byte("1")); err != nil {
					return err
				}
				return s.EOF(false)
			}
			return rows(s, false)
		case comStmtPrepare:
			return s.PrepareOK(1, 0, "id", "v")
		case comStmtExecute:
			return rows(s, true)
		}
		return s.Err(1047, "08S01", "unknown command")
	}))
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			c := dialFake(t, srv, m.opts)
			_, err := within(t, "text query", func() (Result, error) { return c.Query("SELECT bad") })
			wantServerError(t, err, 1242)
			st, err := c.Prepare("SELECT bad")
			if err != nil {
				t.Fatal(err)
			}
			_, err = within(t, "prepared query", func() (Result, error) { return st.Exec() })
			wantServerError(t, err, 1242)
			if c.Broken() {
				t.Fatal("a server error must leave the connection usable")
			}
			r, err := within(t, "next query", func() (Result, error) { return c.Query("SELECT 1") })
			if err != nil || r.Rows != 1 {
				t.Errorf("next query: got %+v %v, want 1 row", r, err)
			}
		})
	}
}

func TestHugeRows(t *testing.T) {
	const max = 1<<24 - 1
	sizes := []struct {
		name string
		n    int
	}{
		{"just under one packet", max - 1},
		{"exactly one packet", max}, // and an empty one after it
		{"over two packets", 2*max + 1000},
	}
	// One column whose length prefix is part of the payload, made once.
	rows := map[string][]byte{}
	for _, sz := range sizes {
		v := bytes.Repeat([]byte("a"), sz.n-9)
		rows[sz.name] = append(lenenc.Append(nil, uint64(len(v))), v...)
	}
	srv := wiretest.Start(t, wiretest.Config{}, serve(func(s *wiretest.Session, cmd []byte) error {
		for _, sz := range sizes {
			if string(cmd[1:]) == sz.name {
				if err := s.Columns("v"); err != nil {
					return err
				}
				if err := s.WritePacket(rows[sz.name]); err != nil {
					return err
				}
				if err := s.TextRow([]byte("small")); err != nil {
					return err
				}
				return s.EOF(false)
			}
		}
		return s.OK(0, 0)
	}))
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			c := dialFake(t, srv, m.opts)
			for _, sz := range sizes {
				r, err := within(t, sz.name, func() (Result, error) { return c.Query(sz.name) })
				if err != nil || r.Rows != 2 {
					t.Errorf("%s: got %+v %v, want 2 rows", sz.name, r, err)
				}
			}
			if r, err := c.Query("after"); err != nil || r.HasRows {
				t.Errorf("after the big rows: got %+v %v, want an OK", r, err)
			}
		})
	}
}

func TestHugeStatements(t *testing.T) {
	const max = 1<<24 - 1
	long := strings.Repeat("a", 20<<20) + "z"
	got := make(chan int, 16)
	srv := wiretest.Start(t, wiretest.Config{}, serve(func(s *wiretest.Session, cmd []byte) error {
		// The statement must arrive whole: its last byte is 'z'.
		if cmd[len(cmd)-1] != 'z' {
			return s.Err(1064, "42000", "statement arrived cut")
		}
		got <- len(cmd) - 1
		return s.OK(1, 0)
	}))
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			c := dialFake(t, srv, m.opts)
			// The command byte makes the payload one longer: just under one
			// packet, exactly one (and an empty one after it), and 20 MiB.
			for _, n := range []int{max - 2, max - 1, 20 << 20} {
				q := long[len(long)-n:]
				r, err := within(t, "huge statement", func() (Result, error) { return c.Query(q) })
				if err != nil || r.Affected != 1 {
					t.Fatalf("statement of %d bytes: got %+v %v, want 1 affected", n, r, err)
				}
				if g := <-got; g != n {
					t.Errorf("statement of %d bytes: server got %d", n, g)
				}
			}
		})
	}
}

func TestStalledServer(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			t.Run("greeting never comes", func(t *testing.T) {
				ln := listenSilently(t)
				cfg := fakeConfig(ln)
				cfg.Timeout = 200 * time.Millisecond
				_, err := within(t, "dial", func() (*Conn, error) { return dialIn(t, context.Background(), cfg, m.opts) })
				if err == nil {
					t.Fatal("got a connection from a server that never spoke")
				}
			})
			t.Run("reply never comes, read timeout", func(t *testing.T) {
				srv := wiretest.Start(t, wiretest.Config{}, serve(func(s *wiretest.Session, cmd []byte) error {
					_, err := s.ReadCommand() // until the client hangs up
					return err
				}))
				cfg := fakeConfig(srv.Addr())
				cfg.ReadTimeout = 200 * time.Millisecond
				c, err := dialIn(t, context.Background(), cfg, m.opts)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				_, err = within(t, "query", func() (Result, error) { return c.Query("SELECT SLEEP(1000)") })
				if err == nil || !c.Broken() {
					t.Fatalf("got %v, broken %v; want a timeout and a broken connection", err, c.Broken())
				}
			})
			t.Run("reply never comes, context cancelled", func(t *testing.T) {
				srv := wiretest.Start(t, wiretest.Config{}, serve(func(s *wiretest.Session, cmd []byte) error {
					_, err := s.ReadCommand()
					return err
				}))
				ctx, cancel := context.WithCancel(context.Background())
				c, err := dialIn(t, ctx, fakeConfig(srv.Addr()), m.opts)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				time.AfterFunc(100*time.Millisecond, cancel)
				_, err = within(t, "query", func() (Result, error) { return c.Query("SELECT SLEEP(1000)") })
				if err == nil || !c.Broken() {
					t.Fatalf("got %v, broken %v; want an error and a broken connection", err, c.Broken())
				}
			})
		})
	}
}

func TestCutConnections(t *testing.T) {
	cases := []struct {
		name  string
		reply func(s *wiretest.Session) error
	}{
		{"truncated packet", func(s *wiretest.Session) error {
			if err := s.Columns("v"); err != nil {
				return err
			}
			s.Write(append(s.Header(100), "only ten b"...))
			return s.Close()
		}},
		{"truncated header", func(s *wiretest.Session) error {
			s.Write([]byte{5, 0})
			return s.Close()
		}},
		{"reset in the middle of rows", func(s *wiretest.Session) error {
			if err := s.Columns("v"); err != nil {
				return err
			}
			if err := s.TextRow([]byte("1")); err != nil {
				return err
			}
			return s.Reset()
		}},
		{"reset before the reply", func(s *wiretest.Session) error { return s.Reset() }},
		{"packet out of sequence", func(s *wiretest.Session) error {
			s.Header(1) // skip a sequence number
			return s.WritePacket([]byte{0})
		}},
	}
	for _, tc := range cases {
		srv := wiretest.Start(t, wiretest.Config{}, serve(func(s *wiretest.Session, cmd []byte) error {
			tc.reply(s)
			return errors.New("done")
		}))
		for _, m := range modes {
			t.Run(tc.name+"/"+m.name, func(t *testing.T) {
				c := dialFake(t, srv, m.opts)
				_, err := within(t, "query", func() (Result, error) { return c.Query("SELECT v") })
				if err == nil {
					t.Fatal("got no error")
				}
				if !c.Broken() {
					t.Errorf("got a usable connection after %q, want it broken", err)
				}
				if _, err := c.Query("SELECT 1"); err == nil {
					t.Error("a broken connection ran a statement")
				}
			})
		}
	}
}

// listenSilently accepts connections and never writes to them.
func listenSilently(t *testing.T) string {
	t.Helper()
	return wiretest.StartSilent(t)
}
