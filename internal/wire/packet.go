package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/go-sql-driver/mysql"
)

// Packets: a 3-byte length, a sequence number and the payload. A payload
// of 16 MiB - 1 bytes or more goes as packets of 16 MiB - 1 and a last,
// shorter one (empty when the length divides evenly).

// read reads what the server sent, through TLS when the connection has it.
func (c *Conn) read(p []byte) (int, error) {
	if c.tc != nil {
		return c.tc.Read(p)
	}
	return c.s.rawRead(p)
}

func (c *Conn) write(p []byte) error {
	if c.tc != nil {
		_, err := c.tc.Write(p)
		return err
	}
	return c.s.rawWrite(p)
}

// fill makes rbuf hold at least need (<= len(rbuf)) unread bytes.
func (c *Conn) fill(need int) error {
	if c.rend-c.rpos >= need {
		return nil
	}
	if c.rpos == c.rend {
		c.rpos, c.rend = 0, 0
	} else if c.rpos+need > len(c.rbuf) {
		c.rend = copy(c.rbuf, c.rbuf[c.rpos:c.rend])
		c.rpos = 0
	}
	for c.rend-c.rpos < need {
		n, err := c.read(c.rbuf[c.rend:])
		if err != nil {
			return c.fail(fmt.Errorf("read from server: %w", err))
		}
		c.rend += n
	}
	return nil
}

// header reads the next packet header and returns its payload length.
func (c *Conn) header() (int, error) {
	if err := c.fill(4); err != nil {
		return 0, err
	}
	h := c.rbuf[c.rpos : c.rpos+4]
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	if h[3] != c.seq {
		return 0, c.outOfSequence(h[3], n)
	}
	c.seq++
	c.rpos += 4
	return n, nil
}

// outOfSequence fails the connection on a packet with the wrong sequence
// number. A server that closes an idle session sends an ERR packet out of
// sequence: its error is the one to report.
func (c *Conn) outOfSequence(got byte, n int) error {
	want := c.seq
	c.rpos += 4
	if n > 0 && n <= len(c.rbuf) && c.fill(n) == nil && c.rbuf[c.rpos] == 0xff {
		return c.fail(serverError(c.rbuf[c.rpos : c.rpos+n]))
	}
	return c.fail(fmt.Errorf("wire: packet %d out of sequence, want %d", got, want))
}

var errEmptyPacket = errors.New("wire: empty packet from the server")

// readPacket returns the next payload, which stays valid until the next
// read. It is never empty.
func (c *Conn) readPacket() ([]byte, error) {
	if c.dead != nil {
		return nil, c.dead
	}
	n, err := c.header()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, c.fail(errEmptyPacket)
	}
	if n <= len(c.rbuf) {
		if err := c.fill(n); err != nil {
			return nil, err
		}
		p := c.rbuf[c.rpos : c.rpos+n]
		c.rpos += n
		return p, nil
	}
	// Larger than the buffer: into pkt, joining the packets of a payload
	// of 16 MiB - 1 or more.
	c.pkt = c.pkt[:0]
	for {
		if c.pkt, err = c.appendPayload(c.pkt, n); err != nil {
			return nil, err
		}
		if n < maxPayload {
			return c.pkt, nil
		}
		if n, err = c.header(); err != nil {
			return nil, err
		}
	}
}

// appendPayload appends the n payload bytes that follow a header to dst,
// reading straight into dst past what rbuf holds. dst grows as bytes
// arrive, so a header that lies about its length costs no more memory
// than the bytes really sent.
func (c *Conn) appendPayload(dst []byte, n int) ([]byte, error) {
	k := min(n, c.rend-c.rpos)
	dst = append(dst, c.rbuf[c.rpos:c.rpos+k]...)
	c.rpos += k
	for left := n - k; left > 0; {
		dst = slices.Grow(dst, min(left, 1<<20))
		m, err := c.read(dst[len(dst):min(cap(dst), len(dst)+left)])
		if err != nil {
			return nil, c.fail(fmt.Errorf("read from server: %w", err))
		}
		dst = dst[:len(dst)+m]
		left -= m
	}
	return dst, nil
}

// skip discards the n payload bytes that follow a header.
func (c *Conn) skip(n int) error {
	k := min(n, c.rend-c.rpos)
	c.rpos += k
	n -= k
	for n > 0 {
		m, err := c.read(c.rbuf)
		if err != nil {
			return c.fail(fmt.Errorf("read from server: %w", err))
		}
		// What comes after the payload stays buffered.
		k := min(n, m)
		c.rpos, c.rend = k, m
		n -= k
	}
	return nil
}

// writePacket sends buf, whose first 4 bytes are room for the header. A
// payload of 16 MiB - 1 or more goes as several packets: each header after
// the first overwrites the last 4 bytes of the packet before it, which are
// sent by then.
func (c *Conn) writePacket(buf []byte) error {
	if c.dead != nil {
		return c.dead
	}
	for off := 0; ; {
		n := min(len(buf)-off-4, maxPayload)
		buf[off], buf[off+1], buf[off+2], buf[off+3] = byte(n), byte(n>>8), byte(n>>16), c.seq
		c.seq++
		if err := c.write(buf[off : off+4+n]); err != nil {
			return c.fail(fmt.Errorf("write to server: %w", err))
		}
		if n < maxPayload {
			return nil
		}
		off += n
	}
}

func (c *Conn) startCommand(cmd byte) []byte {
	c.seq = 0
	c.pending, c.pendingStmt = 0, nil
	// Bytes left over from an earlier reply would be a protocol bug; drop them.
	c.rpos, c.rend = 0, 0
	return append(c.wbuf[:0], 0, 0, 0, 0, cmd)
}

func serverError(p []byte) error {
	e := &mysql.MySQLError{}
	if len(p) >= 3 {
		e.Number = binary.LittleEndian.Uint16(p[1:3])
	}
	rest := p[min(len(p), 3):]
	if len(rest) >= 6 && rest[0] == '#' {
		copy(e.SQLState[:], rest[1:6])
		rest = rest[6:]
	}
	e.Message = string(rest)
	return e
}
