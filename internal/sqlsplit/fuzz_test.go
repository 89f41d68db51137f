package sqlsplit

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSplit feeds the splitter any text, delimiter and options: it must
// never panic, and what it returns must hold together: statements are
// numbered from 1, start on non-decreasing lines, are trimmed, non-empty
// pieces of the text, and an error is a *SyntaxError.
func FuzzSplit(f *testing.F) {
	seeds := []struct {
		src, delim     string
		client, strict bool
	}{
		{"select 1; select 2;", ";", false, false},
		{"-- @weight 3\nSELECT 'a;b', \"c;d\", `e;f` FROM t;\n/* x; */ SELECT 2", ";", true, true},
		{"DELIMITER //\nCREATE PROCEDURE p() BEGIN SELECT 1; END//\nDELIMITER ;\nCALL p();", ";", true, true},
		{"select 1\nselect 2\n", "\n", false, true},
		{"select 'it''s', 'a\\'b' $$ select /*! STRAIGHT_JOIN */ 1 $$", "$$", false, false},
		{"select 'unterminated", ";", false, false},
		{"select 1 /* never closed", ";", false, false},
		{"select 1\nfrom t\nwhere x", ";", false, true},
		{"delimiter\n", ";", true, false},
		{"# comment only\n-- another\n", ";", false, false},
		{"SELECT '\xe2\x82\xac' ;", ";", false, false},
	}
	for _, s := range seeds {
		f.Add(s.src, s.delim, s.client, s.strict)
	}
	f.Fuzz(func(t *testing.T, src, delim string, client, strict bool) {
		stmts, err := Split(src, Options{Delimiter: delim, ClientCommands: client, Strict: strict})
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v (%T) is not a *SyntaxError", err, err)
			}
			if se.N < 1 || se.Line < 1 {
				t.Errorf("error %q: statement %d, line %d, want both >= 1", err, se.N, se.Line)
			}
			return
		}
		line := 1
		for i, st := range stmts {
			if st.N != i+1 {
				t.Errorf("statement %d is numbered %d", i+1, st.N)
			}
			if st.Line < line {
				t.Errorf("statement %d starts on line %d, before the one before it (%d)", st.N, st.Line, line)
			}
			line = st.Line
			if st.Text == "" || st.Text != strings.TrimSpace(st.Text) {
				t.Errorf("statement %d: text %q is empty or not trimmed", st.N, st.Text)
			}
			if !strings.Contains(src, st.Text) {
				t.Errorf("statement %d: text %q is not part of the source", st.N, st.Text)
			}
		}
		if utf8.ValidString(src) {
			for _, st := range stmts {
				if s := Short(st.Text, 20); !utf8.ValidString(s) {
					t.Errorf("Short(%q) = %q: cut inside a character", st.Text, s)
				}
			}
		}
	})
}
