// Package wiretest is a fake MySQL server on loopback for tests that need a
// server to misbehave: cut a reply short, stall, reset the connection, send
// an error in the middle of a result set or packets of any size. It speaks
// the connection phase (greeting, optional TLS, mysql_native_password,
// caching_sha2_password with fast and full authentication, an auth switch,
// MariaDB's client_ed25519)
// and leaves every command to a handler written by the test.
//
// It is for fault injection only: anything that checks SQL behaviour runs
// against a real server (internal/sandbox/sandboxtest).
package wiretest

import (
	"bufio"
	"crypto/rsa"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
)

// Capability and status flags the fake server uses.
const (
	CapLongPassword     = 1 << 0
	CapFoundRows        = 1 << 1
	CapLongFlag         = 1 << 2
	CapConnectWithDB    = 1 << 3
	CapCompress         = 1 << 5
	CapLocalFiles       = 1 << 7
	CapProtocol41       = 1 << 9
	CapSSL              = 1 << 11
	CapTransactions     = 1 << 13
	CapSecureConn       = 1 << 15
	CapMultiStatements  = 1 << 16
	CapMultiResults     = 1 << 17
	CapPSMultiResults   = 1 << 18
	CapPluginAuth       = 1 << 19
	CapConnectAttrs     = 1 << 20
	CapPluginAuthLenenc = 1 << 21
	CapDeprecateEOF     = 1 << 24

	StatusAutocommit         = 0x0002
	StatusMoreResults        = 0x0008
	StatusNoBackslashEscapes = 0x0200
)

// Config says how the fake server greets and authenticates.
type Config struct {
	// Plugin is the authentication plugin the greeting names:
	// mysql_native_password (the default), caching_sha2_password or
	// sha256_password.
	Plugin string
	// Password is the one the client must prove it knows. With
	// AnyPassword, authentication always succeeds.
	Password    string
	AnyPassword bool
	// SwitchTo, when set, answers the client's first response with an auth
	// switch request to this plugin (mysql_native_password,
	// caching_sha2_password, mysql_clear_password or client_ed25519).
	SwitchTo string
	// Ed25519Nonce is the 32-byte challenge of a switch to client_ed25519,
	// for a test that needs a particular one; by default it is random, as
	// MariaDB's is.
	Ed25519Nonce []byte
	// FullAuth makes caching_sha2_password ask for the password itself (as
	// a server with a cold cache does) instead of accepting the scramble.
	FullAuth bool
	// RSAKey lets caching_sha2_password's full authentication and
	// sha256_password run without TLS: the client asks for the public key
	// and encrypts the password.
	RSAKey *rsa.PrivateKey
	// TLS, when set, offers TLS; RequireTLS refuses clients that do not
	// ask for it.
	TLS        *tls.Config
	RequireTLS bool
	// NoDeprecateEOF keeps the old EOF packets after column definitions
	// and rows.
	NoDeprecateEOF bool
	// Status is sent in the greeting and every OK packet.
	Status uint16
	// Version is the server version in the greeting.
	Version string
}

// Server is a listening fake server. Start makes one.
type Server struct {
	cfg    Config
	ln     net.Listener
	handle func(*Session)
	wg     sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	errs   []error
}

// Start listens on 127.0.0.1. Each connection runs the connection phase and
// then handle, in a goroutine of its own; when handle returns, the
// connection is closed. t.Cleanup closes the listener and every connection
// and waits for the handlers, so a handler must return once its connection
// fails (every Session method then returns an error).
func Start(t testing.TB, cfg Config, handle func(*Session)) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	if cfg.Plugin == "" {
		cfg.Plugin = "mysql_native_password"
	}
	if cfg.Version == "" {
		cfg.Version = "8.0.99-wiretest"
	}
	if cfg.Status == 0 {
		cfg.Status = StatusAutocommit
	}
	s := &Server{cfg: cfg, ln: ln, handle: handle, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(func() {
		s.Close()
		for _, err := range s.Errors() {
			t.Errorf("fake server: %v", err)
		}
	})
	return s
}

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops listening, closes every connection and waits for the
// handlers to return.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.wg.Wait()
}

// Errors are the connection-phase failures seen so far (a client that
// gives up half way is not one).
func (s *Server) Errors() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

func (s *Server) accept() {
	defer s.wg.Done()
	id := uint32(0)
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = true
		s.wg.Add(1)
		s.mu.Unlock()
		id++
		go s.serve(c, id)
	}
}

func (s *Server) serve(c net.Conn, id uint32) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	ss := &Session{cfg: &s.cfg, raw: c, conn: c, r: bufio.NewReader(c), ID: id, Status: s.cfg.Status}
	err := ss.connect()
	switch {
	case errors.Is(err, errRefused):
		return
	case err != nil:
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			s.mu.Lock()
			s.errs = append(s.errs, fmt.Errorf("connection %d: %w", id, err))
			s.mu.Unlock()
		}
		return
	}
	s.handle(ss)
}

// errRefused ends a connection the server refused on purpose.
var errRefused = errors.New("refused")

// StartSilent listens on 127.0.0.1, accepts connections and never sends a
// byte: a server that hangs before its greeting. It returns the address;
// t.Cleanup closes everything.
func StartSilent(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}
