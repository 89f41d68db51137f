package capture

import (
	"bytes"
	"encoding/json"
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

// Record fields that parseRecord has set, so that a key given twice goes
// to encoding/json, which lets the last one win.
const (
	seenSession = 1 << iota
	seenSeq
	seenTS
	seenKind
	seenDB
	seenSQL
	seenPrepared
	seenDuration
	seenRowsSent
	seenRowsExamined
	seenError
	seenFingerprint
	seenDigest
	seenParams
)

// parseRecord reads a record line without reflection, as encoding/json
// would read it into a zero Record: reading the capture with
// encoding/json cost a replay more CPU than any other step of its own. It
// takes the lines that capture writes and others like them: the keys
// above, each once, strings with the common escapes, integers, true and
// false, and parameters of those, numbers, null and {"hex": "..."}. It
// reports false for anything else (null for a field, an unknown key, a
// surrogate or invalid UTF-8 in a string, a malformed line) and leaves the
// line to encoding/json, whose answer is then the answer.
func parseRecord(line []byte, r *Record) bool {
	p := recordParser{b: line}
	if !p.byte('{') {
		return false
	}
	var seen int
	if p.byte('}') {
		return p.end()
	}
	for {
		key, ok := p.key()
		if !ok || !p.byte(':') {
			return false
		}
		var bit int
		switch string(key) { // no allocation for a switch
		case "session":
			bit = seenSession
			r.Session, ok = p.string()
		case "seq":
			bit = seenSeq
			r.Seq, ok = p.int()
		case "ts":
			bit = seenTS
			r.TS, ok = p.int()
		case "kind":
			bit = seenKind
			r.Kind, ok = p.string()
		case "db":
			bit = seenDB
			r.DB, ok = p.string()
		case "sql":
			bit = seenSQL
			r.SQL, ok = p.string()
		case "prepared":
			bit = seenPrepared
			r.Prepared, ok = p.bool()
		case "duration_us":
			bit = seenDuration
			r.DurationUS, ok = p.intPtr()
		case "rows_sent":
			bit = seenRowsSent
			r.RowsSent, ok = p.intPtr()
		case "rows_examined":
			bit = seenRowsExamined
			r.RowsExamined, ok = p.intPtr()
		case "error":
			bit = seenError
			var n int64
			n, ok = p.int()
			r.Error = int(n)
			ok = ok && int64(r.Error) == n
		case "fingerprint":
			bit = seenFingerprint
			r.Fingerprint, ok = p.string()
		case "digest":
			bit = seenDigest
			r.Digest, ok = p.string()
		case "params":
			bit = seenParams
			r.Params, ok = p.params()
		default:
			return false
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if p.byte('}') {
			return p.end()
		}
		if !p.byte(',') {
			return false
		}
	}
}

// recordParser walks one line for parseRecord.
type recordParser struct {
	b []byte
	i int
}

func (p *recordParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// byte takes c, after any white space.
func (p *recordParser) byte(c byte) bool {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// end holds when nothing but white space is left.
func (p *recordParser) end() bool {
	p.space()
	return p.i == len(p.b)
}

// key reads a key without escapes, as the keys above are.
func (p *recordParser) key() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			k := p.b[start:p.i]
			p.i++
			return k, true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// string reads a JSON string.
func (p *recordParser) string() (string, bool) {
	if !p.byte('"') {
		return "", false
	}
	start := p.i
	ascii := true
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if !ascii && !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c == '\\':
			return p.escaped(start)
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		p.i++
	}
	return "", false
}

// escaped reads the rest of a string that has an escape at p.i, start
// being where its text began.
func (p *recordParser) escaped(start int) (string, bool) {
	out := make([]byte, 0, len(p.b)-start)
	out = append(out, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(out) {
				return "", false
			}
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			return "", false
		}
		e := p.b[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'u':
			if p.i+4 > len(p.b) {
				return "", false
			}
			n, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 16)
			if err != nil || (n >= 0xd800 && n < 0xe000) {
				// Surrogates, paired or not, are encoding/json's.
				return "", false
			}
			out = utf8.AppendRune(out, rune(n))
			p.i += 4
		default:
			return "", false
		}
	}
	return "", false
}

// int reads a JSON integer: an optional minus, then 0 or digits that do
// not start with 0; no fraction, no exponent.
func (p *recordParser) int() (int64, bool) {
	p.space()
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	if n := p.digits(); n == 0 || (n > 1 && p.b[p.i-n] == '0') {
		return 0, false
	}
	if p.i < len(p.b) {
		if c := p.b[p.i]; c == '.' || c == 'e' || c == 'E' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(p.b[start:p.i]), 10, 64)
	return n, err == nil
}

func (p *recordParser) intPtr() (*int64, bool) {
	n, ok := p.int()
	if !ok {
		return nil, false
	}
	return &n, true
}

// params reads an array of parameters as encoding/json reads one into
// []any with UseNumber: null, strings, numbers (json.Number), true, false
// and objects of one key, hex, whose value is a string.
func (p *recordParser) params() ([]any, bool) {
	if !p.byte('[') {
		return nil, false
	}
	out := []any{}
	if p.byte(']') {
		return out, true
	}
	for {
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		var v any
		ok := true
		switch c := p.b[p.i]; {
		case c == '"':
			v, ok = p.string()
		case c == 't' || c == 'f':
			v, ok = p.bool()
		case c == 'n':
			ok = bytes.HasPrefix(p.b[p.i:], []byte("null"))
			p.i += 4
		case c == '{':
			p.i++
			var key []byte
			if key, ok = p.key(); !ok || string(key) != "hex" || !p.byte(':') {
				return nil, false
			}
			var h string
			if h, ok = p.string(); !ok || !p.byte('}') {
				return nil, false
			}
			v = map[string]any{"hex": h}
		default:
			v, ok = p.number()
		}
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if p.byte(']') {
			return out, true
		}
		if !p.byte(',') {
			return nil, false
		}
	}
}

// number reads a JSON number as its text.
func (p *recordParser) number() (json.Number, bool) {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	if n := p.digits(); n == 0 || (n > 1 && p.b[p.i-n] == '0') {
		return "", false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return "", false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return "", false
		}
	}
	return json.Number(p.b[start:p.i]), true
}

// digits skips decimal digits and says how many.
func (p *recordParser) digits() int {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}

// bool reads true or false.
func (p *recordParser) bool() (bool, bool) {
	p.space()
	rest := p.b[p.i:]
	switch {
	case bytes.HasPrefix(rest, []byte("true")):
		p.i += 4
		return true, true
	case bytes.HasPrefix(rest, []byte("false")):
		p.i += 5
		return false, true
	}
	return false, false
}
