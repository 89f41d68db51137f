package mirror

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire"
	"github.com/shakedown/shakedown/internal/wire/lenenc"
)

// The server half: the mirror's side of a client's connection. It frames
// packets, greets, and checks the client's password itself; after that a
// session relays the client's packets to the control unchanged.

// maxClientPacket bounds one payload from a client (a statement): 1 GiB,
// the most max_allowed_packet may be, as the control's own limit is its
// to apply (a statement over it fails as it does directly). The payload grows as its
// packets arrive, so that a length header that lies costs at most one
// packet's 16 MiB.
const maxClientPacket = 1 << 30

// keptClientBuf is the most a session keeps of the buffer of its largest
// payload once it is done with it.
const keptClientBuf = 1 << 20

// offeredCaps are the flags the mirror may offer its clients: those of
// the control's greeting that it relays faithfully. CLIENT_SSL is the
// mirror's own, offered with a certificate (tls.go). Left out for now:
// compression (the mirror does not speak it to clients yet), LOCAL
// INFILE (the file would be read on the mirror's host), MySQL 8's query
// attributes and optional result metadata (they change the packets the
// mirror reads), and anything it does not know.
const offeredCaps = wire.CapLongPassword | 1<<1 /* FOUND_ROWS */ | 1<<2 /* LONG_FLAG */ |
	wire.CapConnectWithDB | 1<<4 /* NO_SCHEMA */ | 1<<6 /* ODBC */ | 1<<8 /* IGNORE_SPACE */ |
	wire.CapProtocol41 | 1<<10 /* INTERACTIVE */ | 1<<12 /* IGNORE_SIGPIPE */ | 1<<13 /* TRANSACTIONS */ |
	wire.CapSecureConn | wire.CapMultiStatements | wire.CapMultiResults | 1<<18 /* PS_MULTI_RESULTS */ |
	wire.CapPluginAuth | wire.CapConnectAttrs | wire.CapPluginAuthLenenc | wire.CapSessionTrack |
	wire.CapDeprecateEOF

// mustCaps are the flags without which the mirror does not serve a client.
const mustCaps = wire.CapProtocol41 | wire.CapSecureConn

const nativePlugin = "mysql_native_password"

// loginTimeout bounds a client's connection phase, from the greeting to
// the check of its password.
const loginTimeout = 10 * time.Second

var errMalformedPacket = errors.New("malformed packet from the client")

// clientConn frames packets on a client's socket. One goroutine uses it.
type clientConn struct {
	// nc is the plain socket, closed to end the connection; r and w frame
	// over it, or over tls once the client asked for TLS.
	nc  net.Conn
	tls *tls.Conn
	r   *bufio.Reader
	w   *bufio.Writer
	seq byte
	buf []byte
}

func newClientConn(nc net.Conn) *clientConn {
	return &clientConn{nc: nc, r: bufio.NewReaderSize(nc, 16<<10), w: bufio.NewWriterSize(nc, 16<<10)}
}

// readPacket reads one payload, joining those of 16 MiB - 1 or more; it
// is valid until the next read. A packet out of sequence, or a payload
// over maxClientPacket, is malformed.
func (c *clientConn) readPacket() ([]byte, error) {
	if cap(c.buf) > keptClientBuf {
		c.buf = nil // a big statement's buffer is not kept for the session's life
	}
	c.buf = c.buf[:0]
	var h [4]byte
	for {
		if _, err := io.ReadFull(c.r, h[:]); err != nil {
			return nil, err
		}
		n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
		if h[3] != c.seq {
			return nil, fmt.Errorf("%w: packet %d out of sequence, want %d", errMalformedPacket, h[3], c.seq)
		}
		c.seq++
		if len(c.buf)+n > maxClientPacket {
			return nil, fmt.Errorf("%w: a payload over %d MiB", errMalformedPacket, maxClientPacket>>20)
		}
		start := len(c.buf)
		c.buf = append(c.buf, make([]byte, n)...)
		if _, err := io.ReadFull(c.r, c.buf[start:]); err != nil {
			return nil, err
		}
		if n < 1<<24-1 {
			break
		}
	}
	if len(c.buf) == 0 {
		return nil, fmt.Errorf("%w: an empty packet", errMalformedPacket)
	}
	return c.buf, nil
}

// writePacket buffers payload p as packets from c.seq; flush sends them.
func (c *clientConn) writePacket(p []byte) error {
	for {
		n := min(len(p), 1<<24-1)
		if _, err := c.w.Write([]byte{byte(n), byte(n >> 8), byte(n >> 16), c.seq}); err != nil {
			return err
		}
		c.seq++
		if _, err := c.w.Write(p[:n]); err != nil {
			return err
		}
		p = p[n:]
		if n < 1<<24-1 {
			return nil
		}
	}
}

func (c *clientConn) flush() error { return c.w.Flush() }

// writeError sends an ERR packet and flushes it.
func (c *clientConn) writeError(code uint16, state, msg string) error {
	p := []byte{0xff, byte(code), byte(code >> 8), '#'}
	p = append(p, state...)
	p = append(p, msg...)
	if err := c.writePacket(p); err != nil {
		return err
	}
	return c.flush()
}

// writeServerError sends the control's error, or err said as the
// mirror's own.
func (c *clientConn) writeServerError(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		state := string(me.SQLState[:])
		if me.SQLState == [5]byte{} {
			state = "HY000"
		}
		return c.writeError(me.Number, state, me.Message)
	}
	return c.writeError(target.ERUnknown, "HY000", "mirror: "+err.Error())
}

// writeOK sends an OK packet with the session's status and flushes it.
func (c *clientConn) writeOK(caps uint32, status uint16) error {
	p := []byte{0x00, 0, 0}
	p = binary.LittleEndian.AppendUint16(p, status)
	p = append(p, 0, 0)
	if caps&wire.CapSessionTrack != 0 {
		p = append(p, 0) // an empty info string
	}
	if err := c.writePacket(p); err != nil {
		return err
	}
	return c.flush()
}

// hello is what a client asked for in its handshake response.
type hello struct {
	caps      uint32
	collation byte
	user      string
	auth      []byte
	db        string
	plugin    string
}

// greet runs the connection phase with a client: a greeting that offers
// the control's flags (as far as offeredCaps allows, and CLIENT_SSL with
// tlsCfg) with a random scramble, the client's response (over TLS when
// it asked for it; requireTLS refuses a client that did not), an auth
// switch to
// mysql_native_password if the client answered as another plugin, and
// the check of its password. It leaves the OK to the caller, which first
// opens the session's control connection. ERR packets for a refused
// client are sent here.
func (c *clientConn) greet(g greeting, accounts map[string]string, tlsCfg *tls.Config, requireTLS bool) (*hello, error) {
	// A client that stalls while it logs in (in its TLS handshake, say)
	// gives its socket back after loginTimeout.
	c.nc.SetDeadline(time.Now().Add(loginTimeout))
	defer c.nc.SetDeadline(time.Time{})
	nonce := make([]byte, 20)
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	for i := range nonce {
		nonce[i] = nonce[i]%94 + 33 // printable and never NUL, as servers send
	}
	caps := g.caps&offeredCaps | mustCaps | wire.CapPluginAuth | wire.CapLongPassword
	if tlsCfg != nil {
		caps |= wire.CapSSL
	}
	p := []byte{10}
	p = append(p, g.version...)
	p = append(p, 0)
	p = binary.LittleEndian.AppendUint32(p, g.connID)
	p = append(p, nonce[:8]...)
	p = append(p, 0)
	p = binary.LittleEndian.AppendUint16(p, uint16(caps))
	p = append(p, g.collation)
	p = binary.LittleEndian.AppendUint16(p, g.status)
	p = binary.LittleEndian.AppendUint16(p, uint16(caps>>16))
	p = append(p, 21)
	p = append(p, make([]byte, 10)...)
	p = append(p, nonce[8:]...)
	p = append(p, 0)
	p = append(p, nativePlugin...)
	p = append(p, 0)
	c.seq = 0
	if err := c.writePacket(p); err != nil {
		return nil, err
	}
	if err := c.flush(); err != nil {
		return nil, err
	}
	resp, err := c.readPacket()
	if err != nil {
		return nil, err
	}
	if len(resp) == sslRequestLen && caps&wire.CapSSL != 0 && binary.LittleEndian.Uint32(resp)&wire.CapSSL != 0 {
		// An SSLRequest: the full response comes next, over TLS, as the
		// packet after it.
		if err := c.startTLS(tlsCfg); err != nil {
			return nil, err
		}
		if resp, err = c.readPacket(); err != nil {
			return nil, err
		}
	}
	if requireTLS && c.tls == nil {
		c.writeError(target.ERSecureTransportRequired, "HY000", insecureTransportMsg)
		return nil, errPlainRefused
	}
	h, err := parseHello(resp, caps)
	if err != nil {
		c.writeError(target.ERUnknown, "08S01", "mirror: "+err.Error())
		return nil, err
	}
	if h.plugin != nativePlugin && h.plugin != "" {
		// Ask for the one plugin the mirror checks.
		sw := append([]byte{0xfe}, nativePlugin...)
		sw = append(sw, 0)
		sw = append(append(sw, nonce...), 0)
		if err := c.writePacket(sw); err != nil {
			return nil, err
		}
		if err := c.flush(); err != nil {
			return nil, err
		}
		if h.auth, err = c.readPacket(); err != nil && !errors.Is(err, errMalformedPacket) {
			return nil, err
		} else if err != nil {
			h.auth = nil // an empty answer: no password
		}
		h.auth = bytes.Clone(h.auth)
	}
	pw, known := accounts[h.user]
	want := wire.NativeScramble(nonce, pw)
	if !known || subtle.ConstantTimeCompare(want, h.auth) != 1 {
		using := "NO"
		if len(h.auth) > 0 {
			using = "YES"
		}
		host, _, _ := net.SplitHostPort(c.nc.RemoteAddr().String())
		c.writeError(target.ERAccessDenied, "28000", fmt.Sprintf("Access denied for user '%s'@'%s' (using password: %s)", h.user, host, using))
		return nil, fmt.Errorf("access denied for user %q", h.user)
	}
	return h, nil
}

// sslRequestLen is the length of an SSLRequest, the first 32 bytes of a
// HandshakeResponse41 (flags, packet size, collation, filler), which a
// full response follows with a user name.
const sslRequestLen = 32

// parseHello reads a HandshakeResponse41 to a greeting that offered caps.
func parseHello(p []byte, offered uint32) (*hello, error) {
	if len(p) < sslRequestLen {
		return nil, errors.New("handshake response too short")
	}
	if len(p) == sslRequestLen && offered&wire.CapSSL == 0 {
		return nil, errors.New("a request for TLS, which this mirror does not offer: start it with --tls-cert and --tls-key")
	}
	// CLIENT_SSL is this hop's alone: the session's own on the control is
	// as the control URL says.
	h := &hello{caps: binary.LittleEndian.Uint32(p) & offered &^ wire.CapSSL, collation: p[8]}
	if h.caps&mustCaps != mustCaps {
		return nil, errors.New("the client does not speak protocol 4.1 with secure authentication")
	}
	p = p[32:]
	i := bytes.IndexByte(p, 0)
	if i < 0 {
		return nil, errors.New("handshake response without a user name")
	}
	h.user, p = string(p[:i]), p[i+1:]
	var n uint64
	var w int
	if h.caps&wire.CapPluginAuthLenenc != 0 {
		n, w = lenenc.Read(p)
	} else if len(p) > 0 {
		n, w = uint64(p[0]), 1
	}
	if w == 0 || uint64(len(p)-w) < n {
		return nil, errors.New("handshake response with a truncated password")
	}
	h.auth, p = bytes.Clone(p[w:w+int(n)]), p[w+int(n):]
	if h.caps&wire.CapConnectWithDB != 0 && len(p) > 0 {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			i = len(p)
		}
		h.db, p = string(p[:i]), p[min(i+1, len(p)):]
	}
	if h.caps&wire.CapPluginAuth != 0 && len(p) > 0 {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			i = len(p)
		}
		h.plugin = string(p[:i])
	}
	return h, nil
}

// greeting is what the mirror says of itself to a client: the control's
// version, flags, collation and status, and its own connection id.
type greeting struct {
	version   string
	connID    uint32
	caps      uint32
	collation byte
	status    uint16
}
