package wire

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"golang.org/x/sys/unix"

	"github.com/shakedown/shakedown/internal/ioloop"
)

// sock is a connected socket in one of two modes.
//
// Polled (the default) is Go's own network I/O: a goroutine waiting for the
// server parks and the runtime's poller wakes it, so thousands of threads
// share a few OS threads fairly.
//
// Blocking puts the descriptor in blocking mode and calls read(2) and
// write(2) directly: a waiting goroutine sits in one read instead of a read
// that fails with EAGAIN, a park, a poller wake-up and a second read. That
// is cheaper per query at low concurrency, but each waiting goroutine holds
// an OS thread and the scheduler is not fair between them, so it suits only
// a few threads per core.
//
// Both modes are bounded the same ways, at no cost per query: interrupt
// (run when the connection's context ends) makes every pending and later
// call fail at once, and the configuration's read and write timeouts bound
// each call (SO_RCVTIMEO/SO_SNDTIMEO in blocking mode, set once; a
// deadline per call in polled mode, only when a timeout is set).
//
// Looped keeps the descriptor non-blocking and waits through the I/O loop
// of the task that dialled it (see package ioloop): a read that finds
// nothing yields to the loop, which resumes the task when epoll says the
// reply is there, with no trip through Go's scheduler. Outside a running
// task it waits with poll(2). The loop follows readiness by edges, so after
// sending a statement a read waits for the reply first instead of trying a
// read that would fail with EAGAIN.
//
// A sock is also a net.Conn, for crypto/tls to run over.
type sock struct {
	nc net.Conn   // polled mode
	f  *os.File   // blocking and looped modes: keeps fd open
	lf *ioloop.FD // looped mode
	fd int

	// Looped mode's deadlines, set by SetReadDeadline and
	// SetWriteDeadline (crypto/tls's handshake); zero for none.
	rdl, wdl time.Time

	// Polled mode's per-call timeouts; 0 for none.
	rto, wto time.Duration

	mu          sync.Mutex
	closed      bool
	interrupted atomic.Bool
	local       net.Addr
	remote      net.Addr
	network     string
}

func dialSock(ctx context.Context, cfg *mysql.Config, opts Options) (*sock, error) {
	network, addr := cfg.Net, cfg.Addr
	if network == "" {
		network = "tcp"
	}
	var task *ioloop.Task
	if opts.Looped {
		task = ioloop.From(ctx)
	}
	var c net.Conn
	var err error
	dial := func() {
		if cfg.DialFunc != nil {
			c, err = cfg.DialFunc(ctx, network, addr)
		} else {
			d := net.Dialer{KeepAlive: 15 * time.Second}
			c, err = d.DialContext(ctx, network, addr)
		}
	}
	// A dial parks on Go's poller, which would hold up the whole loop.
	task.Offload(dial)
	if err != nil {
		return nil, err
	}
	if c.LocalAddr() != nil && c.RemoteAddr() != nil && c.LocalAddr().Network() == "tcp" &&
		c.LocalAddr().String() == c.RemoteAddr().String() {
		// With no server on a local port, Linux can hand the client that
		// same port and connect the socket to itself; it would then wait
		// for ever for a greeting and keep the server from listening again.
		c.Close()
		return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
	}
	s := &sock{local: c.LocalAddr(), remote: c.RemoteAddr(), network: network}
	sc, hasFD := c.(syscall.Conn)
	if !opts.Blocking && !opts.Looped || !hasFD {
		s.nc, s.rto, s.wto = c, cfg.ReadTimeout, cfg.WriteTimeout
		return s, nil
	}
	f, err := ownFile(sc)
	c.Close() // the duplicate in f keeps the socket open
	if err != nil {
		return nil, err
	}
	s.f = f
	s.fd = int(f.Fd())
	if opts.Looped {
		if err := syscall.SetNonblock(s.fd, true); err != nil {
			f.Close()
			return nil, os.NewSyscallError("fcntl", err)
		}
		s.lf = ioloop.NewFD(task, s.fd)
		s.rto, s.wto = cfg.ReadTimeout, cfg.WriteTimeout
		return s, nil
	}
	for _, t := range [...]struct {
		opt int
		d   time.Duration
	}{{syscall.SO_RCVTIMEO, cfg.ReadTimeout}, {syscall.SO_SNDTIMEO, cfg.WriteTimeout}} {
		if t.d <= 0 {
			continue // no system call for no timeout
		}
		if err := s.setTimeout(t.opt, t.d); err != nil {
			f.Close()
			return nil, err
		}
	}
	return s, nil
}

// ownFile duplicates c's descriptor as a file in blocking mode that Go's
// poller does not follow. The file that net.Conn's File method returns
// stays in the runtime's epoll set, and every reply the server sends then
// wakes a thread of the runtime that sleeps in the poller and finds nothing
// to do: one more wake-up, context switch and epoll_wait for each statement,
// on top of the read that takes the reply (strace of a held loop at one
// thread: two epoll_pwait a statement, one of them the runtime's).
func ownFile(c syscall.Conn) (*os.File, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var dupErr error
	if err := rc.Control(func(sysfd uintptr) {
		fd, dupErr = unix.FcntlInt(sysfd, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, os.NewSyscallError("fcntl", dupErr)
	}
	// The duplicate shares the connection's file status flags: blocking
	// before NewFile, so that NewFile leaves it out of the poller.
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(fd), "socket"), nil
}

// setTimeout bounds each blocking read or write (opt) by d; 0 is no bound.
func (s *sock) setTimeout(opt int, d time.Duration) error {
	if d < 0 {
		d = 0
	}
	if d > 0 && d < time.Microsecond {
		d = time.Microsecond
	}
	tv := syscall.NsecToTimeval(d.Nanoseconds())
	return os.NewSyscallError("setsockopt", syscall.SetsockoptTimeval(s.fd, syscall.SOL_SOCKET, opt, &tv))
}

// errTimeout is what a call cut short by a timeout or an interrupt returns.
func (s *sock) errTimeout(op string) error {
	return &net.OpError{Op: op, Net: s.network, Source: s.local, Addr: s.remote, Err: os.ErrDeadlineExceeded}
}

// Read and Write make sock a net.Conn.
func (s *sock) Read(p []byte) (int, error) { return s.rawRead(p) }

func (s *sock) Write(p []byte) (int, error) {
	if err := s.rawWrite(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (s *sock) rawRead(p []byte) (int, error) {
	if s.nc != nil {
		if s.rto > 0 {
			// A new deadline would undo an interrupt's; interrupt sets its
			// flag before its deadline, so checking after setting ours
			// sees it, or its deadline lands after ours.
			s.nc.SetReadDeadline(time.Now().Add(s.rto))
			if s.interrupted.Load() {
				return 0, s.errTimeout("read")
			}
		}
		return s.nc.Read(p)
	}
	return s.fdRead(p)
}

func (s *sock) rawWrite(p []byte) error {
	if s.nc != nil {
		if s.wto > 0 {
			s.nc.SetWriteDeadline(time.Now().Add(s.wto))
			if s.interrupted.Load() {
				return s.errTimeout("write")
			}
		}
		_, err := s.nc.Write(p)
		return err
	}
	return s.fdWrite(p)
}

// interrupt makes every pending and later read and write fail at once.
func (s *sock) interrupt() {
	s.interrupted.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.nc != nil {
		_ = s.nc.SetDeadline(time.Unix(1, 0))
		return
	}
	// close(2) does not wake a thread blocked in read(2) on Linux; shutdown does.
	_ = syscall.Shutdown(s.fd, syscall.SHUT_RDWR)
}

func (s *sock) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.nc != nil {
		return s.nc.Close()
	}
	if s.lf != nil {
		s.lf.Forget()
	}
	_ = syscall.Shutdown(s.fd, syscall.SHUT_RDWR)
	return s.f.Close()
}

func (s *sock) LocalAddr() net.Addr  { return s.local }
func (s *sock) RemoteAddr() net.Addr { return s.remote }

// SetDeadline and its kin make sock a net.Conn. In blocking mode a deadline
// becomes a timeout per call (SO_RCVTIMEO/SO_SNDTIMEO) of the time left, so
// a server that trickles bytes can stretch it; the connection phase is
// bounded by interrupt instead.
func (s *sock) SetDeadline(t time.Time) error {
	return errors.Join(s.SetReadDeadline(t), s.SetWriteDeadline(t))
}

func (s *sock) SetReadDeadline(t time.Time) error {
	if s.nc != nil {
		return s.nc.SetReadDeadline(t)
	}
	if s.lf != nil {
		s.rdl = t
		return nil
	}
	return s.setTimeout(syscall.SO_RCVTIMEO, untilDeadline(t))
}

func (s *sock) SetWriteDeadline(t time.Time) error {
	if s.nc != nil {
		return s.nc.SetWriteDeadline(t)
	}
	if s.lf != nil {
		s.wdl = t
		return nil
	}
	return s.setTimeout(syscall.SO_SNDTIMEO, untilDeadline(t))
}

func untilDeadline(t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return max(time.Until(t), time.Microsecond)
}

// fdRead is rawRead on the descriptor, in blocking and looped modes. A
// read that finds nothing has met SO_RCVTIMEO in blocking mode; in looped
// mode it waits in the loop.
func (s *sock) fdRead(p []byte) (int, error) {
	f := s.lf
	if f != nil && f.Tracked() && !f.ReadReady() {
		// The loop saw no input since the last read drained the socket:
		// wait for it rather than try a read that would fail.
		if err := s.loopWait(false); err != nil {
			return 0, err
		}
	}
	for {
		n, err := syscall.Read(s.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN && f == nil:
			return 0, s.errTimeout("read") // SO_RCVTIMEO
		case err == syscall.EAGAIN:
			f.Drained(false)
			if err := s.loopWait(false); err != nil {
				return 0, err
			}
			continue
		case err != nil:
			return 0, s.failed("read", err)
		case n == 0 && len(p) > 0:
			if s.interrupted.Load() {
				return 0, s.errTimeout("read")
			}
			return 0, io.EOF
		}
		if f != nil && n < len(p) {
			f.Drained(false) // a short read emptied the socket
		}
		return n, nil
	}
}

// fdWrite is rawWrite on the descriptor, in blocking and looped modes.
func (s *sock) fdWrite(p []byte) error {
	for len(p) > 0 {
		n, err := syscall.Write(s.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN && s.lf == nil:
			return s.errTimeout("write") // SO_SNDTIMEO
		case err == syscall.EAGAIN:
			s.lf.Drained(true)
			if err := s.loopWait(true); err != nil {
				return err
			}
			continue
		case err != nil:
			return s.failed("write", err)
		}
		p = p[n:]
	}
	return nil
}

// failed is the error of a read or write that failed with err: a timeout
// when the connection was interrupted.
func (s *sock) failed(op string, err error) error {
	if s.interrupted.Load() {
		return s.errTimeout(op)
	}
	return &net.OpError{Op: op, Net: s.network, Source: s.local, Addr: s.remote, Err: err}
}

// loopWait waits for the socket to become readable (writable), bounded by
// the per-call timeout and any deadline set, and by interrupt, whose
// shutdown(2) makes the socket ready.
func (s *sock) loopWait(write bool) error {
	if s.interrupted.Load() {
		return s.errTimeout(op(write))
	}
	dl, to := s.rdl, s.rto
	if write {
		dl, to = s.wdl, s.wto
	}
	if to > 0 {
		if t := time.Now().Add(to); dl.IsZero() || t.Before(dl) {
			dl = t
		}
	}
	if err := s.lf.Wait(write, dl); err != nil {
		if errors.Is(err, ioloop.ErrTimeout) {
			return s.errTimeout(op(write))
		}
		return &net.OpError{Op: op(write), Net: s.network, Source: s.local, Addr: s.remote, Err: err}
	}
	return nil
}

func op(write bool) string {
	if write {
		return "write"
	}
	return "read"
}
