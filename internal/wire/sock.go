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
// A sock is also a net.Conn, for crypto/tls to run over.
type sock struct {
	nc net.Conn // polled mode
	f  *os.File // blocking mode: keeps fd open; its Fd() call made the descriptor blocking
	fd int

	// Polled mode's per-call timeouts; 0 for none.
	rto, wto time.Duration

	mu          sync.Mutex
	closed      bool
	interrupted atomic.Bool
	local       net.Addr
	remote      net.Addr
	network     string
}

func dialSock(ctx context.Context, cfg *mysql.Config, blocking bool) (*sock, error) {
	network, addr := cfg.Net, cfg.Addr
	if network == "" {
		network = "tcp"
	}
	var c net.Conn
	var err error
	if cfg.DialFunc != nil {
		c, err = cfg.DialFunc(ctx, network, addr)
	} else {
		d := net.Dialer{KeepAlive: 15 * time.Second}
		c, err = d.DialContext(ctx, network, addr)
	}
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
	fc, hasFile := c.(interface{ File() (*os.File, error) })
	if !blocking || !hasFile {
		s.nc, s.rto, s.wto = c, cfg.ReadTimeout, cfg.WriteTimeout
		return s, nil
	}
	f, err := fc.File()
	c.Close() // the duplicate in f keeps the socket open
	if err != nil {
		return nil, err
	}
	s.f = f
	s.fd = int(f.Fd()) // also switches the descriptor to blocking mode
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
	for {
		n, err := syscall.Read(s.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return 0, s.errTimeout("read") // SO_RCVTIMEO
		case err != nil:
			return 0, &net.OpError{Op: "read", Net: s.network, Source: s.local, Addr: s.remote, Err: err}
		case n == 0 && len(p) > 0:
			if s.interrupted.Load() {
				return 0, s.errTimeout("read")
			}
			return 0, io.EOF
		}
		return n, nil
	}
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
	for len(p) > 0 {
		n, err := syscall.Write(s.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return s.errTimeout("write") // SO_SNDTIMEO
		case err != nil:
			if s.interrupted.Load() {
				return s.errTimeout("write")
			}
			return &net.OpError{Op: "write", Net: s.network, Source: s.local, Addr: s.remote, Err: err}
		}
		p = p[n:]
	}
	return nil
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
	return s.setTimeout(syscall.SO_RCVTIMEO, untilDeadline(t))
}

func (s *sock) SetWriteDeadline(t time.Time) error {
	if s.nc != nil {
		return s.nc.SetWriteDeadline(t)
	}
	return s.setTimeout(syscall.SO_SNDTIMEO, untilDeadline(t))
}

func untilDeadline(t time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return max(time.Until(t), time.Microsecond)
}
