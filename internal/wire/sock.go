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

// sock is a connected socket used with blocking system calls. A worker
// goroutine that waits for the server then sits in one read(2) instead of a
// read that fails with EAGAIN, a park, a poller wake-up and a second read:
// that is most of the client CPU a query costs.
//
// The driver uses a sock as its net.Conn for the handshake; deadlines are not
// supported (the driver sets none unless asked to).
type sock struct {
	f  *os.File // keeps fd open; its Fd() call put the descriptor in blocking mode
	fd int

	mu     sync.Mutex
	closed bool
	local  net.Addr
	remote net.Addr

	// The first packet each way is kept to learn the negotiated capabilities.
	sniffIn, sniffOut []byte
}

func dialSock(ctx context.Context, network, addr string) (*sock, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
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
	return &sock{f: f, fd: fd, local: local, remote: remote}, nil
}

func (s *sock) Read(p []byte) (int, error) {
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
		if len(s.sniffIn) < 1024 {
			s.sniffIn = append(s.sniffIn, p[:n]...)
		}
		return n, nil
	}
}

func (s *sock) Write(p []byte) (int, error) {
	if len(s.sniffOut) < 1024 {
		s.sniffOut = append(s.sniffOut, p...)
	}
	written := 0
	for written < len(p) {
		n, err := syscall.Write(s.fd, p[written:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return written, &net.OpError{Op: "write", Net: "tcp", Err: err}
		}
		written += n
	}
	return written, nil
}

// rawRead and rawWrite skip the sniffing; for the hot path.
func (s *sock) rawRead(p []byte) (int, error) {
	for {
		n, err := syscall.Read(s.fd, p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, &net.OpError{Op: "read", Net: "tcp", Err: err}
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (s *sock) rawWrite(p []byte) error {
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

// interrupt wakes any call blocked on the socket; it stays open until Close.
func (s *sock) interrupt() {
	s.mu.Lock()
	if !s.closed {
		_ = syscall.Shutdown(s.fd, syscall.SHUT_RDWR)
	}
	s.mu.Unlock()
}

func (s *sock) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	// close(2) does not wake a thread blocked in read(2) on Linux; shutdown does.
	_ = syscall.Shutdown(s.fd, syscall.SHUT_RDWR)
	return s.f.Close()
}

func (s *sock) LocalAddr() net.Addr              { return s.local }
func (s *sock) RemoteAddr() net.Addr             { return s.remote }
func (s *sock) SetDeadline(time.Time) error      { return nil }
func (s *sock) SetReadDeadline(time.Time) error  { return nil }
func (s *sock) SetWriteDeadline(time.Time) error { return nil }
