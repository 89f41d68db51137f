package wire

import (
	"encoding/binary"
	"errors"

	"github.com/shakedown/shakedown/internal/wire/lenenc"
)

// okPacket parses an OK (or a 0xfe-headed end-of-rows OK) packet.
func okPacket(p []byte) (affected, insertID uint64, status uint16) {
	p = p[1:]
	affected, n := lenenc.Read(p)
	p = p[n:]
	insertID, n = lenenc.Read(p)
	p = p[n:]
	if len(p) >= 2 {
		status = binary.LittleEndian.Uint16(p)
	}
	return
}

// readResult reads a complete reply to COM_QUERY or COM_STMT_EXECUTE,
// discarding any rows. binaryRows is set for COM_STMT_EXECUTE. An ERR
// packet, wherever it comes, ends the reply.
func (c *Conn) readResult(binaryRows bool) (Result, error) {
	var res Result
	for {
		p, err := c.readPacket()
		if err != nil {
			return res, err
		}
		switch p[0] {
		case 0x00:
			aff, id, st := okPacket(p)
			res.Affected += int64(aff)
			res.InsertID = int64(id)
			c.status = st
		case 0xff:
			return res, serverError(p)
		case 0xfb:
			// Never asked for: CLIENT_LOCAL_FILES is not sent.
			return res, c.fail(errLocalFile)
		default:
			if err := c.readRows(p, binaryRows, &res); err != nil {
				return res, err
			}
		}
		if c.status&statusMoreResults == 0 {
			return res, nil
		}
	}
}

var errMalformed = errors.New("wire: malformed reply from the server")

// errLocalFile: the server asked for a file (LOAD DATA LOCAL), which is
// never offered (CLIENT_LOCAL_FILES is not sent).
var errLocalFile = errors.New("wire: the server asked for a local file (LOAD DATA LOCAL), which this path does not send")

// readRows reads the columns and rows of one result set; first is the
// column-count packet. It leaves the status flags of the end packet in
// c.status.
func (c *Conn) readRows(first []byte, binaryRows bool, res *Result) error {
	ncols, n := lenenc.Read(first)
	if n == 0 || ncols == 0 {
		return c.fail(errMalformed)
	}
	metadata := true
	if binaryRows && c.ext&extCapCacheMetadata != 0 && len(first) > n {
		metadata = first[n] != 0
	}
	if metadata {
		for i := uint64(0); i < ncols; i++ {
			if _, err := c.readPacket(); err != nil {
				return err
			}
		}
		if c.caps&capDeprecateEOF == 0 {
			if _, err := c.readPacket(); err != nil {
				return err
			}
		}
	}
	res.HasRows = true
	for {
		if c.dead != nil {
			return c.dead
		}
		n, err := c.header()
		if err != nil {
			return err
		}
		if n == 0 {
			return c.fail(errEmptyPacket)
		}
		if n <= len(c.rbuf) {
			if err := c.fill(n); err != nil {
				return err
			}
			p := c.rbuf[c.rpos : c.rpos+n]
			c.rpos += n
			if p[0] == 0xff || p[0] == 0xfe {
				return c.endOfRows(p)
			}
			res.Rows++
			continue
		}
		// Only a row is this large, unless a packet headed 0xff or 0xfe
		// below 16 MiB - 1 (an ERR or an end-of-rows OK) says otherwise;
		// a row is skipped without being buffered.
		if err := c.fill(1); err != nil {
			return err
		}
		if b := c.rbuf[c.rpos]; (b == 0xff || b == 0xfe) && n < maxPayload {
			p, err := c.appendPayload(c.pkt[:0], n)
			if err != nil {
				return err
			}
			c.pkt = p
			return c.endOfRows(p)
		}
		for {
			if err := c.skip(n); err != nil {
				return err
			}
			if n < maxPayload {
				break
			}
			if n, err = c.header(); err != nil {
				return err
			}
		}
		res.Rows++
	}
}

// endOfRowsWarnings is endOfRows for rows read into res: an end packet's
// warning count goes into res.
func (c *Conn) endOfRowsWarnings(p []byte, res *Result) error {
	if p[0] == 0xfe {
		if c.caps&capDeprecateEOF != 0 {
			res.Warnings = okWarnings(p)
		} else if len(p) >= 3 {
			res.Warnings = int(binary.LittleEndian.Uint16(p[1:]))
		}
	}
	return c.endOfRows(p)
}

// endOfRows handles the ERR or end packet (EOF, or OK headed 0xfe) after
// the rows.
func (c *Conn) endOfRows(p []byte) error {
	if p[0] == 0xff {
		return serverError(p)
	}
	if c.caps&capDeprecateEOF != 0 {
		_, _, c.status = okPacket(p)
		return nil
	}
	if len(p) >= 5 {
		c.status = binary.LittleEndian.Uint16(p[3:])
	} else {
		c.status &^= statusMoreResults // a short EOF says nothing more follows
	}
	return nil
}
