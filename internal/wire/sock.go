package wire

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
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
// The driver uses a sock as its net.Conn for the handshake; deadlines are not
// supported (the driver sets none unless asked to).
type sock struct {
	nc net.Conn // polled mode
	f  *os.File // blocking mode: keeps fd open; its Fd() call made the descriptor blocking
	fd int

	mu     sync.Mutex
	closed bool
	local  net.Addr
	remote net.Addr

	// The first packet each way is kept to learn the negotiated capabilities.
	sniff             bool
	sniffIn, sniffOut []byte
}

func dialSock(ctx context.Context, network, addr string, blocking bool) (*sock, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if network == "tcp" && c.LocalAddr().String() == c.RemoteAddr().String() {
		// With no server on a local port, Linux can hand the client that
		// same port and connect the socket to itself; it would then wait
		// for ever for a greeting and keep the server from listening again.
		c.Close()
		return nil, &net.OpError{Op: "dial", Net: network, Err: syscall.ECONNREFUSED}
	}
	if !blocking {
		return &sock{nc: c, local: c.LocalAddr(), remote: c.RemoteAddr(), sniff: true}, nil
	}
	fc, ok := c.(interface{ File() (*os.File, error) })
	if !ok {
		c.Close()
		return nil, errors.New("wire: connection type has no file descriptor")
	}
	f, err := fc.File()
	local, remote := c.LocalAddr(), c.RemoteAddr()
	c.Close() // the duplicate in f keeps the socket open
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd()) // also switches the descriptor to blocking mode
	return &sock{f: f, fd: fd, local: local, remote: remote, sniff: true}, nil
}

// Read and Write are the driver's; they keep the first bytes each way.
func (s *sock) Read(p []byte) (int, error) {
	n, err := s.rawRead(p)
	if s.sniff && n > 0 && len(s.sniffIn) < 1024 {
		s.sniffIn = append(s.sniffIn, p[:n]...)
	}
	return n, err
}

func (s *sock) Write(p []byte) (int, error) {
	if s.sniff && len(s.sniffOut) < 1024 {
		s.sniffOut = append(s.sniffOut, p...)
	}
	if err := s.rawWrite(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (s *sock) stopSniffing() {
	s.sniff = false
	s.sniffIn, s.sniffOut = nil, nil
}

func (s *sock) rawRead(p []byte) (int, error) {
	if s.nc != nil {
		return s.nc.Read(p)
	}
	for {
		n, err := syscall.Read(s.fd, p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, &net.OpError{Op: "read", Net: "tcp", Err: err}
		}
		if n == 0 && len(p) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (s *sock) rawWrite(p []byte) error {
	if s.nc != nil {
		_, err := s.nc.Write(p)
		return err
	}
	for len(p) > 0 {
		n, err := syscall.Write(s.fd, p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return &net.OpError{Op: "write", Net: "tcp", Err: err}
		}
		p = p[n:]
	}
	return nil
}

// interrupt wakes any call blocked on the socket.
func (s *sock) interrupt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.nc != nil {
		_ = s.nc.SetDeadline(time.Unix(1, 0))
		return
	}
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
	// close(2) does not wake a thread blocked in read(2) on Linux; shutdown does.
	_ = syscall.Shutdown(s.fd, syscall.SHUT_RDWR)
	return s.f.Close()
}

func (s *sock) LocalAddr() net.Addr              { return s.local }
func (s *sock) RemoteAddr() net.Addr             { return s.remote }
func (s *sock) SetDeadline(time.Time) error      { return nil }
func (s *sock) SetReadDeadline(time.Time) error  { return nil }
func (s *sock) SetWriteDeadline(time.Time) error { return nil }
