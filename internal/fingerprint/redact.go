package fingerprint

import "strings"

// Redacted is what stands in for a password.
const Redacted = "'<redacted>'"

// Redact replaces the passwords in sql with Redacted: the text after
// IDENTIFIED BY/AS (CREATE USER, ALTER USER, GRANT), the values of SET
// PASSWORD, PASSWORD('...'), and MASTER_PASSWORD / SOURCE_PASSWORD /
// PASSWORD = '...' options. It reports whether it replaced anything. sql is
// returned unchanged (and unallocated) when it holds no such keyword.
func Redact(sql string) (string, bool) {
	if !mayHoldPassword(sql) {
		return sql, false
	}
	toks := lex(sql, nil)
	var cut [][2]int // string literals to replace
	setPassword := len(toks) >= 2 && strings.EqualFold(toks[0].text, "set") && strings.EqualFold(toks[1].text, "password")
	for i, t := range toks {
		if t.kind != tokString {
			continue
		}
		secret := setPassword
		if i >= 1 {
			p := strings.ToLower(toks[i-1].text)
			switch {
			case (p == "by" || p == "as") && i >= 2 && identifiedNear(toks, i-1):
				secret = true
			case p == "(" && i >= 2 && strings.HasSuffix(strings.ToLower(toks[i-2].text), "password"):
				secret = true
			case p == "=" && i >= 2 && strings.HasSuffix(strings.ToLower(toks[i-2].text), "password"):
				secret = true
			}
		}
		if secret {
			cut = append(cut, [2]int{t.pos, t.pos + len(t.text)})
		}
	}
	if len(cut) == 0 {
		return sql, false
	}
	var b strings.Builder
	last := 0
	for _, c := range cut {
		b.WriteString(sql[last:c[0]])
		b.WriteString(Redacted)
		last = c[1]
	}
	b.WriteString(sql[last:])
	return b.String(), true
}

// identifiedNear reports whether the BY or AS at i belongs to IDENTIFIED
// (IDENTIFIED BY, IDENTIFIED WITH plugin BY/AS, IDENTIFIED VIA plugin USING).
func identifiedNear(toks []token, i int) bool {
	for j := i - 1; j >= 0 && j >= i-4; j-- {
		if strings.EqualFold(toks[j].text, "identified") {
			return true
		}
	}
	return false
}

// mayHoldPassword is a cheap test that skips the lexer for almost every
// statement.
func mayHoldPassword(sql string) bool {
	for i := 0; i+8 <= len(sql); i++ {
		c := sql[i] | 0x20
		if c == 'p' && strings.EqualFold(sql[i:i+8], "password") {
			return true
		}
		if c == 'i' && i+10 <= len(sql) && strings.EqualFold(sql[i:i+10], "identified") {
			return true
		}
	}
	return false
}
