package wire

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	"filippo.io/edwards25519"
	"github.com/go-sql-driver/mysql"
)

// Authentication plugins.
const (
	pluginNative      = "mysql_native_password"
	pluginCachingSHA2 = "caching_sha2_password"
	pluginSHA256      = "sha256_password"
	pluginEd25519     = "client_ed25519"
	pluginClear       = "mysql_clear_password"
)

// ed25519NonceLen is the length of MariaDB's client_ed25519 challenge.
const ed25519NonceLen = 32

var errUnknownPlugin = errors.New("wire: unknown authentication plugin")

// secure reports whether the password may travel in clear: under TLS, or
// on a Unix socket, which never leaves the host.
func (c *Conn) secure(cfg *mysql.Config) bool {
	return c.tc != nil || cfg.Net == "unix"
}

// authResponse is the first answer to plugin's challenge nonce.
func (c *Conn) authResponse(cfg *mysql.Config, plugin string, nonce []byte) ([]byte, error) {
	pw := cfg.Passwd
	switch plugin {
	case pluginNative, "":
		if !cfg.AllowNativePasswords {
			return nil, errors.New("the server asks for mysql_native_password, which the configuration does not allow")
		}
		return nativeScramble(nonce, pw), nil
	case pluginCachingSHA2:
		return sha256Scramble(nonce, pw), nil
	case pluginSHA256:
		switch {
		case pw == "":
			return []byte{0}, nil
		case c.secure(cfg):
			return append([]byte(pw), 0), nil
		}
		return []byte{1}, nil // ask for the server's RSA key
	case pluginEd25519:
		if len(nonce) != ed25519NonceLen {
			return nil, fmt.Errorf("wire: client_ed25519 challenge of %d bytes from the server, want %d", len(nonce), ed25519NonceLen)
		}
		return ed25519Sign(nonce, pw)
	case pluginClear:
		if !c.secure(cfg) {
			return nil, errors.New("the server asks for the password in clear (mysql_clear_password), which is sent only over TLS: connect with ?tls=true")
		}
		if !cfg.AllowCleartextPasswords {
			return nil, errors.New("the server asks for the password in clear (mysql_clear_password), which the configuration does not allow")
		}
		return append([]byte(pw), 0), nil
	case "mysql_old_password":
		return nil, errors.New("the account uses mysql_old_password, which is insecure and not supported: give it a new password")
	case "dialog", "auth_gssapi_client", "authentication_kerberos_client", "authentication_ldap_sasl_client", "authentication_windows_client":
		return nil, fmt.Errorf("authentication plugin %s is not supported: use an account with mysql_native_password, caching_sha2_password or ed25519", plugin)
	}
	return nil, fmt.Errorf("%w %q", errUnknownPlugin, plugin)
}

// authenticate reads the server's verdict on the handshake response,
// answering auth switch requests and the plugins' further exchanges.
func (c *Conn) authenticate(cfg *mysql.Config, plugin string, nonce []byte) error {
	keyAsked := plugin == pluginSHA256 && cfg.Passwd != "" && !c.secure(cfg)
	for switches := 0; ; {
		p, err := c.readPacket()
		if err != nil {
			return err
		}
		switch p[0] {
		case 0x00:
			_, _, c.status = okPacket(p)
			return nil
		case 0xff:
			return serverError(p)
		case 0xfe: // auth switch request
			if switches++; switches > 1 {
				return errors.New("wire: the server switched authentication plugins twice")
			}
			if len(p) == 1 {
				return errors.New("the account uses mysql_old_password, which is insecure and not supported: give it a new password")
			}
			name, data, _ := cutNUL(p[1:])
			plugin = string(name)
			nonce = switchNonce(plugin, data)
			resp, err := c.authResponse(cfg, plugin, nonce)
			if err != nil {
				return err
			}
			if err := c.writePacket(append(make([]byte, 4, 4+len(resp)), resp...)); err != nil {
				return err
			}
			keyAsked = plugin == pluginSHA256 && cfg.Passwd != "" && !c.secure(cfg)
		case 0x01: // more data for the plugin
			var resp []byte
			switch {
			case plugin == pluginCachingSHA2 && len(p) == 2 && p[1] == 3:
				continue // fast authentication succeeded; an OK follows
			case plugin == pluginCachingSHA2 && len(p) == 2 && p[1] == 4:
				// Full authentication: the password itself.
				if c.secure(cfg) {
					resp = append([]byte(cfg.Passwd), 0)
				} else {
					resp, keyAsked = []byte{2}, true // the server's RSA key first
				}
			case keyAsked:
				if resp, err = encryptPassword(p[1:], cfg.Passwd, nonce); err != nil {
					return err
				}
				keyAsked = false
			default:
				return fmt.Errorf("wire: unexpected authentication data for %s", plugin)
			}
			if err := c.writePacket(append(make([]byte, 4, 4+len(resp)), resp...)); err != nil {
				return err
			}
		default:
			return errMalformed
		}
	}
}

// switchNonce is the new plugin's challenge in an auth switch request. The
// scramble plugins' 20 printable bytes come NUL-terminated. client_ed25519's
// 32 bytes are random and come as they are: one in 256 ends in a zero byte
// of its own, which must be signed with the rest.
func switchNonce(plugin string, data []byte) []byte {
	if plugin != pluginEd25519 && len(data) > 0 && data[len(data)-1] == 0 {
		data = data[:len(data)-1]
	}
	return append([]byte(nil), data...)
}

func cutNUL(p []byte) (before, after []byte, found bool) {
	for i, b := range p {
		if b == 0 {
			return p[:i], p[i+1:], true
		}
	}
	return p, nil, false
}

// nativeScramble is mysql_native_password's proof of the password:
// SHA1(password) XOR SHA1(nonce, SHA1(SHA1(password))).
func nativeScramble(nonce []byte, pw string) []byte {
	if pw == "" {
		return nil
	}
	h1 := sha1.Sum([]byte(pw))
	h2 := sha1.Sum(h1[:])
	h := sha1.New()
	h.Write(nonce[:min(20, len(nonce))])
	h.Write(h2[:])
	out := h.Sum(nil)
	for i := range out {
		out[i] ^= h1[i]
	}
	return out
}

// sha256Scramble is caching_sha2_password's proof of the password:
// SHA256(password) XOR SHA256(SHA256(SHA256(password)), nonce).
func sha256Scramble(nonce []byte, pw string) []byte {
	if pw == "" {
		return nil
	}
	m1 := sha256.Sum256([]byte(pw))
	m2 := sha256.Sum256(m1[:])
	h := sha256.New()
	h.Write(m2[:])
	h.Write(nonce[:min(20, len(nonce))])
	out := h.Sum(nil)
	for i := range out {
		out[i] ^= m1[i]
	}
	return out
}

// encryptPassword encrypts the password (NUL-terminated, XORed with the
// nonce) with the server's PEM-encoded RSA public key, for full
// authentication without TLS.
func encryptPassword(keyPEM []byte, pw string, nonce []byte) ([]byte, error) {
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, errors.New("wire: the server sent no usable RSA public key")
	}
	var pub *rsa.PublicKey
	if k, err := x509.ParsePKIXPublicKey(block.Bytes); err == nil {
		pub, _ = k.(*rsa.PublicKey)
	} else if k, err := x509.ParsePKCS1PublicKey(block.Bytes); err == nil {
		pub = k
	}
	if pub == nil {
		return nil, errors.New("wire: the server's public key is not an RSA key")
	}
	plain := append([]byte(pw), 0)
	if len(nonce) > 0 {
		for i := range plain {
			plain[i] ^= nonce[i%len(nonce)]
		}
	}
	out, err := rsa.EncryptOAEP(sha1.New(), rand.Reader, pub, plain, nil)
	if err != nil {
		return nil, fmt.Errorf("encrypt password for the server: %w", err)
	}
	return out, nil
}

// ed25519Sign is MariaDB's client_ed25519: an Ed25519 signature of the
// nonce with a key whose expanded secret is SHA512(password) (standard
// Ed25519 expands a 32-byte seed the same way; here the password is the
// seed, of any length).
func ed25519Sign(nonce []byte, pw string) ([]byte, error) {
	az := sha512.Sum512([]byte(pw))
	s, err := edwards25519.NewScalar().SetBytesWithClamping(az[:32])
	if err != nil {
		return nil, err
	}
	pub := new(edwards25519.Point).ScalarBaseMult(s).Bytes()
	h := sha512.New()
	h.Write(az[32:])
	h.Write(nonce)
	r, err := edwards25519.NewScalar().SetUniformBytes(h.Sum(nil))
	if err != nil {
		return nil, err
	}
	R := new(edwards25519.Point).ScalarBaseMult(r).Bytes()
	h.Reset()
	h.Write(R)
	h.Write(pub)
	h.Write(nonce)
	k, err := edwards25519.NewScalar().SetUniformBytes(h.Sum(nil))
	if err != nil {
		return nil, err
	}
	S := edwards25519.NewScalar().MultiplyAdd(k, s, r)
	return append(R, S.Bytes()...), nil
}
