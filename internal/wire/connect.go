package wire

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/wire/lenenc"
)

// Capability flags.
const (
	capLongPassword     = 1 << 0 // CLIENT_MYSQL to MariaDB: clear in its greeting, it has extended flags
	capFoundRows        = 1 << 1
	capLongFlag         = 1 << 2
	capConnectWithDB    = 1 << 3
	capProtocol41       = 1 << 9
	capSSL              = 1 << 11
	capTransactions     = 1 << 13
	capSecureConn       = 1 << 15
	capMultiStatements  = 1 << 16
	capMultiResults     = 1 << 17
	capPluginAuth       = 1 << 19
	capConnectAttrs     = 1 << 20
	capPluginAuthLenenc = 1 << 21
	capDeprecateEOF     = 1 << 24

	extCapCacheMetadata = 1 << 4 // MariaDB: a prepared statement's metadata is sent once
)

// Dial connects with cfg: the connection phase (TLS as cfg says,
// authentication, collation, charset and other parameters as session
// variables) is bounded by ctx and cfg.Timeout. Cancelling ctx after Dial
// returns interrupts whatever the connection is waiting for; the Conn is
// then broken. Compression is refused with ErrCompression.
//
// Honoured from cfg: Net, Addr, DialFunc, User, Passwd, DBName, TLS and
// TLSConfig, AllowFallbackToPlaintext, AllowNativePasswords,
// AllowCleartextPasswords, Collation, charset, Params, ClientFoundRows,
// MultiStatements, ConnectionAttributes, Timeout, ReadTimeout,
// WriteTimeout and Loc. A caching_sha2_password server's RSA key is asked
// of the server when needed (ServerPubKey is not read).
func Dial(ctx context.Context, cfg *mysql.Config, opts Options) (*Conn, error) {
	st, err := settingsOf(cfg)
	if err != nil {
		return nil, err
	}
	dctx := ctx
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	s, err := dialSock(dctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	c := &Conn{s: s, rbuf: make([]byte, 16<<10), wbuf: make([]byte, 0, 4<<10), loc: cfg.Loc}
	as := opts.As
	if c.loc == nil {
		c.loc = time.UTC
	}
	stop := context.AfterFunc(dctx, s.interrupt)
	err = c.connect(cfg, st, as)
	if !stop() && err == nil {
		err = errors.New("interrupted")
	}
	if err != nil {
		s.Close()
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case dctx.Err() != nil:
			return nil, timeoutError(cfg.Addr)
		}
		return nil, err
	}
	c.stop = context.AfterFunc(ctx, s.interrupt)
	return c, nil
}

// greeting is the server's first packet.
type greeting struct {
	version string
	connID  uint32
	caps    uint32
	ext     uint32
	status  uint16
	nonce   []byte
	plugin  string
}

func parseGreeting(p []byte) (*greeting, error) {
	if p[0] == 0xff {
		return nil, serverError(p)
	}
	if p[0] != 10 {
		return nil, fmt.Errorf("wire: protocol version %d is not supported (want 10)", p[0])
	}
	bad := errors.New("wire: malformed greeting from the server")
	p = p[1:]
	i := bytes.IndexByte(p, 0)
	if i < 0 || len(p) < i+1+4+8+1+2 {
		return nil, bad
	}
	g := &greeting{version: string(p[:i])}
	p = p[i+1:]
	g.connID = binary.LittleEndian.Uint32(p)
	g.nonce = append(g.nonce, p[4:12]...)
	g.caps = uint32(binary.LittleEndian.Uint16(p[13:]))
	p = p[15:]
	if len(p) < 1+2+2+1+10 {
		return g, nil // an old server: no more flags, no plugin
	}
	g.status = binary.LittleEndian.Uint16(p[1:])
	g.caps |= uint32(binary.LittleEndian.Uint16(p[3:])) << 16
	authLen := int(p[5])
	if g.caps&capLongPassword == 0 {
		g.ext = binary.LittleEndian.Uint32(p[12:])
	}
	p = p[16:]
	if g.caps&capSecureConn != 0 {
		n := min(max(13, authLen-8), len(p))
		part := p[:n]
		p = p[n:]
		if k := bytes.IndexByte(part, 0); k >= 0 {
			part = part[:k]
		}
		g.nonce = append(g.nonce, part...)
	}
	if g.caps&capPluginAuth != 0 {
		if k := bytes.IndexByte(p, 0); k >= 0 {
			p = p[:k]
		}
		g.plugin = string(p)
	}
	return g, nil
}

// connect runs the connection phase on a fresh socket.
func (c *Conn) connect(cfg *mysql.Config, st *settings, as *Handshake) error {
	p, err := c.readPacket()
	if err != nil {
		return err
	}
	g, err := parseGreeting(p)
	if err != nil {
		return err
	}
	c.version, c.connID, c.status = g.version, g.connID, g.status
	c.srvCaps, c.srvExt = g.caps, g.ext
	if g.caps&capProtocol41 == 0 {
		return fmt.Errorf("wire: server %s does not speak protocol 4.1", g.version)
	}

	caps := uint32(capLongPassword | capLongFlag | capProtocol41 | capSecureConn | capTransactions |
		capPluginAuth | capPluginAuthLenenc | capMultiResults | capDeprecateEOF | capConnectAttrs)
	if cfg.ClientFoundRows {
		caps |= capFoundRows
	}
	if cfg.MultiStatements {
		caps |= capMultiStatements
	}
	if cfg.DBName != "" {
		caps |= capConnectWithDB
	}
	useTLS := st.tls != nil
	if useTLS && g.caps&capSSL == 0 {
		if !st.fallback {
			return fmt.Errorf("server %s does not offer TLS: enable it on the server, or connect without ?tls", addrOf(cfg))
		}
		useTLS = false
	}
	if useTLS {
		caps |= capSSL
	}
	c.caps = caps & g.caps
	c.ext = extCapCacheMetadata & g.ext

	collation := byte(defaultCollationID)
	collate, named := st.collate, true
	if collate != "" {
		if collation, named = collationIDs[collate]; !named {
			collation = defaultCollationID
		}
	}
	if as != nil {
		// The other client's flags for the command phase, with the
		// connection phase's own (how this package authenticates) and TLS
		// as the configuration says.
		c.caps = (as.Caps&^(handshakeCaps|capSSL|CapCompress) | caps&(handshakeCaps|capSSL)) & g.caps
		c.ext = as.ExtCaps & g.ext
		collation, collate, named = as.Collation, "", true
		st.charsets, st.set = nil, ""
	}
	head := c.handshakeHead(collation)
	if useTLS {
		// SSLRequest: the head alone, then TLS, then the rest of the
		// response under it.
		if err := c.writePacket(head); err != nil {
			return err
		}
		tc := tls.Client(c.s, st.tls)
		if err := tc.Handshake(); err != nil {
			return tlsError(cfg, err)
		}
		c.tc = tc
		head = c.handshakeHead(collation)
	}

	plugin := g.plugin
	resp, err := c.authResponse(cfg, plugin, g.nonce)
	if err != nil {
		if !errors.Is(err, errUnknownPlugin) {
			return err
		}
		// Answer as the default plugin; the server switches to the
		// account's own if it is another.
		plugin = pluginNative
		if resp, err = c.authResponse(cfg, plugin, g.nonce); err != nil {
			return err
		}
	}
	b := append(head, cfg.User...)
	b = append(b, 0)
	b = lenenc.Append(b, uint64(len(resp)))
	b = append(b, resp...)
	if c.caps&capConnectWithDB != 0 {
		b = append(b, cfg.DBName...)
		b = append(b, 0)
	}
	b = append(b, plugin...)
	b = append(b, 0)
	if c.caps&capConnectAttrs != 0 {
		attrs := connAttrs(cfg)
		b = lenenc.Append(b, uint64(len(attrs)))
		b = append(b, attrs...)
	}
	if err := c.writePacket(b); err != nil {
		return err
	}
	if err := c.authenticate(cfg, plugin, g.nonce); err != nil {
		return err
	}
	return c.setUpSession(st, collate, named)
}

// handshakeHead is the first 32 bytes of the handshake response (and the
// whole SSLRequest), after 4 bytes of room for the packet header.
func (c *Conn) handshakeHead(collation byte) []byte {
	b := make([]byte, 4, 256)
	b = binary.LittleEndian.AppendUint32(b, c.caps)
	b = binary.LittleEndian.AppendUint32(b, 0) // max packet: the server's
	b = append(b, collation)
	b = append(b, make([]byte, 19)...)
	if c.caps&capLongPassword == 0 {
		return binary.LittleEndian.AppendUint32(b, c.ext) // MariaDB's extended flags
	}
	return append(b, 0, 0, 0, 0)
}

func connAttrs(cfg *mysql.Config) []byte {
	var b []byte
	add := func(k, v string) {
		b = lenenc.Append(b, uint64(len(k)))
		b = append(b, k...)
		b = lenenc.Append(b, uint64(len(v)))
		b = append(b, v...)
	}
	add("_client_name", "shakedown")
	add("_pid", strconv.Itoa(os.Getpid()))
	for kv := range strings.SplitSeq(cfg.ConnectionAttributes, ",") {
		if k, v, ok := strings.Cut(kv, ":"); ok {
			add(k, v)
		}
	}
	return b
}

// setUpSession sets the collation the handshake could not name, the
// charset and the other parameters.
func (c *Conn) setUpSession(st *settings, collate string, named bool) error {
	cs := charsetOf(collate)
	switch {
	case len(st.charsets) > 0:
		var err error
		for _, cs = range st.charsets {
			q := "SET NAMES " + cs
			if collate != "" {
				q += " COLLATE " + collate
			}
			if _, err = c.Query(q); err == nil {
				break
			}
			var me *mysql.MySQLError
			if !errors.As(err, &me) {
				return err
			}
		}
		if err != nil {
			return fmt.Errorf("charset %s: %w", strings.Join(st.charsets, ","), err)
		}
	case collate != "" && !named:
		if _, err := c.Query("SET NAMES " + cs + " COLLATE " + collate); err != nil {
			return fmt.Errorf("collation %s: %w", collate, err)
		}
	}
	if unsafeCharsets[strings.ToLower(cs)] {
		c.noInterp = cs
	}
	if st.set != "" {
		if _, err := c.Query(st.set); err != nil {
			return fmt.Errorf("session parameters (%s): %w", st.set, err)
		}
	}
	return nil
}

func addrOf(cfg *mysql.Config) string {
	if cfg.Addr == "" {
		return "(default address)"
	}
	return cfg.Addr
}

// tlsError explains a failed TLS handshake.
func tlsError(cfg *mysql.Config, err error) error {
	var ve *tls.CertificateVerificationError
	if errors.As(err, &ve) {
		return fmt.Errorf("TLS with %s: the server's certificate was not accepted: %w; name the CA that signed it with ?tls-ca=FILE, or use ?tls=skip-verify to encrypt without verifying the server", addrOf(cfg), err)
	}
	return fmt.Errorf("TLS with %s: %w", addrOf(cfg), err)
}
