package sqlfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// placeholders counts the '?' of sql outside quotes and comments: each is
// one placeholder the parser turned into a parameter.
func placeholders(sql string) int {
	n := 0
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; {
		case c == '\'' || c == '"' || c == '`':
			for i++; i < len(sql) && sql[i] != c; i++ {
				if sql[i] == '\\' && c != '`' {
					i++
				}
			}
		case c == '#' || c == '-' && strings.HasPrefix(sql[i:], "--") && (i+2 == len(sql) || strings.ContainsRune(" \t\n", rune(sql[i+2]))):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return n
			}
			i += end + 3
		case c == '?':
			n++
		}
	}
	return n
}

// FuzzParse feeds the statement-file parser any text: it must never panic
// or hang, and a file it accepts must hold together: every statement has
// as many parameters as placeholders, names only values drawn before it in
// its event, and every event has a positive weight.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"SELECT {{uniform 1 100}};",
		"-- @weight 10\nSELECT name FROM users WHERE id = {{zipf 1 1000000}};\n-- @name top\nSELECT * FROM o WHERE u = {{uniform 1 9}} ORDER BY id DESC LIMIT 10;",
		"-- @event pay weight=2\nBEGIN;\nUPDATE a SET b = b - 1 WHERE id = {{uid = uniform 1 100000}};\nINSERT INTO l VALUES ({{uid}}, -1);\nCOMMIT;",
		"SELECT {{string 8}}, {{int 1 9}}, {{zipf 1 9 1.2}}, {{column db.t.c}}, {{file values.txt}};",
		"SELECT 'a''b', \"{\", `}}` /* ? */ FROM t WHERE x = {{uniform 1 2}} -- why?\n;",
		"DELIMITER //\nSELECT {{uniform 1 2}}//\n",
		"SELECT {{x = uniform 1 2}}, {{x = uniform 3 4}};",
		"select {{uniform 1 2;",
		"select ?;",
	}
	for _, s := range seeds {
		f.Add(s, ";")
	}
	f.Add("SELECT {{uniform 1 2}}\nSELECT 2\n", "\n")
	dir := f.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "values.txt"), []byte("1\n2\n3\n"), 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src, delim string) {
		p, err := parse(src, delim, dir)
		if err != nil {
			if err.Error() == "" {
				t.Error("an error without a message")
			}
			return
		}
		if len(p.events) == 0 || len(p.cum) != len(p.events) {
			t.Fatalf("accepted with %d events and %d weights", len(p.events), len(p.cum))
		}
		var prev int64
		for i, ev := range p.events {
			if ev.weight < 1 || p.cum[i] != prev+ev.weight {
				t.Errorf("event %d: weight %d, cumulative %d after %d", i, ev.weight, p.cum[i], prev)
			}
			prev = p.cum[i]
			if len(ev.stmts) == 0 {
				t.Errorf("event %d has no statement", i)
			}
			for _, st := range ev.stmts {
				if p.stmts[st.idx] != st {
					t.Errorf("statement %q is not at its index %d", st.sql, st.idx)
				}
				if got := placeholders(st.sql); got != len(st.args) {
					t.Errorf("statement %q: %d placeholders, %d parameters", st.sql, got, len(st.args))
				}
				for _, a := range st.args {
					if a.slot >= ev.nvars {
						t.Errorf("statement %q: value slot %d of an event with %d", st.sql, a.slot, ev.nvars)
					}
					if (a.kind == argUniform || a.kind == argZipf || a.kind == argInt) && a.a > a.b {
						t.Errorf("statement %q: empty range %d..%d accepted", st.sql, a.a, a.b)
					}
					if a.kind == argSource && a.src == nil {
						t.Errorf("statement %q: a source placeholder without its source", st.sql)
					}
				}
			}
		}
	})
}
