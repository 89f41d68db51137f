package wiretest

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"

	"filippo.io/edwards25519"

	"github.com/shakedown/shakedown/internal/wire/lenenc"
)

// The connection phase: greeting, optional TLS, the handshake response and
// authentication.

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
		n, k := lenenc.Read(p)
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
		p := append([]byte{0xfe}, plugin...)
		p = append(p, 0)
		if plugin == "client_ed25519" {
			// MariaDB's challenge: 32 random bytes, any of them zero, with
			// no NUL after them.
			nonce = make([]byte, 32)
			rand.Read(nonce)
			if s.cfg.Ed25519Nonce != nil {
				nonce = s.cfg.Ed25519Nonce
			}
			p = append(p, nonce...)
		} else {
			rand.Read(nonce)
			for i := range nonce {
				nonce[i] = nonce[i]%94 + 33
			}
			p = append(p, nonce...)
			p = append(p, 0)
		}
		if err := s.WritePacket(p); err != nil {
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
	case "client_ed25519":
		if !ed25519.Verify(Ed25519PublicKey(s.cfg.Password), nonce, resp) {
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
		p, err := s.ReadPacket()
		if err != nil {
			return err
		}
		if err := s.fullAuth(nonce, p, 0x02); err != nil {
			return err
		}
	case "sha256_password":
		if s.cfg.Password == "" && string(resp) == "\x00" {
			break
		}
		if err := s.fullAuth(nonce, resp, 0x01); err != nil {
			return err
		}
	default:
		return fmt.Errorf("plugin %s not supported by the fake server", plugin)
	}
	return s.OK(0, 0)
}

// fullAuth checks the password the client sent in p: in clear over TLS,
// else RSA-encrypted after handing out the public key, which the client
// asks for with the byte askKey (caching_sha2_password's 2,
// sha256_password's 1).
func (s *Session) fullAuth(nonce, p []byte, askKey byte) error {
	if s.TLS {
		if string(p) != s.cfg.Password+"\x00" {
			return s.denied()
		}
		return nil
	}
	if len(p) != 1 || p[0] != askKey || s.cfg.RSAKey == nil {
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

// Ed25519PublicKey is the public key MariaDB's ed25519 plugin keeps for
// password: the password stands for the Ed25519 seed, of any length, and
// SHA-512 expands it to the secret scalar.
func Ed25519PublicKey(password string) ed25519.PublicKey {
	az := sha512.Sum512([]byte(password))
	s, err := edwards25519.NewScalar().SetBytesWithClamping(az[:32])
	if err != nil {
		panic(err) // 32 bytes always make a scalar
	}
	return new(edwards25519.Point).ScalarBaseMult(s).Bytes()
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
