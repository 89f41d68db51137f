package wire

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// settings is what Dial takes from a mysql.Config beyond its exported
// fields: the TLS configuration the tls parameter names, and the options
// the driver keeps unexported (charset, compress), read back from the DSN
// the configuration formats.
type settings struct {
	tls      *tls.Config // nil: no TLS
	fallback bool        // with TLS asked, go on in clear when the server offers none
	charsets []string    // SET NAMES candidates, the first that works wins
	collate  string
	compress bool
	set      string // SET statement for the other parameters, "" for none
}

func settingsOf(cfg *mysql.Config) (*settings, error) {
	st := &settings{collate: cfg.Collation, fallback: cfg.AllowFallbackToPlaintext}
	// The charset and compress options live in unexported fields; the DSN
	// of a copy stripped of everything else shows them.
	bare := cfg.Clone()
	bare.User, bare.Passwd, bare.Net, bare.Addr, bare.DBName = "", "", "", "", ""
	bare.Params, bare.TLS, bare.TLSConfig = nil, nil, ""
	if dsn := bare.FormatDSN(); strings.Contains(dsn, "?") {
		q, err := url.ParseQuery(dsn[strings.IndexByte(dsn, '?')+1:])
		if err == nil {
			if v := q.Get("charset"); v != "" {
				st.charsets = strings.Split(v, ",")
			}
			st.compress = q.Get("compress") == "true"
		}
	}
	var keys []string
	for k, v := range cfg.Params {
		switch strings.ToLower(k) {
		case "charset":
			st.charsets = strings.Split(v, ",")
		case "collation":
			if st.collate == "" {
				st.collate = v
			}
		case "compress":
			on, err := strconv.ParseBool(v)
			st.compress = err != nil || on
		default:
			keys = append(keys, k)
		}
	}
	if st.compress {
		return nil, ErrCompression
	}
	// Other parameters are session variables, set as the driver sets them.
	if len(keys) > 0 {
		sort.Strings(keys)
		var b strings.Builder
		b.WriteString("SET ")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k + " = " + cfg.Params[k])
		}
		st.set = b.String()
	}
	var err error
	if st.tls, err = tlsConfig(cfg, &st.fallback); err != nil {
		return nil, err
	}
	return st, nil
}

// tlsConfig resolves cfg's TLS settings as the driver does: TLS wins over
// TLSConfig, which is "true" (verify the server), "skip-verify",
// "preferred" (skip-verify, and plaintext when the server has no TLS) or
// the name of a configuration registered with mysql.RegisterTLSConfig.
func tlsConfig(cfg *mysql.Config, fallback *bool) (*tls.Config, error) {
	var tc *tls.Config
	switch {
	case cfg.TLS != nil:
		tc = cfg.TLS.Clone()
	case cfg.TLSConfig == "" || cfg.TLSConfig == "false":
		return nil, nil
	case cfg.TLSConfig == "true":
		tc = &tls.Config{}
	case cfg.TLSConfig == "skip-verify":
		tc = &tls.Config{InsecureSkipVerify: true}
	case cfg.TLSConfig == "preferred":
		tc = &tls.Config{InsecureSkipVerify: true}
		*fallback = true
	default:
		// The driver's registry is reached through its DSN parser, given
		// the address so that it takes the server name from the right host.
		netw := cfg.Net
		if netw == "" {
			netw = "tcp"
		}
		named, err := mysql.ParseDSN(netw + "(" + cfg.Addr + ")/?tls=" + url.QueryEscape(cfg.TLSConfig))
		if err != nil || named.TLS == nil {
			return nil, fmt.Errorf("tls=%s: no TLS configuration of that name: use true, skip-verify, preferred or a registered name", cfg.TLSConfig)
		}
		tc = named.TLS
	}
	if tc.ServerName == "" && !tc.InsecureSkipVerify {
		if host, _, err := net.SplitHostPort(cfg.Addr); err == nil {
			tc.ServerName = host
		}
	}
	return tc, nil
}

// collationIDs are the collations a handshake can name (ids below 256)
// that connections commonly ask for. Any other collation is set with SET
// NAMES after connecting.
var collationIDs = map[string]byte{
	"big5_chinese_ci":        1,
	"latin1_swedish_ci":      8,
	"ascii_general_ci":       11,
	"sjis_japanese_ci":       13,
	"gbk_chinese_ci":         28,
	"utf8_general_ci":        33,
	"utf8mb3_general_ci":     33,
	"utf8mb4_general_ci":     45,
	"utf8mb4_bin":            46,
	"latin1_bin":             47,
	"latin1_general_ci":      48,
	"binary":                 63,
	"utf8_bin":               83,
	"utf8mb3_bin":            83,
	"cp932_japanese_ci":      95,
	"utf8_unicode_ci":        192,
	"utf8mb3_unicode_ci":     192,
	"utf8mb4_unicode_ci":     224,
	"utf8mb4_unicode_520_ci": 246,
	"gb18030_chinese_ci":     248,
	"utf8mb4_0900_ai_ci":     255,
}

const defaultCollationID = 45 // utf8mb4_general_ci, as the driver sends

// unsafeCharsets are character sets in which a multi-byte character can end
// in 0x5c (a backslash), so that escaping on the client can be undone by
// the server's reading of the bytes.
var unsafeCharsets = map[string]bool{"big5": true, "sjis": true, "gbk": true, "cp932": true, "gb2312": true, "gb18030": true}

// charsetOf is the character set a collation belongs to.
func charsetOf(collation string) string {
	if collation == "binary" {
		return "binary"
	}
	cs, _, _ := strings.Cut(collation, "_")
	return cs
}
