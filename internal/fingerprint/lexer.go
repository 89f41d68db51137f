// Package fingerprint turns SQL statements into fingerprints (the statement
// with its literals replaced, as pt-query-digest shows them) and tells what a
// statement does: whether it can write, whether its result has a defined
// order, and whether its result can repeat at all.
//
// A real MySQL-dialect parser (TiDB's) decides where it can parse the
// statement. What it cannot parse (MariaDB-only syntax, say) falls back to
// this package's own lexer: the fingerprint is still made, the statement
// counts as a possible write, and the fallback is counted.
package fingerprint

import (
	"strings"
)

// tokKind is the kind of a lexed token.
type tokKind uint8

const (
	tokWord   tokKind = iota // keyword or identifier
	tokQuoted                // `identifier`
	tokString                // 'text' or "text"
	tokNumber                // 12, -1.5e3, 0x1F, x'1F', b'101'
	tokParam                 // ? or :name
	tokVar                   // @user or @@system variable
	tokPunct                 // operators and punctuation
	tokHint                  // /*+ optimizer hint */
)

// token is one lexed token; text is a slice of the statement.
type token struct {
	kind tokKind
	text string
	pos  int // offset in the statement
}

// Literal is one literal value of a statement, in order of appearance.
type Literal struct {
	// Number is true for numeric literals, false for strings.
	Number bool
	// Param is a '?' placeholder of a prepared statement.
	Param bool
	// Text is the literal as written (quotes and escapes included).
	Text string
	// Pos and End delimit the literal (a sign included) in the statement.
	Pos, End int
}

// Value is the literal's value: a string literal unquoted and unescaped.
func (l Literal) Value() string {
	if l.Number || l.Param || len(l.Text) < 2 {
		return l.Text
	}
	return unquote(l.Text)
}

// lex splits sql into tokens, dropping comments and whitespace. It never
// fails: an unterminated quote or comment runs to the end of the text.
//
// An executable comment (/*!40101 ... */, MariaDB's /*M!100100 ... */) is
// SQL the server runs, so its content is lexed like the rest: a dump's
// "/*!40101 SET NAMES utf8 */" is a SET, not an empty statement. An
// optimizer hint (/*+ ... */) changes the plan, so it stays one token.
func lex(sql string, out []token) []token {
	i, n := 0, len(sql)
	inExec := false // inside an executable comment, whose */ is skipped
	for i < n {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '#':
			i = skipLine(sql, i)
		case c == '-' && i+1 < n && sql[i+1] == '-' && (i+2 == n || isSpace(sql[i+2])):
			i = skipLine(sql, i)
		case inExec && c == '*' && i+1 < n && sql[i+1] == '/':
			inExec = false
			i += 2
		case c == '/' && i+1 < n && sql[i+1] == '*':
			if j, ok := execCommentStart(sql, i); ok && !inExec {
				inExec = true
				i = j
				break
			}
			end := strings.Index(sql[i+2:], "*/")
			if i+2 < n && sql[i+2] == '+' {
				j := n
				if end >= 0 {
					j = i + end + 4
				}
				out = append(out, token{tokHint, sql[i:j], i})
				i = j
				break
			}
			if end < 0 {
				i = n
			} else {
				i += end + 4
			}
		case c == '\'' || c == '"':
			j := skipQuoted(sql, i, c)
			out = append(out, token{tokString, sql[i:j], i})
			i = j
		case c == '`':
			j := skipQuoted(sql, i, c)
			out = append(out, token{tokQuoted, sql[i:j], i})
			i = j
		case (c == 'x' || c == 'X' || c == 'b' || c == 'B') && i+1 < n && sql[i+1] == '\'':
			j := skipQuoted(sql, i+1, '\'')
			out = append(out, token{tokNumber, sql[i:j], i})
			i = j
		case (c == 'n' || c == 'N') && i+1 < n && sql[i+1] == '\'':
			j := skipQuoted(sql, i+1, '\'')
			out = append(out, token{tokString, sql[i+1 : j], i + 1})
			i = j
		case c == '_' && startsCharsetIntro(sql, i):
			// _utf8mb4'text': the introducer belongs to the literal.
			q := strings.IndexByte(sql[i:], '\'') + i
			j := skipQuoted(sql, q, '\'')
			out = append(out, token{tokString, sql[q:j], q})
			i = j
		case isDigit(c) || (c == '.' && i+1 < n && isDigit(sql[i+1]) && !prevIsWordish(out)):
			j := skipNumber(sql, i)
			if j < n && isIdentByte(sql[j]) && !(c == '0' && j == i+1) {
				// 1abc is an identifier in MySQL.
				for j < n && isIdentByte(sql[j]) {
					j++
				}
				out = append(out, token{tokWord, sql[i:j], i})
			} else {
				out = append(out, token{tokNumber, sql[i:j], i})
			}
			i = j
		case isIdentByte(c) || c >= 0x80:
			j := i + 1
			for j < n && (isIdentByte(sql[j]) || sql[j] >= 0x80) {
				j++
			}
			out = append(out, token{tokWord, sql[i:j], i})
			i = j
		case c == '@':
			j := i + 1
			if j < n && sql[j] == '@' {
				j++
			}
			if j < n && (sql[j] == '`' || sql[j] == '\'' || sql[j] == '"') {
				j = skipQuoted(sql, j, sql[j])
			} else {
				for j < n && (isIdentByte(sql[j]) || sql[j] == '.' || sql[j] == '$' || sql[j] >= 0x80) {
					j++
				}
			}
			out = append(out, token{tokVar, sql[i:j], i})
			i = j
		case c == '?':
			out = append(out, token{tokParam, "?", i})
			i++
		default:
			j := i + 1
			if j < n && isOpPair(c, sql[j]) {
				j++
				if j < n && c == '<' && sql[j-1] == '=' && sql[j] == '>' {
					j++
				}
			}
			out = append(out, token{tokPunct, sql[i:j], i})
			i = j
		}
	}
	return out
}

// execCommentStart reports whether an executable comment starts at i
// ("/*!", "/*!50003", "/*M!100100") and where its SQL begins.
func execCommentStart(sql string, i int) (int, bool) {
	j := i + 2
	if j < len(sql) && sql[j] == 'M' {
		j++
	}
	if j >= len(sql) || sql[j] != '!' {
		return 0, false
	}
	j++
	for k := 0; k < 6 && j < len(sql) && isDigit(sql[j]); k++ {
		j++
	}
	return j, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

func isOpPair(a, b byte) bool {
	switch string([]byte{a, b}) {
	case "<=", ">=", "<>", "!=", "||", "&&", ":=", "<<", ">>", "->":
		return true
	}
	return false
}

func prevIsWordish(out []token) bool {
	if len(out) == 0 {
		return false
	}
	k := out[len(out)-1].kind
	return k == tokWord || k == tokQuoted
}

func startsCharsetIntro(sql string, i int) bool {
	j := i + 1
	for j < len(sql) && isIdentByte(sql[j]) {
		j++
	}
	return j < len(sql) && sql[j] == '\'' && j > i+1
}

func skipLine(sql string, i int) int {
	if end := strings.IndexByte(sql[i:], '\n'); end >= 0 {
		return i + end + 1
	}
	return len(sql)
}

// skipQuoted returns the index after the quoted text that starts at i with
// quote q: a doubled quote and a backslash escape (not in backticks) stay
// inside.
func skipQuoted(sql string, i int, q byte) int {
	j := i + 1
	for j < len(sql) {
		c := sql[j]
		switch {
		case c == '\\' && q != '`':
			j += 2
			continue
		case c == q:
			if j+1 < len(sql) && sql[j+1] == q {
				j += 2
				continue
			}
			return j + 1
		}
		j++
	}
	return len(sql)
}

func skipNumber(sql string, i int) int {
	n := len(sql)
	if sql[i] == '0' && i+1 < n && (sql[i+1] == 'x' || sql[i+1] == 'X' || sql[i+1] == 'b' || sql[i+1] == 'B') {
		j := i + 2
		for j < n && (isDigit(sql[j]) || (sql[j]|0x20 >= 'a' && sql[j]|0x20 <= 'f')) {
			j++
		}
		return j
	}
	j := i
	for j < n && isDigit(sql[j]) {
		j++
	}
	if j < n && sql[j] == '.' {
		j++
		for j < n && isDigit(sql[j]) {
			j++
		}
	}
	if j < n && (sql[j] == 'e' || sql[j] == 'E') {
		k := j + 1
		if k < n && (sql[k] == '+' || sql[k] == '-') {
			k++
		}
		if k < n && isDigit(sql[k]) {
			j = k
			for j < n && isDigit(sql[j]) {
				j++
			}
		}
	}
	return j
}

// unquote undoes the quoting of a string literal: the outer quotes, doubled
// quotes and backslash escapes.
func unquote(s string) string {
	q := s[0]
	body := s[1:]
	if len(body) > 0 && body[len(body)-1] == q {
		body = body[:len(body)-1]
	}
	if !strings.ContainsAny(body, "\\"+string(q)) {
		return body
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\\' && i+1 < len(body):
			i++
			switch body[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'b':
				b.WriteByte('\b')
			case 'Z':
				b.WriteByte(26)
			case '%', '_':
				b.WriteByte('\\')
				b.WriteByte(body[i])
			default:
				b.WriteByte(body[i])
			}
		case c == q && i+1 < len(body) && body[i+1] == q:
			b.WriteByte(q)
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
