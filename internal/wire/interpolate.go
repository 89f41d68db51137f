package wire

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Interpolate appends query to dst with each '?' replaced by the next
// argument as an SQL literal, for the text protocol. Strings are quoted and
// escaped for a server that honours backslash escapes (the default
// sql_mode). A '?' inside a quoted string or comment in query is not
// special.
func Interpolate(dst []byte, query string, args []any) ([]byte, error) {
	ai := 0
	var quote byte
	for i := 0; i < len(query); i++ {
		ch := query[i]
		switch {
		case quote != 0:
			if ch == '\\' && quote != '`' && i+1 < len(query) {
				dst = append(dst, ch, query[i+1])
				i++
				continue
			}
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"' || ch == '`':
			quote = ch
		case ch == '?':
			if ai >= len(args) {
				return nil, errors.New("wire: more placeholders than arguments")
			}
			var err error
			if dst, err = appendLiteral(dst, args[ai]); err != nil {
				return nil, err
			}
			ai++
			continue
		}
		dst = append(dst, ch)
	}
	if ai != len(args) {
		return nil, fmt.Errorf("wire: %d arguments for %d placeholders", len(args), ai)
	}
	return dst, nil
}

func appendLiteral(b []byte, a any) ([]byte, error) {
	switch v := a.(type) {
	case nil:
		return append(b, "NULL"...), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(v), 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10), nil
	case uint64:
		return strconv.AppendUint(b, v, 10), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("wire: %v has no SQL literal", v)
		}
		return strconv.AppendFloat(b, v, 'g', -1, 64), nil
	case string:
		return appendQuoted(b, v), nil
	case []byte:
		return appendQuoted(b, string(v)), nil
	}
	return nil, fmt.Errorf("wire: unsupported argument type %T", a)
}

func appendQuoted(b []byte, s string) []byte {
	b = append(b, '\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 0:
			b = append(b, '\\', '0')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\\':
			b = append(b, '\\', '\\')
		case '\'':
			b = append(b, '\\', '\'')
		case '"':
			b = append(b, '\\', '"')
		case 0x1a:
			b = append(b, '\\', 'Z')
		default:
			b = append(b, c)
		}
	}
	return append(b, '\'')
}
