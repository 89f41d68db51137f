package wire

import (
	"encoding/binary"
	"errors"
	"io"

	"github.com/shakedown/shakedown/internal/wire/lenenc"
)

// Relay is the client half of a proxy: a connection dialled with
// Options.As sends another client's command packets unchanged and copies
// the server's reply, packet by packet and header by header, to that
// client. It parses only what it must to know where a reply ends, and,
// when asked, decodes a text result for a comparison on the way.

// Capability flags and status flags a proxy negotiates and follows.
const (
	CapLongPassword       = capLongPassword
	CapConnectWithDB      = capConnectWithDB
	CapCompress           = 1 << 5
	CapLocalFiles         = 1 << 7
	CapProtocol41         = capProtocol41
	CapSSL                = capSSL
	CapSecureConn         = capSecureConn
	CapMultiStatements    = capMultiStatements
	CapMultiResults       = capMultiResults
	CapPluginAuth         = capPluginAuth
	CapConnectAttrs       = capConnectAttrs
	CapPluginAuthLenenc   = capPluginAuthLenenc
	CapSessionTrack       = 1 << 23
	CapDeprecateEOF       = capDeprecateEOF
	CapOptionalMetadata   = 1 << 25 // MySQL 8: result sets may leave out their columns
	CapZstd               = 1 << 26
	CapQueryAttributes    = 1 << 27 // MySQL 8: COM_QUERY carries attributes before the SQL
	CapSSLVerifyServer    = 1 << 30
	CapRememberOptions    = 1 << 31
	StatusInTrans         = 0x0001
	StatusAutocommit      = 0x0002
	StatusMoreResults     = statusMoreResults
	StatusInTransReadOnly = 0x2000

	// handshakeCaps only shape the connection phase, which each hop of a
	// proxy runs on its own; every other flag shapes the commands' replies
	// and must agree on both hops.
	handshakeCaps = capLongPassword | capConnectWithDB | capProtocol41 | capSecureConn |
		capPluginAuth | capConnectAttrs | capPluginAuthLenenc
)

// Commands a proxy tells apart.
const (
	ComQuit             = comQuit
	ComInitDB           = 0x02
	ComQuery            = comQuery
	ComFieldList        = 0x04
	ComStatistics       = 0x09
	ComChangeUser       = 0x11
	ComStmtPrepare      = comStmtPrepare
	ComStmtExecute      = comStmtExecute
	ComStmtSendLongData = 0x18
	ComStmtClose        = comStmtClose
	ComStmtReset        = comStmtReset
	ComStmtFetch        = 0x1c
	ComResetConnection  = 0x1f
	ComBinlogDump       = 0x12
	ComRegisterSlave    = 0x15
	ComBinlogDumpGTID   = 0x1e
)

// Handshake is what a connection dialled for another client asks of the
// server: the client's capability flags (those of the command phase are
// kept, the connection phase's are this package's own; compression is
// never asked), MariaDB's extended flags, and the client's collation.
type Handshake struct {
	Caps      uint32
	ExtCaps   uint32
	Collation byte
}

// ServerCapabilities are the flags the server's greeting offered (and
// MariaDB's extended ones), for a proxy to offer its clients.
func (c *Conn) ServerCapabilities() (caps, ext uint32) { return c.srvCaps, c.srvExt }

// Capabilities are the flags the connection uses: what it asked for that
// the server offered.
func (c *Conn) Capabilities() (caps, ext uint32) { return c.caps, c.ext }

// Status is the server status of the last OK or EOF packet read.
func (c *Conn) Status() uint16 { return c.status }

// NativeScramble is mysql_native_password's proof of password for nonce,
// as a client sends it (nil for an empty password): a proxy checks its
// clients by computing it too.
func NativeScramble(nonce []byte, password string) []byte { return nativeScramble(nonce, password) }

// ErrLocalFile is returned by Relay when the server asks for a local file
// (LOAD DATA LOCAL), which a proxy never offers its clients; the
// connection is then broken.
var ErrLocalFile = errLocalFile

// Relay sends cmd, a client's whole command payload, unchanged, and copies
// every packet of the server's reply to w as it reads it, headers
// included, returning when the reply ends (at once for the commands that
// have none). When r is set and cmd is COM_QUERY or COM_STMT_EXECUTE, the
// result sets are also decoded into r (binary rows as text, as ReadReply
// turns them). After a COM_STMT_PREPARE answered with OK, Prepared tells
// the statement's id and parameters. An ERR reply is relayed and returned as a
// *mysql.MySQLError with the connection intact; any other error leaves
// the connection broken (see Broken) and what w has received incomplete.
// w is written in pieces; the caller flushes it.
func (c *Conn) Relay(cmd []byte, w io.Writer, r RowReader) (Result, error) {
	var res Result
	if c.dead != nil {
		return res, c.dead
	}
	if len(cmd) == 0 {
		return res, errors.New("wire: an empty command to relay")
	}
	b := c.startCommand(cmd[0])
	b = append(b, cmd[1:]...)
	err := c.writePacket(b)
	if cap(b) <= 64<<10 {
		c.wbuf = b[:0]
	}
	if err != nil {
		return res, err
	}
	c.relayTo = w
	defer func() { c.relayTo = nil }()
	if cmd[0] != comQuery && cmd[0] != comStmtExecute {
		r = nil
	}
	switch cmd[0] {
	case comQuit, comStmtClose, ComStmtSendLongData:
		return res, nil
	case comStmtPrepare:
		return res, c.relayPrepare()
	case ComFieldList:
		return res, c.relayColumns(0)
	case ComStatistics:
		_, err := c.relayPacket()
		return res, err
	case ComStmtFetch:
		return res, c.relayRows(nil, 0, false, &res)
	}
	return res, c.relayResult(r, cmd[0] == comStmtExecute, &res)
}

// Prepared is the statement id and the number of parameters of the last
// COM_STMT_PREPARE that Relay relayed with an OK.
func (c *Conn) Prepared() (id uint32, params int) { return c.prepID, c.prepParams }

// relayPacket reads one payload, joining those of 16 MiB - 1 or more, and
// copies its packets to relayTo. The payload is valid until the next read.
func (c *Conn) relayPacket() ([]byte, error) {
	if c.dead != nil {
		return nil, c.dead
	}
	var hdr [4]byte
	c.pkt = c.pkt[:0]
	for joined := false; ; joined = true {
		n, err := c.header()
		if err != nil {
			return nil, err
		}
		hdr[0], hdr[1], hdr[2], hdr[3] = byte(n), byte(n>>8), byte(n>>16), c.seq-1
		if _, err := c.relayTo.Write(hdr[:]); err != nil {
			return nil, c.fail(&relayWriteError{err})
		}
		if n == 0 && !joined {
			return nil, c.fail(errEmptyPacket)
		}
		if !joined && n < maxPayload && n <= len(c.rbuf) {
			if err := c.fill(n); err != nil {
				return nil, err
			}
			p := c.rbuf[c.rpos : c.rpos+n]
			c.rpos += n
			if _, err := c.relayTo.Write(p); err != nil {
				return nil, c.fail(&relayWriteError{err})
			}
			return p, nil
		}
		start := len(c.pkt)
		if c.pkt, err = c.appendPayload(c.pkt, n); err != nil {
			return nil, err
		}
		if _, err := c.relayTo.Write(c.pkt[start:]); err != nil {
			return nil, c.fail(&relayWriteError{err})
		}
		if n < maxPayload {
			return c.pkt, nil
		}
	}
}

// relayWriteError is a failure to write to the relay's client, told apart
// from the server's failures.
type relayWriteError struct{ err error }

func (e *relayWriteError) Error() string { return "write to the client: " + e.err.Error() }
func (e *relayWriteError) Unwrap() error { return e.err }

// ClientGone reports whether err, from Relay, is a failure to write to the
// client rather than the server's.
func ClientGone(err error) bool {
	var we *relayWriteError
	return errors.As(err, &we)
}

// relayResult relays the reply to COM_QUERY, COM_STMT_EXECUTE (binaryRows:
// its rows are in the binary protocol) and the commands answered by OK,
// ERR or EOF: result sets follow one another while the status says more
// results exist.
func (c *Conn) relayResult(r RowReader, binaryRows bool, res *Result) error {
	for {
		p, err := c.relayPacket()
		if err != nil {
			return err
		}
		switch {
		case p[0] == 0x00:
			c.ok(p, res)
		case p[0] == 0xff:
			return serverError(p)
		case p[0] == 0xfe && len(p) < 9:
			c.endOfRows(p) // COM_SET_OPTION's and COM_DEBUG's EOF
		case p[0] == 0xfb:
			return c.fail(errLocalFile)
		default:
			ncols, n := lenenc.Read(p)
			if n == 0 || ncols == 0 || ncols > 4096 {
				return c.fail(errMalformed)
			}
			if err := c.relayColumnsInto(r, int(ncols)); err != nil {
				return err
			}
			if binaryRows && c.caps&capDeprecateEOF == 0 && c.status&statusCursorExists != 0 {
				// An execution that opened a cursor: its rows come with
				// COM_STMT_FETCH.
				return nil
			}
			if err := c.relayRows(r, int(ncols), binaryRows, res); err != nil {
				return err
			}
		}
		if c.status&statusMoreResults == 0 {
			return nil
		}
	}
}

// relayColumnsInto relays a result set's n column definitions (and the EOF
// after them unless CLIENT_DEPRECATE_EOF), decoding them for r.
func (c *Conn) relayColumnsInto(r RowReader, n int) error {
	cols := c.cols[:0]
	for range n {
		p, err := c.relayPacket()
		if err != nil {
			return err
		}
		if r != nil {
			col, err := parseColumn(p)
			if err != nil {
				return c.fail(err)
			}
			cols = append(cols, col)
		}
	}
	if c.caps&capDeprecateEOF == 0 {
		p, err := c.relayPacket()
		if err != nil {
			return err
		}
		if p[0] == 0xfe && len(p) >= 5 {
			c.status = binary.LittleEndian.Uint16(p[3:]) // a cursor's says so
		}
	}
	c.cols = cols
	if r != nil {
		r.Columns(cols)
	}
	return nil
}

// relayRows relays rows up to the ERR or end packet; with r, rows of
// ncols values are decoded for it: text rows, or binary rows of the
// columns relayColumnsInto kept.
func (c *Conn) relayRows(r RowReader, ncols int, binaryRows bool, res *Result) error {
	res.HasRows = true
	for {
		p, err := c.relayPacket()
		if err != nil {
			return err
		}
		if (p[0] == 0xff || p[0] == 0xfe) && len(p) < maxPayload {
			return c.endOfRowsWarnings(p, res)
		}
		res.Rows++
		if r != nil {
			var vals [][]byte
			if binaryRows {
				vals, err = c.binaryValues(p, c.cols)
			} else {
				vals, err = c.textValues(p, ncols)
			}
			if err != nil {
				return c.fail(err)
			}
			r.Row(vals)
		}
	}
}

// relayColumns relays column definitions up to an EOF (or the OK that
// stands for it) or ERR: COM_FIELD_LIST's reply. n > 0 relays exactly n
// definitions and then the EOF unless CLIENT_DEPRECATE_EOF.
func (c *Conn) relayColumns(n int) error {
	if n > 0 {
		return c.relayColumnsInto(nil, n)
	}
	for {
		p, err := c.relayPacket()
		if err != nil {
			return err
		}
		switch {
		case p[0] == 0xff:
			return serverError(p)
		case p[0] == 0xfe && len(p) < maxPayload:
			return c.endOfRows(p)
		}
	}
}

// relayPrepare relays COM_STMT_PREPARE's reply: its OK, then the
// parameters' definitions and the columns', each list ended by an EOF
// unless CLIENT_DEPRECATE_EOF.
func (c *Conn) relayPrepare() error {
	p, err := c.relayPacket()
	if err != nil {
		return err
	}
	if p[0] == 0xff {
		return serverError(p)
	}
	if p[0] != 0x00 || len(p) < 9 {
		return c.fail(errMalformed)
	}
	ncols := int(binary.LittleEndian.Uint16(p[5:]))
	nparams := int(binary.LittleEndian.Uint16(p[7:]))
	c.prepID, c.prepParams = binary.LittleEndian.Uint32(p[1:]), nparams
	if nparams > 0 {
		if err := c.relayColumns(nparams); err != nil {
			return err
		}
	}
	if ncols > 0 {
		return c.relayColumns(ncols)
	}
	return nil
}
