package sqlsplit

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func texts(stmts []Statement) []string {
	out := make([]string, len(stmts))
	for i, s := range stmts {
		out[i] = s.Text
	}
	return out
}

func TestSplit(t *testing.T) {
	cases := []struct {
		name string
		src  string
		opt  Options
		want []string
	}{
		{"seed command", "begin;update seckill set num=num-1 where id =1 and num>1;commit;", Options{}, []string{"begin", "update seckill set num=num-1 where id =1 and num>1", "commit"}},
		{"no final delimiter", "select 1; select 2", Options{}, []string{"select 1", "select 2"}},
		{"empty statements dropped", ";;select 1;;\n;", Options{}, []string{"select 1"}},
		{"delimiter in quotes", `select ';', "a;b", ` + "`c;d`" + `; select 2`, Options{}, []string{`select ';', "a;b", ` + "`c;d`", "select 2"}},
		{"escaped and doubled quotes", `select 'it''s;', 'a\';b'; select 2`, Options{}, []string{`select 'it''s;', 'a\';b'`, "select 2"}},
		{"backslash in backticks is plain", "select `a\\`; select 2", Options{}, []string{"select `a\\`", "select 2"}},
		{"line comments", "-- first; not a statement\nselect 1; # also; a comment\nselect 2 -- trailing; comment\n;", Options{}, []string{"select 1", "select 2 -- trailing; comment"}},
		{"double dash needs a space", "select 1--1; select 2", Options{}, []string{"select 1--1", "select 2"}},
		{"block comments", "/* a; b */ select 1 /* c; d */; select 2", Options{}, []string{"select 1 /* c; d */", "select 2"}},
		{"executable comment kept", "/*!40101 SET NAMES utf8 */; select 1", Options{}, []string{"/*!40101 SET NAMES utf8 */", "select 1"}},
		{"multi-character delimiter", "select 1 $$ select ';$$' $$select 3", Options{Delimiter: "$$"}, []string{"select 1", "select ';$$'", "select 3"}},
		{"newline delimiter", "select 1\nselect 2\n\nselect 'a\nb'\n", Options{Delimiter: "\n"}, []string{"select 1", "select 2", "select 'a\nb'"}},
		{"newline delimiter with comment", "-- c\nselect 1\n", Options{Delimiter: "\n"}, []string{"select 1"}},
		{"client DELIMITER", "select 1;\nDELIMITER //\ncreate procedure p() begin select 1; select 2; end//\ndelimiter ;\nselect 3;", Options{ClientCommands: true},
			[]string{"select 1", "create procedure p() begin select 1; select 2; end", "select 3"}},
		{"DELIMITER word without client commands", "delimiter_table;", Options{ClientCommands: true}, []string{"delimiter_table"}},
		{"one statement on several lines with its delimiter", "select\n 1\n;", Options{Strict: true}, []string{"select\n 1"}},
		{"one line without delimiter is fine when strict", "select 1", Options{Strict: true}, []string{"select 1"}},
		{"delimiter of a whole character", "select '晚' 晚 select 2", Options{Delimiter: "晚"}, []string{"select '晚'", "select 2"}},
		{"delimiter never inside a character", "select 晚 \xe6 select 2", Options{Delimiter: "\xe6"}, []string{"select 晚", "select 2"}},
		{"an ASCII delimiter byte for byte in other character sets", "select '\xe9';\xb0", Options{}, []string{"select '\xe9'", "\xb0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Split(tc.src, tc.opt)
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if g := texts(got); !reflect.DeepEqual(g, tc.want) {
				t.Errorf("got %q, want %q", g, tc.want)
			}
		})
	}
}

func TestSplitNumbersLinesAndComments(t *testing.T) {
	src := "-- @weight 3\n-- @name first\nselect 1;\n\n/* plain */\nselect\n2;"
	got, err := Split(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Statement{
		{N: 1, Line: 3, Text: "select 1", Comments: []string{"@weight 3", "@name first"}},
		{N: 2, Line: 6, Text: "select\n2", Comments: []string{"plain"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestSplitErrors(t *testing.T) {
	var stmts []string
	for i := 1; i <= 6; i++ {
		stmts = append(stmts, "select 1")
	}
	seventh := strings.Join(stmts, ";\n") + ";\nselect 'unterminated from here;\nselect 8;"
	cases := []struct {
		name     string
		src      string
		opt      Options
		wantN    int
		wantLine int
		want     []string
	}{
		{"unterminated quote in statement 7", seventh, Options{}, 7, 7, []string{"statement 7 (line 7)", "unterminated quoted string (')", "select 'unterminated"}},
		{"unterminated double quote", `select "a;`, Options{}, 1, 1, []string{`unterminated quoted string (")`}},
		{"unterminated backtick", "select 1;\nselect `a", Options{}, 2, 2, []string{"unterminated quoted name"}},
		{"unterminated comment", "select 1; /* never closed", Options{}, 2, 1, []string{"unterminated /* comment", "/* never closed"}},
		{"delimiter never occurs", "select 1\nselect 2\nselect 3", Options{Delimiter: ";", Strict: true}, 1, 1, []string{`the delimiter ";" never occurs`, "3 lines"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Split(tc.src, tc.opt)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *SyntaxError", err)
			}
			if se.N != tc.wantN || se.Line != tc.wantLine {
				t.Errorf("got statement %d line %d, want %d and %d", se.N, se.Line, tc.wantN, tc.wantLine)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestShort(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"select  1\n from t", 60, "select 1 from t"},
		{"select 1234567890", 8, "select 1..."},
		{"é", 1, "..."},
	}
	for _, tc := range cases {
		if got := Short(tc.in, tc.n); got != tc.want {
			t.Errorf("Short(%q, %d): got %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
