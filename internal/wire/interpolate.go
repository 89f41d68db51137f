package wire

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/escape"
)

// Interpolate appends query to dst with each '?' replaced by the next
// argument as an SQL literal, for the text protocol. Strings are escaped
// for a server that honours backslash escapes (the default sql_mode); use
// Conn.Interpolate to follow the session's sql_mode. A '?' inside a quoted
// string, a quoted identifier or a comment (/* */, "-- ", #) is not a
// placeholder; one inside an executable comment (/*! */, /*M! */) is, as
// the server runs its text. Arguments are those Stmt.Exec takes; times
// are written in UTC.
func Interpolate(dst []byte, query string, args []any) ([]byte, error) {
	return interpolate(dst, query, args, false, time.UTC)
}

// Interpolate is the package's Interpolate for this connection: it escapes
// strings as the session's sql_mode wants (doubling quotes under
// NO_BACKSLASH_ESCAPES), writes times in the configuration's Loc, and
// refuses a connection character set in which escaping on the client is
// unsafe.
func (c *Conn) Interpolate(dst []byte, query string, args []any) ([]byte, error) {
	if c.noInterp != "" && len(args) > 0 {
		return nil, c.errNoInterp()
	}
	return interpolate(dst, query, args, c.status&statusNoBackslashEscapes != 0, c.loc)
}

func (c *Conn) errNoInterp() error {
	return fmt.Errorf("wire: arguments cannot be escaped safely in character set %s: use prepared statements", c.noInterp)
}

// special are the bytes that can start a quote, a comment or a placeholder.
const special = "'\"`/#-?"

func interpolate(dst []byte, query string, args []any, noBackslash bool, loc *time.Location) ([]byte, error) {
	ai := 0
	for i := 0; i < len(query); {
		j := strings.IndexAny(query[i:], special)
		if j < 0 {
			dst = append(dst, query[i:]...)
			break
		}
		dst = append(dst, query[i:i+j]...)
		i += j
		end := i + 1
		switch ch := query[i]; ch {
		case '\'', '"', '`':
			end = endOfQuoted(query, i, ch, !noBackslash && ch != '`')
		case '/':
			if strings.HasPrefix(query[i:], "/*") && !strings.HasPrefix(query[i:], "/*!") && !strings.HasPrefix(query[i:], "/*M!") {
				if k := strings.Index(query[i+2:], "*/"); k >= 0 {
					end = i + 2 + k + 2
				} else {
					end = len(query)
				}
			}
		case '#':
			end = endOfLine(query, i)
		case '-':
			if i+1 < len(query) && query[i+1] == '-' && (i+2 == len(query) || query[i+2] <= ' ') {
				end = endOfLine(query, i)
			}
		case '?':
			if ai >= len(args) {
				return nil, errors.New("wire: more placeholders than arguments")
			}
			var err error
			if dst, err = appendLiteral(dst, args[ai], noBackslash, loc); err != nil {
				return nil, err
			}
			ai++
			i++
			continue
		}
		dst = append(dst, query[i:end]...)
		i = end
	}
	if ai != len(args) {
		return nil, fmt.Errorf("wire: %d arguments for %d placeholders", len(args), ai)
	}
	return dst, nil
}

// endOfQuoted returns the index just past the quote that closes the one at
// i (len(q) when none does). A doubled quote stands for itself, and with
// backslash escapes a backslash escapes the byte after it.
func endOfQuoted(q string, i int, quote byte, backslash bool) int {
	for j := i + 1; j < len(q); j++ {
		switch q[j] {
		case '\\':
			if backslash {
				j++
			}
		case quote:
			if j+1 < len(q) && q[j+1] == quote {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(q)
}

func endOfLine(q string, i int) int {
	if k := strings.IndexByte(q[i:], '\n'); k >= 0 {
		return i + k + 1
	}
	return len(q)
}

func appendLiteral(b []byte, a any, noBackslash bool, loc *time.Location) ([]byte, error) {
	for range 2 {
		switch v := a.(type) {
		case nil:
			return append(b, "NULL"...), nil
		case int:
			return strconv.AppendInt(b, int64(v), 10), nil
		case int64:
			return strconv.AppendInt(b, v, 10), nil
		case string:
			return appendQuoted(b, v, noBackslash), nil
		case []byte:
			if v == nil {
				return append(b, "NULL"...), nil
			}
			return appendQuoted(b, string(v), noBackslash), nil
		case float64:
			return appendFloat(b, v, 64)
		case uint64:
			return strconv.AppendUint(b, v, 10), nil
		case int32:
			return strconv.AppendInt(b, int64(v), 10), nil
		case uint32:
			return strconv.AppendUint(b, uint64(v), 10), nil
		case uint:
			return strconv.AppendUint(b, uint64(v), 10), nil
		case int16:
			return strconv.AppendInt(b, int64(v), 10), nil
		case uint16:
			return strconv.AppendUint(b, uint64(v), 10), nil
		case int8:
			return strconv.AppendInt(b, int64(v), 10), nil
		case uint8:
			return strconv.AppendUint(b, uint64(v), 10), nil
		case bool:
			if v {
				return append(b, '1'), nil
			}
			return append(b, '0'), nil
		case float32:
			return appendFloat(b, float64(v), 32)
		case time.Time:
			t, err := datetime(v, loc)
			if err != nil {
				return nil, err
			}
			if t.IsZero() {
				return append(b, "'0000-00-00'"...), nil
			}
			b = append(b, '\'')
			b = t.AppendFormat(b, "2006-01-02 15:04:05.999999")
			return append(b, '\''), nil
		}
		var err error
		if a, err = toBase(a); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("wire: unsupported argument type %T", a)
}

func appendFloat(b []byte, v float64, bits int) ([]byte, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("wire: %v has no SQL literal", v)
	}
	return strconv.AppendFloat(b, v, 'g', -1, bits), nil
}

// appendQuoted appends s as a string literal. With backslash escapes the
// bytes the server's own escaping covers are escaped; under
// NO_BACKSLASH_ESCAPES a backslash is an ordinary byte and a quote is
// doubled.
func appendQuoted(b []byte, s string, noBackslash bool) []byte {
	b = append(b, '\'')
	if noBackslash {
		for {
			k := strings.IndexByte(s, '\'')
			if k < 0 {
				break
			}
			b = append(b, s[:k+1]...)
			b = append(b, '\'')
			s = s[k+1:]
		}
		b = append(b, s...)
		return append(b, '\'')
	}
	b = escape.Append(b, s, &escape.Literal)
	return append(b, '\'')
}
