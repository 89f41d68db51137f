package wire

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"golang.org/x/sys/unix"

	"github.com/shakedown/shakedown/internal/ioloop"
)

// A test of the looped mode runs its connection's calls inside a task of
// an I/O loop, as the runner does: loopExec is that task, fed the calls
// one at a time. Calls made outside it (directly on the test's goroutine)
// still work, waiting with poll(2).

type loopExec struct {
	task   *ioloop.Task
	jobs   chan func()
	inside atomic.Bool
}

var execs sync.Map // *testing.T -> *loopExec

// loopFor returns t's loop task, starting it on first use; it ends with
// the test.
func loopFor(t *testing.T) *loopExec {
	t.Helper()
	if x, ok := execs.Load(t); ok {
		return x.(*loopExec)
	}
	l, err := ioloop.New()
	if err != nil {
		t.Fatal(err)
	}
	x := &loopExec{task: l.NewTask(), jobs: make(chan func())}
	l.Start(context.Background(), x.task, func(context.Context) {
		for {
			var job func()
			x.task.Idle(func() { job = <-x.jobs })
			if job == nil {
				return
			}
			x.inside.Store(true)
			job()
			x.inside.Store(false)
		}
	})
	ended := make(chan struct{})
	go func() { l.Run(); close(ended) }()
	execs.Store(t, x)
	t.Cleanup(func() {
		execs.Delete(t)
		close(x.jobs)
		select {
		case <-ended:
		case <-time.After(hangLimit):
			t.Errorf("the test's I/O loop did not end within %v", hangLimit)
		}
	})
	return x
}

// do runs f in the task (at once when already there).
func (x *loopExec) do(f func()) {
	if x.inside.Load() {
		f()
		return
	}
	done := make(chan struct{})
	x.jobs <- func() { defer close(done); f() }
	<-done
}

// dialIn dials as Dial does; in looped mode inside t's loop task, so that
// the connection waits through the loop.
func dialIn(t *testing.T, ctx context.Context, cfg *mysql.Config, opts Options) (*Conn, error) {
	t.Helper()
	if !opts.Looped {
		return Dial(ctx, cfg, opts)
	}
	x := loopFor(t)
	var c *Conn
	var err error
	x.do(func() { c, err = Dial(ioloop.With(ctx, x.task), cfg, opts) })
	return c, err
}

// loopedPair is a Conn in looped mode over one end of a socket pair, for
// task t, and the other end as the server's.
func loopedPair(t *testing.T, task *ioloop.Task, caps uint32) (*Conn, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	s := &sock{f: os.NewFile(uintptr(fds[0]), "client"), fd: fds[0], network: "unix"}
	s.lf = ioloop.NewFD(task, fds[0])
	return &Conn{s: s, rbuf: make([]byte, 16<<10), loc: time.UTC, caps: caps, ext: extCapCacheMetadata}, fds[1]
}

// FuzzLoopedReply sends FuzzReply's replies to a connection in looped
// mode, in pieces (cut where the fuzzer says), from a goroutine while the
// connection reads inside an I/O loop's task: each call must end, with a
// result or an error, never hang or panic, and an error that is not the
// server's own must leave the connection broken.
func FuzzLoopedReply(f *testing.F) {
	f.Add(byte(0), uint32(capDeprecateEOF), packets(1, []byte{2}, column("a"), column("b"), textRow, textRow, eofOK), []byte{3, 40})
	f.Add(byte(2), uint32(capDeprecateEOF), packets(1, []byte{2, 0}, binaryRow, binaryRow, errPkt), []byte{1, 1, 1})
	f.Add(byte(3), uint32(capDeprecateEOF), packets(1, okPkt), []byte{})
	f.Add(byte(0), uint32(0), []byte{5, 0}, []byte{1})
	f.Fuzz(func(t *testing.T, op byte, caps uint32, reply, cuts []byte) {
		l, err := ioloop.New()
		if err != nil {
			t.Fatal(err)
		}
		task := l.NewTask()
		c, srv := loopedPair(t, task, caps)
		defer c.s.Close()
		go func() {
			// The server: swallow the command, then the reply in pieces.
			defer unix.Close(srv)
			rest := reply
			for _, n := range cuts {
				k := min(int(n), len(rest))
				if k > 0 {
					if _, err := unix.Write(srv, rest[:k]); err != nil {
						return
					}
				}
				rest = rest[k:]
				runtime.Gosched()
			}
			if len(rest) > 0 {
				unix.Write(srv, rest)
			}
		}()
		var callErr error
		l.Start(context.Background(), task, func(context.Context) {
			switch op % 4 {
			case 0:
				_, callErr = c.Query("SELECT a, b FROM t")
			case 1:
				_, callErr = c.Prepare("SELECT a, b FROM t WHERE id = ?")
			case 2:
				_, callErr = (&Stmt{c: c, id: 1}).Exec()
			case 3:
				callErr = c.Ping()
			}
		})
		done := make(chan struct{})
		go func() { l.Run(); close(done) }()
		select {
		case <-done:
		case <-time.After(hangLimit):
			t.Fatalf("op %d: still waiting after %v", op%4, hangLimit)
		}
		var me *mysql.MySQLError
		if callErr != nil && !errors.As(callErr, &me) && !c.Broken() {
			t.Fatalf("error %v left the connection usable", callErr)
		}
	})
}
