package fingerprint

import (
	"slices"
	"strings"
)

// unaryAfter are keywords after which a sign belongs to the number that
// follows ("WHERE a = -1", "LIMIT -1"), rather than being a binary minus.
var unaryAfter = map[string]bool{
	"select": true, "where": true, "and": true, "or": true, "not": true, "by": true,
	"in": true, "values": true, "value": true, "set": true, "when": true, "then": true,
	"else": true, "between": true, "like": true, "limit": true, "offset": true,
	"is": true, "on": true, "having": true, "interval": true, "return": true, "xor": true,
}

// Lexed is what the lexer makes of a statement.
type Lexed struct {
	// Fingerprint is the statement lowercased, comments dropped, whitespace
	// collapsed, literals replaced by ? and lists of them (IN, VALUES)
	// collapsed to (?+).
	Fingerprint string
	// Literals are the literal values replaced, in order.
	Literals []Literal
	tokens   []token
}

// Lex fingerprints sql with the lexer alone. It never fails.
func Lex(sql string) Lexed {
	var sc scratch
	lits := []Literal{}
	fp := sc.fingerprint(sql, &lits)
	if len(lits) == 0 {
		lits = nil
	}
	return Lexed{Fingerprint: string(fp), Literals: lits, tokens: sc.toks}
}

// scratch holds the buffers of a fingerprint, kept from one statement to
// the next by an Analyzer so that a statement seen before costs no
// allocation.
type scratch struct {
	toks  []token
	parts []string
	out   []string
	fp    []byte
}

// fingerprint returns sql's fingerprint in sc's buffer (valid until the next
// call), appending the literals to lits if it is not nil.
func (sc *scratch) fingerprint(sql string, lits *[]Literal) []byte {
	toks := lex(sql, sc.toks[:0])
	sc.toks = toks
	parts := sc.parts[:0]
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.kind {
		case tokString:
			parts = append(parts, "?")
			if lits != nil {
				*lits = append(*lits, Literal{Text: t.text, Pos: t.pos, End: t.pos + len(t.text)})
			}
		case tokNumber:
			parts = append(parts, "?")
			if lits != nil {
				*lits = append(*lits, Literal{Number: true, Text: t.text, Pos: t.pos, End: t.pos + len(t.text)})
			}
		case tokParam:
			parts = append(parts, "?")
			if lits != nil {
				*lits = append(*lits, Literal{Param: true, Text: "?", Pos: t.pos, End: t.pos + 1})
			}
		case tokPunct:
			if (t.text == "-" || t.text == "+") && i+1 < len(toks) && toks[i+1].kind == tokNumber && signIsUnary(toks, i) {
				parts = append(parts, "?")
				if lits != nil {
					text := toks[i+1].text
					if t.text == "-" {
						text = "-" + text
					}
					n := toks[i+1]
					*lits = append(*lits, Literal{Number: true, Text: text, Pos: t.pos, End: n.pos + len(n.text)})
				}
				i++
				continue
			}
			if t.text == ";" && i == len(toks)-1 {
				continue
			}
			parts = append(parts, t.text)
		case tokQuoted:
			q := strings.Trim(t.text, "`")
			if strings.Contains(q, "``") {
				q = strings.ReplaceAll(q, "``", "`")
			}
			parts = append(parts, q)
		case tokHint:
			parts = append(parts, strings.Join(strings.Fields(strings.ToLower(t.text)), " "))
		default:
			parts = append(parts, t.text)
		}
	}
	sc.parts = parts
	sc.out = collapseLists(parts, sc.out[:0])
	sc.fp = appendJoin(sc.fp[:0], sc.out)
	return sc.fp
}

func signIsUnary(toks []token, i int) bool {
	if i == 0 {
		return true
	}
	p := toks[i-1]
	switch p.kind {
	case tokPunct:
		return p.text != ")"
	case tokWord:
		return unaryAfter[strings.ToLower(p.text)]
	}
	return false
}

// collapseLists turns "in ( ? , ? , ? )" into "in (?+)" and "values ( ... )
// , ( ... )" with identical groups into one group, appending to out.
func collapseLists(p, out []string) []string {
	for i := 0; i < len(p); i++ {
		out = append(out, p[i])
		if isWord(p[i], "in") && i+2 < len(p) && p[i+1] == "(" && p[i+2] == "?" {
			j := i + 3
			for j+1 < len(p) && p[j] == "," && p[j+1] == "?" {
				j += 2
			}
			if j < len(p) && p[j] == ")" {
				out = append(out, "(?+)")
				i = j
			}
			continue
		}
		if (isWord(p[i], "values") || isWord(p[i], "value")) && i+1 < len(p) && p[i+1] == "(" {
			end := matchParen(p, i+1)
			if end < 0 {
				continue
			}
			group := p[i+1 : end+1]
			out = append(out, collapseGroup(group)...)
			j := end + 1
			for j < len(p) && p[j] == "," && j+1 < len(p) && p[j+1] == "(" {
				e := matchParen(p, j+1)
				if e < 0 || !slices.EqualFunc(p[j+1:e+1], group, strings.EqualFold) {
					break
				}
				j = e + 1
			}
			i = j - 1
		}
	}
	return out
}

// isWord reports whether s is the lower-case ASCII word w in any case.
func isWord(s, w string) bool {
	if len(s) != len(w) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i]|0x20 != w[i] {
			return false
		}
	}
	return true
}

func collapseGroup(g []string) []string {
	for k := 1; k < len(g)-1; k++ {
		if (k%2 == 1 && g[k] != "?") || (k%2 == 0 && g[k] != ",") {
			return g
		}
	}
	if len(g) >= 3 {
		return []string{"(?+)"}
	}
	return g
}

func matchParen(p []string, i int) int {
	depth := 0
	for j := i; j < len(p); j++ {
		switch p[j] {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// appendJoin writes the parts in lower case with single spaces, none inside
// parentheses' edges, before commas or around dots. Words are lowered here,
// as they are written, rather than each into a string of its own.
func appendJoin(b []byte, p []string) []byte {
	for i, s := range p {
		if i > 0 {
			prev := p[i-1]
			if !(s == "," || s == ")" || s == "." || prev == "(" || prev == ".") {
				b = append(b, ' ')
			}
		}
		b = appendLower(b, s)
	}
	return b
}

// appendLower appends s in lower case.
func appendLower(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return append(b, strings.ToLower(s[i:])...)
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}

// shape is what the lexer can tell of a statement's structure, for those the
// parser cannot read.
type shape struct {
	verb    string // first word, lowercased
	ordered bool   // ORDER BY outside parentheses
	limit   bool   // LIMIT outside parentheses
	nondet  string // a function whose result cannot repeat, if any
}

func (l Lexed) shape() shape {
	var s shape
	depth := 0
	for i, t := range l.tokens {
		switch t.kind {
		case tokPunct:
			switch t.text {
			case "(":
				depth++
			case ")":
				depth--
			}
		case tokWord:
			w := strings.ToLower(t.text)
			if s.verb == "" {
				s.verb = w
			}
			if depth == 0 && w == "order" && i+1 < len(l.tokens) && strings.EqualFold(l.tokens[i+1].text, "by") {
				s.ordered = true
			}
			if depth == 0 && w == "limit" {
				s.limit = true
			}
			if s.nondet == "" && nondetFuncs[w] {
				next := i+1 < len(l.tokens) && l.tokens[i+1].text == "("
				if next || nondetBare[w] {
					s.nondet = w + "()"
				}
			}
		}
	}
	return s
}
