package mirror

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/shakedown/shakedown/internal/usage"
)

// TLS to clients: with a certificate (--tls-cert, --tls-key) the greeting
// offers CLIENT_SSL, and a client that answers with an SSLRequest has its
// socket turned TLS before it sends its handshake response. The mirror's
// own sessions, to the control and the candidates, are as their URLs say.

// insecureTransportMsg is the refusal's text; it begins as MySQL's does.
const insecureTransportMsg = "Connections using insecure transport are prohibited: the mirror listens beyond its host, so clients must use TLS (mariadb --ssl, or the driver's TLS option)"

// errPlainRefused ends the login of a client refused for want of TLS; the
// tally counts it.
var errPlainRefused = errors.New("a client without TLS, which this mirror requires")

// LoadTLS reads the server certificate and its private key, PEM files
// named by --tls-cert and --tls-key, and returns the configuration that
// serves clients TLS; neither file gives nil. Each error is a usage error
// that names the flag and the file at fault; none shows the key.
func LoadTLS(certFile, keyFile string) (*tls.Config, error) {
	switch {
	case certFile == "" && keyFile == "":
		return nil, nil
	case certFile == "":
		return nil, usage.Errorf("mirror: --tls-key %s needs --tls-cert FILE, the certificate it is the key of", keyFile)
	case keyFile == "":
		return nil, usage.Errorf("mirror: --tls-cert %s needs --tls-key FILE, its private key", certFile)
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, usage.Errorf("mirror: --tls-cert: %v", err)
	}
	leaf, err := firstCert(certPEM)
	if err != nil {
		return nil, usage.Errorf("mirror: --tls-cert %s: %v", certFile, err)
	}
	if now := time.Now(); now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
		return nil, usage.Errorf("mirror: --tls-cert %s: the certificate is valid from %s to %s only: clients would refuse it",
			certFile, leaf.NotBefore.UTC().Format(time.DateOnly), leaf.NotAfter.UTC().Format(time.DateOnly))
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, usage.Errorf("mirror: --tls-key: %v", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, usage.Errorf("mirror: --tls-key %s: %v: want the PEM private key of --tls-cert %s", keyFile, err, certFile)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// firstCert parses the first certificate of a PEM file, which is the
// server's own (any after it are the chain).
func firstCert(b []byte) (*x509.Certificate, error) {
	for {
		var blk *pem.Block
		if blk, b = pem.Decode(b); blk == nil {
			return nil, errors.New("no PEM certificate in it")
		}
		if blk.Type == "CERTIFICATE" {
			c, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("read the certificate: %w", err)
			}
			return c, nil
		}
	}
}

// requiresTLS is the listen rule: a mirror with a certificate that
// listens beyond its host serves clients over TLS only. On loopback TLS
// is the client's choice; without a certificate, beyond the host needs
// InsecureListen (Listen checks it).
func requiresTLS(host string, opts Options) bool {
	return opts.TLS != nil && !loopback(host)
}

// bufferedConn reads through the reader that framed the connection so
// far: what it holds past the SSLRequest is the start of the client's TLS
// hello, sent without waiting for a reply.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// startTLS turns the client's socket TLS, as the server end, and frames
// packets over it from now on; the sequence numbers go on. c.nc stays the
// plain socket, which closing ends both.
func (c *clientConn) startTLS(cfg *tls.Config) error {
	tc := tls.Server(bufferedConn{Conn: c.nc, r: c.r}, cfg)
	if err := tc.Handshake(); err != nil {
		return fmt.Errorf("TLS handshake with the client: %w", err)
	}
	c.tls = tc
	c.r = bufio.NewReaderSize(tc, 16<<10)
	c.w = bufio.NewWriterSize(tc, 16<<10)
	return nil
}
