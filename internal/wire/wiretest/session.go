package wiretest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"

	"github.com/shakedown/shakedown/internal/wire/lenenc"
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
	p = lenenc.Append(p, affected)
	p = lenenc.Append(p, insertID)
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
	if err := s.WritePacket(lenenc.Append(nil, uint64(len(names)))); err != nil {
		return err
	}
	return s.columnDefs(names)
}

func (s *Session) columnDefs(names []string) error {
	for _, n := range names {
		var p []byte
		for _, f := range []string{"def", "db", "t", "t", n, n} {
			p = lenenc.Append(p, uint64(len(f)))
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
		p = lenenc.Append(p, uint64(len(v)))
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
			p = lenenc.Append(p, uint64(len(v)))
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

// bufferedConn reads through a bufio.Reader that may hold bytes already
// read from the connection.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }
