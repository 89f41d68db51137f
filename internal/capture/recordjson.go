package capture

import (
	"strconv"
	"unicode/utf8"
)

// appendRecord writes r as encoding/json would (the same keys in the same
// order, the same escapes, without HTML escaping), without reflection:
// writing the capture was a fifth of reading a log. A record with
// parameters goes through encoding/json; ok is false for it.
func appendRecord(b []byte, r *Record) ([]byte, bool) {
	if r.Params != nil {
		return b, false
	}
	b = append(b, `{"session":`...)
	b = appendJSONString(b, r.Session)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, r.Seq, 10)
	if r.TS != 0 {
		b = append(b, `,"ts":`...)
		b = strconv.AppendInt(b, r.TS, 10)
	}
	if r.Kind != "" {
		b = append(b, `,"kind":`...)
		b = appendJSONString(b, r.Kind)
	}
	if r.DB != "" {
		b = append(b, `,"db":`...)
		b = appendJSONString(b, r.DB)
	}
	if r.SQL != "" {
		b = append(b, `,"sql":`...)
		b = appendJSONString(b, r.SQL)
	}
	if r.Prepared {
		b = append(b, `,"prepared":true`...)
	}
	for _, f := range [...]struct {
		key string
		v   *int64
	}{{`,"duration_us":`, r.DurationUS}, {`,"rows_sent":`, r.RowsSent}, {`,"rows_examined":`, r.RowsExamined}} {
		if f.v != nil {
			b = append(b, f.key...)
			b = strconv.AppendInt(b, *f.v, 10)
		}
	}
	if r.Error != 0 {
		b = append(b, `,"error":`...)
		b = strconv.AppendInt(b, int64(r.Error), 10)
	}
	if r.Fingerprint != "" {
		b = append(b, `,"fingerprint":`...)
		b = appendJSONString(b, r.Fingerprint)
	}
	if r.Digest != "" {
		b = append(b, `,"digest":`...)
		b = appendJSONString(b, r.Digest)
	}
	return append(b, "}\n"...), true
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as encoding/json does with HTML escaping off:
// invalid UTF-8 becomes U+FFFD, and U+2028 and U+2029 are escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
