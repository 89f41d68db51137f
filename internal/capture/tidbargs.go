package capture

import (
	"strconv"
	"strings"
)

// tidbArguments takes apart a prepared statement as TiDB's slow log writes
// it: the text with its '?' marks, then " [arguments: 51]" for one value
// or " [arguments: (51, "abc", <nil>)]" for several, strings in Go's
// quoting. ok is false for any other statement, or arguments it cannot
// read (the statement is then kept as written).
func tidbArguments(sql string) (text string, params []any, ok bool) {
	const mark = " [arguments: "
	i := strings.LastIndex(sql, mark)
	if i < 0 || !strings.HasSuffix(sql, "]") || !strings.Contains(sql[:i], "?") {
		return "", nil, false
	}
	args := sql[i+len(mark) : len(sql)-1]
	var parts []string
	if strings.HasPrefix(args, "(") && strings.HasSuffix(args, ")") {
		if parts, ok = splitArgs(args[1 : len(args)-1]); !ok {
			return "", nil, false
		}
	} else {
		parts = []string{args}
	}
	if len(parts) != strings.Count(sql[:i], "?") {
		// A '?' inside a literal or a comment: the marks cannot be
		// matched with the values for certain.
		return "", nil, false
	}
	for _, p := range parts {
		v, ok := argValue(p)
		if !ok {
			return "", nil, false
		}
		params = append(params, v)
	}
	return sql[:i], params, true
}

// splitArgs splits "51, "a, b", 3" at the commas outside strings.
func splitArgs(s string) ([]string, bool) {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch {
		case quoted && s[i] == '\\':
			i++
		case s[i] == '"':
			quoted = !quoted
		case !quoted && s[i] == ',':
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	if quoted {
		return nil, false
	}
	return append(out, strings.TrimSpace(s[start:])), true
}

// argValue reads one value: an integer, a Go-quoted string, <nil> or NULL,
// or another bare value (a decimal, a time) kept as its text, which the
// server converts as it would the literal.
func argValue(s string) (any, bool) {
	switch {
	case s == "<nil>" || s == "NULL":
		return nil, true
	case strings.HasPrefix(s, `"`):
		v, err := strconv.Unquote(s)
		return v, err == nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	return s, s != ""
}
