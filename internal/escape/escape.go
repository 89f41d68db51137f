// Package escape writes text into MySQL statements: identifiers quoted in
// backticks (Ident), and text with MySQL's backslash escapes. A format is a
// table of the bytes it escapes, so the client's string literals, copy's
// INSERT values and copy's LOAD DATA fields share one loop and differ only
// in which bytes they escape.
package escape

import "strings"

// Ident is the identifier s quoted for a statement: in backticks, each
// backtick in it doubled, so that any name (a reserved word, one with a
// space or a backtick) reads as itself.
func Ident(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// Qualified is db.name with both parts quoted (Ident).
func Qualified(db, name string) string { return Ident(db) + "." + Ident(name) }

// Table maps a byte to the character that follows the backslash in its
// escape; 0 means the byte goes as it is.
type Table [256]byte

var (
	// Literal is the inside of a quoted string literal in a session without
	// NO_BACKSLASH_ESCAPES: the bytes the server's own escaping covers, so
	// that either quote may enclose the literal.
	Literal = Table{0: '0', '\n': 'n', '\r': 'r', '\\': '\\', '\'': '\'', '"': '"', 0x1a: 'Z'}
	// LoadData is a field of LOAD DATA's default format (fields escaped by
	// backslash, terminated by tab, lines by newline): the terminators, the
	// escape itself, and NUL and CR, which a round trip through text tools
	// would lose.
	LoadData = Table{0: '0', '\t': 't', '\n': 'n', '\r': 'r', '\\': '\\'}
)

// Append appends s to dst with the bytes t names escaped. Runs of bytes
// that need no escape are copied whole.
func Append[S ~string | ~[]byte](dst []byte, s S, t *Table) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		if e := t[s[i]]; e != 0 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', e)
			start = i + 1
		}
	}
	return append(dst, s[start:]...)
}
