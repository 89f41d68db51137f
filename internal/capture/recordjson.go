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
	b = appendStringField(b, `,"kind":`, r.Kind)
	b = appendStringField(b, `,"db":`, r.DB)
	b = appendStringField(b, `,"sql":`, r.SQL)
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
	b = appendStringField(b, `,"fingerprint":`, r.Fingerprint)
	b = appendStringField(b, `,"digest":`, r.Digest)
	return append(b, "}\n"...), true
}

// appendStringField appends key and v, leaving out an empty v as the
// struct tags' omitempty does.
func appendStringField(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return appendJSONString(append(b, key...), v)
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
