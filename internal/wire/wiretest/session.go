package wiretest

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
)

// Session is one client connection after its connection phase. Its methods
// are for the connection's handler goroutine only, except Close.
type Session struct {
	cfg  *Config
	raw  net.Conn
	conn net.Conn // raw, or the TLS connection over it
	r    *bufio.Reader
	seq  byte

	// ID is the connection id sent in the greeting, from 1.
	ID uint32
	// Caps are the capabilities the client asked for.
	Caps uint32
	// User, DB and Plugin are from the client's handshake response; Plugin
	// is the one that authenticated it.
	User, DB, Plugin string
	// TLS says whether the connection was upgraded.
	TLS bool
	// Collation is the collation id from the handshake response.
	Collation byte
	// Status is sent in every OK and EOF packet.
	Status uint16
}

// ReadPacket reads one payload, joining a payload of 16 MiB or more that
// comes in several packets.
func (s *Session) ReadPacket() ([]byte, error) {
	var out []byte
	for {
		var h [4]byte
		if _, err := io.ReadFull(s.r, h[:]); err != nil {
			return nil, err
		}
		n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
		if h[3] != s.seq {
			return nil, fmt.Errorf("packet sequence %d, want %d", h[3], s.seq)
		}
		s.seq++
		start := len(out)
		out = slices.Grow(out, n)[:start+n]
		if _, err := io.ReadFull(s.r, out[start:]); err != nil {
			return nil, err
		}
		if n < maxPayload {
			return out, nil
		}
	}
}

// ReadCommand reads the client's next command; it starts a new sequence.
func (s *Session) ReadCommand() ([]byte, error) {
	s.seq = 0
	p, err := s.ReadPacket()
	if err == nil && len(p) == 0 {
		err = errors.New("empty command")
	}
	return p, err
}

const maxPayload = 1<<24 - 1

// WritePacket sends payload, split into packets of 16 MiB - 1 as the
// protocol says (with an empty last packet when it divides evenly).
func (s *Session) WritePacket(payload []byte) error {
	for {
		n := min(len(payload), maxPayload)
		var err error
		if n < 4096 {
			_, err = s.conn.Write(append(s.Header(n), payload[:n]...))
		} else if _, err = s.conn.Write(s.Header(n)); err == nil {
			_, err = s.conn.Write(payload[:n]) // big: no copy
		}
		if err != nil {
			return err
		}
		payload = payload[n:]
		if n < maxPayload {
			return nil
		}
	}
}

// ReadRaw reads whatever bytes the client sent, packets or not, without
// allocating: for a server loop that answers with canned bytes.
func (s *Session) ReadRaw(p []byte) (int, error) { return s.r.Read(p) }

// Write sends raw bytes, whatever they are: half a packet, garbage.
func (s *Session) Write(b []byte) error {
	_, err := s.conn.Write(b)
	return err
}

// Header is a packet header for a payload of n bytes with the next
// sequence number, for tests that write payloads by hand.
func (s *Session) Header(n int) []byte {
	h := []byte{byte(n), byte(n >> 8), byte(n >> 16), s.seq}
	s.seq++
	return h
}

// Close closes the connection (a FIN).
func (s *Session) Close() error { return s.raw.Close() }

// Reset closes the connection with a RST instead of a FIN.
func (s *Session) Reset() error {
	if tc, ok := s.raw.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	return s.raw.Close()
}

// OK sends an OK packet.
func (s *Session) OK(affected, insertID uint64) error {
	p := []byte{0x00}
	p = AppendLenenc(p, affected)
	p = AppendLenenc(p, insertID)
	p = binary.LittleEndian.AppendUint16(p, s.Status)
	p = append(p, 0, 0) // warnings
	return s.WritePacket(p)
}

// Err sends an ERR packet.
func (s *Session) Err(code uint16, state, msg string) error {
	p := []byte{0xff}
	p = binary.LittleEndian.AppendUint16(p, code)
	p = append(p, '#')
	p = append(p, (state + "HY000")[:5]...)
	p = append(p, msg...)
	return s.WritePacket(p)
}

// EOF ends column definitions or rows: an EOF packet, or with
// CLIENT_DEPRECATE_EOF an OK packet headed 0xfe. more sets
// SERVER_MORE_RESULTS_EXISTS.
func (s *Session) EOF(more bool) error {
	st := s.Status
	if more {
		st |= StatusMoreResults
	}
	if s.Caps&CapDeprecateEOF != 0 {
		p := []byte{0xfe, 0, 0}
		p = binary.LittleEndian.AppendUint16(p, st)
		return s.WritePacket(append(p, 0, 0))
	}
	p := []byte{0xfe, 0, 0}
	return s.WritePacket(binary.LittleEndian.AppendUint16(p, st))
}

// Columns sends a column count and one definition per name (VAR_STRING),
// then the EOF packet that ends them when the client still expects one.
func (s *Session) Columns(names ...string) error {
	if err := s.WritePacket(AppendLenenc(nil, uint64(len(names)))); err != nil {
		return err
	}
	return s.columnDefs(names)
}

func (s *Session) columnDefs(names []string) error {
	for _, n := range names {
		var p []byte
		for _, f := range []string{"def", "db", "t", "t", n, n} {
			p = AppendLenenc(p, uint64(len(f)))
			p = append(p, f...)
		}
		p = append(p, 0x0c)
		p = binary.LittleEndian.AppendUint16(p, 45) // utf8mb4_general_ci
		p = binary.LittleEndian.AppendUint32(p, 1024)
		p = append(p, 0xfd, 0, 0, 0, 0, 0) // VAR_STRING, flags, decimals, filler
		if err := s.WritePacket(p); err != nil {
			return err
		}
	}
	if len(names) > 0 && s.Caps&CapDeprecateEOF == 0 {
		return s.EOF(false)
	}
	return nil
}

// TextRow sends one text-protocol row; a nil value is NULL.
func (s *Session) TextRow(values ...[]byte) error {
	var p []byte
	for _, v := range values {
		if v == nil {
			p = append(p, 0xfb)
			continue
		}
		p = AppendLenenc(p, uint64(len(v)))
		p = append(p, v...)
	}
	return s.WritePacket(p)
}

// BinaryRow sends one binary-protocol row of VAR_STRING values; a nil
// value is NULL.
func (s *Session) BinaryRow(values ...[]byte) error {
	p := []byte{0x00}
	bitmap := make([]byte, (len(values)+7+2)/8)
	for i, v := range values {
		if v == nil {
			bitmap[(i+2)/8] |= 1 << ((i + 2) % 8)
		}
	}
	p = append(p, bitmap...)
	for _, v := range values {
		if v != nil {
			p = AppendLenenc(p, uint64(len(v)))
			p = append(p, v...)
		}
	}
	return s.WritePacket(p)
}

// PrepareOK answers COM_STMT_PREPARE: statement id, then nparams parameter
// definitions and the named columns.
func (s *Session) PrepareOK(id uint32, nparams int, columns ...string) error {
	p := []byte{0x00}
	p = binary.LittleEndian.AppendUint32(p, id)
	p = binary.LittleEndian.AppendUint16(p, uint16(len(columns)))
	p = binary.LittleEndian.AppendUint16(p, uint16(nparams))
	p = append(p, 0, 0, 0)
	if err := s.WritePacket(p); err != nil {
		return err
	}
	params := make([]string, nparams)
	for i := range params {
		params[i] = "?"
	}
	if err := s.columnDefs(params); err != nil {
		return err
	}
	return s.columnDefs(columns)
}

// AppendLenenc appends n as a length-encoded integer.
func AppendLenenc(b []byte, n uint64) []byte {
	switch {
	case n < 251:
		return append(b, byte(n))
	case n < 1<<16:
		return append(b, 0xfc, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(b, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xfe), n)
}

// ---- connection phase ----

func (s *Session) connect() error {
	nonce := make([]byte, 20)
	rand.Read(nonce)
	for i := range nonce {
		nonce[i] = nonce[i]%94 + 33 // printable, never NUL, as servers send
	}
	caps := uint32(CapLongPassword | CapFoundRows | CapLongFlag | CapConnectWithDB | CapProtocol41 |
		CapTransactions | CapSecureConn | CapMultiStatements | CapMultiResults | CapPSMultiResults |
		CapPluginAuth | CapConnectAttrs | CapPluginAuthLenenc)
	if !s.cfg.NoDeprecateEOF {
		caps |= CapDeprecateEOF
	}
	if s.cfg.TLS != nil {
		caps |= CapSSL
	}
	g := []byte{10}
	g = append(g, s.cfg.Version...)
	g = append(g, 0)
	g = binary.LittleEndian.AppendUint32(g, s.ID)
	g = append(g, nonce[:8]...)
	g = append(g, 0)
	g = binary.LittleEndian.AppendUint16(g, uint16(caps))
	g = append(g, 45)
	g = binary.LittleEndian.AppendUint16(g, s.Status)
	g = binary.LittleEndian.AppendUint16(g, uint16(caps>>16))
	g = append(g, 21)
	g = append(g, make([]byte, 10)...)
	g = append(g, nonce[8:]...)
	g = append(g, 0)
	g = append(g, s.cfg.Plugin...)
	g = append(g, 0)
	if err := s.WritePacket(g); err != nil {
		return err
	}
	p, err := s.ReadPacket()
	if err != nil {
		return err
	}
	if len(p) < 32 {
		return fmt.Errorf("handshake response of %d bytes", len(p))
	}
	s.Caps = binary.LittleEndian.Uint32(p)
	s.Collation = p[8]
	if s.Caps&CapSSL != 0 {
		if s.cfg.TLS == nil {
			return errors.New("client asked for TLS, which was not offered")
		}
		// The reader may hold the start of the client's TLS hello already.
		tc := tls.Server(bufferedConn{s.raw, s.r}, s.cfg.TLS)
		if err := tc.Handshake(); err != nil {
			return errRefused // the client refused the certificate, say
		}
		s.conn, s.r, s.TLS = tc, bufio.NewReader(tc), true
		if p, err = s.ReadPacket(); err != nil {
			return err
		}
		if len(p) < 32 {
			return fmt.Errorf("handshake response of %d bytes", len(p))
		}
		s.Caps = binary.LittleEndian.Uint32(p)
	} else if s.cfg.RequireTLS {
		s.Err(1045, "28000", "Access denied: connections must use TLS")
		return errRefused
	}
	resp, err := s.parseResponse(p[32:])
	if err != nil {
		return err
	}
	return s.authenticate(nonce, resp)
}

func (s *Session) parseResponse(p []byte) ([]byte, error) {
	cstr := func() (string, error) {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			return "", errors.New("unterminated string in handshake response")
		}
		v := string(p[:i])
		p = p[i+1:]
		return v, nil
	}
	var err error
	if s.User, err = cstr(); err != nil {
		return nil, err
	}
	var resp []byte
	switch {
	case s.Caps&CapPluginAuthLenenc != 0:
		n, k := lenenc(p)
		if k == 0 || uint64(len(p)-k) < n {
			return nil, errors.New("bad auth response length")
		}
		resp, p = p[k:k+int(n)], p[k+int(n):]
	case s.Caps&CapSecureConn != 0:
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return nil, errors.New("bad auth response length")
		}
		resp, p = p[1:1+int(p[0])], p[1+int(p[0]):]
	default:
		v, err := cstr()
		if err != nil {
			return nil, err
		}
		resp = []byte(v)
	}
	if s.Caps&CapConnectWithDB != 0 {
		if s.DB, err = cstr(); err != nil {
			return nil, err
		}
	}
	s.Plugin = s.cfg.Plugin
	if s.Caps&CapPluginAuth != 0 {
		if s.Plugin, err = cstr(); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

func lenenc(p []byte) (uint64, int) {
	if len(p) == 0 {
		return 0, 0
	}
	switch p[0] {
	case 0xfc:
		if len(p) < 3 {
			return 0, 0
		}
		return uint64(binary.LittleEndian.Uint16(p[1:])), 3
	case 0xfd:
		if len(p) < 4 {
			return 0, 0
		}
		return uint64(p[1]) | uint64(p[2])<<8 | uint64(p[3])<<16, 4
	case 0xfe:
		if len(p) < 9 {
			return 0, 0
		}
		return binary.LittleEndian.Uint64(p[1:]), 9
	}
	return uint64(p[0]), 1
}

func (s *Session) denied() error {
	s.Err(1045, "28000", fmt.Sprintf("Access denied for user '%s'", s.User))
	return errRefused
}

func (s *Session) authenticate(nonce, resp []byte) error {
	plugin := s.cfg.Plugin
	if s.cfg.SwitchTo != "" || s.Plugin != plugin {
		if s.cfg.SwitchTo != "" {
			plugin = s.cfg.SwitchTo
		}
		rand.Read(nonce)
		for i := range nonce {
			nonce[i] = nonce[i]%94 + 33
		}
		p := append([]byte{0xfe}, plugin...)
		p = append(p, 0)
		p = append(p, nonce...)
		if err := s.WritePacket(append(p, 0)); err != nil {
			return err
		}
		var err error
		if resp, err = s.ReadPacket(); err != nil {
			return err
		}
	}
	s.Plugin = plugin
	if s.cfg.AnyPassword {
		if plugin == "caching_sha2_password" {
			s.WritePacket([]byte{0x01, 0x03})
		}
		return s.OK(0, 0)
	}
	switch plugin {
	case "mysql_native_password":
		if !bytes.Equal(resp, NativeScramble(nonce, s.cfg.Password)) {
			return s.denied()
		}
	case "mysql_clear_password":
		if string(resp) != s.cfg.Password+"\x00" && string(resp) != s.cfg.Password {
			return s.denied()
		}
	case "caching_sha2_password":
		ok := subtle.ConstantTimeCompare(resp, SHA256Scramble(nonce, s.cfg.Password)) == 1
		if ok && !s.cfg.FullAuth {
			if err := s.WritePacket([]byte{0x01, 0x03}); err != nil {
				return err
			}
			break
		}
		if err := s.WritePacket([]byte{0x01, 0x04}); err != nil {
			return err
		}
		if err := s.fullAuth(nonce); err != nil {
			return err
		}
	default:
		return fmt.Errorf("plugin %s not supported by the fake server", plugin)
	}
	return s.OK(0, 0)
}

// fullAuth reads caching_sha2_password's password: in clear over TLS, else
// RSA-encrypted after handing out the public key.
func (s *Session) fullAuth(nonce []byte) error {
	p, err := s.ReadPacket()
	if err != nil {
		return err
	}
	if s.TLS {
		if string(p) != s.cfg.Password+"\x00" {
			return s.denied()
		}
		return nil
	}
	if len(p) != 1 || p[0] != 0x02 || s.cfg.RSAKey == nil {
		return s.denied()
	}
	der, err := x509.MarshalPKIXPublicKey(&s.cfg.RSAKey.PublicKey)
	if err != nil {
		return err
	}
	key := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	if err := s.WritePacket(append([]byte{0x01}, key...)); err != nil {
		return err
	}
	if p, err = s.ReadPacket(); err != nil {
		return err
	}
	plain, err := rsa.DecryptOAEP(sha1.New(), nil, s.cfg.RSAKey, p, nil)
	if err != nil {
		return s.denied()
	}
	for i := range plain {
		plain[i] ^= nonce[i%len(nonce)]
	}
	if string(plain) != s.cfg.Password+"\x00" {
		return s.denied()
	}
	return nil
}

// NativeScramble is mysql_native_password's proof of password for nonce.
func NativeScramble(nonce []byte, password string) []byte {
	if password == "" {
		return nil
	}
	h1 := sha1.Sum([]byte(password))
	h2 := sha1.Sum(h1[:])
	h := sha1.New()
	h.Write(nonce[:20])
	h.Write(h2[:])
	out := h.Sum(nil)
	for i := range out {
		out[i] ^= h1[i]
	}
	return out
}

// SHA256Scramble is caching_sha2_password's proof of password for nonce.
func SHA256Scramble(nonce []byte, password string) []byte {
	if password == "" {
		return nil
	}
	m1 := sha256.Sum256([]byte(password))
	m2 := sha256.Sum256(m1[:])
	h := sha256.New()
	h.Write(m2[:])
	h.Write(nonce[:20])
	out := h.Sum(nil)
	for i := range out {
		out[i] ^= m1[i]
	}
	return out
}

// bufferedConn reads through a bufio.Reader that may hold bytes already
// read from the connection.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }
