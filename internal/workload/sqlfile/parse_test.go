package sqlfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/workload"
)

func TestParse(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ids.txt"), []byte("3\n\n5\n8\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `-- captured SQL
-- @weight 5
SELECT c FROM t WHERE id = {{uniform 1 100}};
-- @name by_name
SELECT id FROM users WHERE name = {{string 8}} AND '{x}' <> '?';
SELECT c FROM t WHERE id = {{file ids.txt}} AND k = {{column shop.t.k}};
-- @event pay weight=3
BEGIN;
UPDATE a SET n = n - 1 WHERE id = {{uid = zipf 1 1000 1.1}};
-- @name ledger
INSERT INTO l VALUES ({{uid}}, {{int 1 9}});
COMMIT;
`
	p, err := parse(src, ";", dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.events) != 4 || len(p.stmts) != 7 {
		t.Fatalf("got %d events and %d statements, want 4 and 7", len(p.events), len(p.stmts))
	}
	wantCum := []int64{5, 6, 7, 10}
	for i, w := range wantCum {
		if p.cum[i] != w {
			t.Errorf("cumulative weight %d: got %d, want %d", i, p.cum[i], w)
		}
	}
	pay := p.events[3]
	if pay.name != "pay" || !pay.trx || pay.nvars != 1 || len(pay.stmts) != 4 {
		t.Errorf("group: got name %q trx %v vars %d statements %d, want pay, true, 1, 4", pay.name, pay.trx, pay.nvars, len(pay.stmts))
	}
	names := []string{
		"#1 SELECT c FROM t WHERE id = ?",
		"#2 by_name: SELECT id FROM users WHERE name = ? AND '{x}' <> '?'",
		"#3 SELECT c FROM t WHERE id = ? AND k = ?",
		"#4 pay.1: BEGIN",
		"#5 pay.2: UPDATE a SET n = n - 1 WHERE id = ?",
		"#6 pay.ledger: INSERT INTO l VALUES (?, ?)",
		"#7 pay.4: COMMIT",
	}
	for i, n := range names {
		if p.stmts[i].name != n {
			t.Errorf("statement %d: got name %q, want %q", i+1, p.stmts[i].name, n)
		}
	}
	if a := p.stmts[5].args; len(a) != 2 || a[0].kind != argRef || a[0].slot != 0 || a[1].kind != argInt {
		t.Errorf("ledger arguments: got %+v, want a reference to uid, then int", a)
	}
	if a := p.stmts[4].args[0]; a.kind != argZipf || a.exp != 1.1 || !a.define {
		t.Errorf("uid: got %+v, want zipf with exponent 1.1 that defines a value", a)
	}
	file := p.stmts[2].args[0].src
	if file.ints == nil || len(file.ints) != 3 || file.ints[2] != 8 {
		t.Errorf("file values: got %v %v, want the integers 3 5 8", file.ints, file.strs)
	}
	col := p.stmts[2].args[1].src
	if col.table != "`shop`.`t`" || col.column != "`k`" || col.loaded {
		t.Errorf("column source: got %+v, want shop.t.k, not loaded yet", col)
	}
	if !p.stmts[0].rows || p.stmts[4].rows {
		t.Errorf("rows: got SELECT %v UPDATE %v, want true and false", p.stmts[0].rows, p.stmts[4].rows)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{"empty", "-- only a comment\n", []string{"holds no statements"}},
		{"unterminated quote", "select 1;\nselect 'a;\n", []string{"statement 2 (line 2)", "unterminated quoted string"}},
		{"placeholder in quotes", "select '{{uniform 1 2}}';", []string{"statement 1", "placeholder inside a quoted string"}},
		{"own parameter marker", "select ?;", []string{"'?' parameter markers are not supported"}},
		{"unknown generator", "select {{gauss 1 2}};", []string{`unknown generator "gauss"`, "uniform A B"}},
		{"empty range", "select {{uniform 9 1}};", []string{"the range is empty"}},
		{"bad number", "select {{uniform 1 x}};", []string{`"x" is not a whole number`}},
		{"unknown reference", "select {{uid}};", []string{"{{uid}} names no value"}},
		{"reference in another event", "select {{u = uniform 1 2}};\nselect {{u}};", []string{"{{u}} names no value"}},
		{"unterminated placeholder", "select {{uniform 1 2;", []string{"unterminated placeholder"}},
		{"unknown annotation", "-- @wieght 3\nselect 1;", []string{"unknown annotation @wieght"}},
		{"bad weight", "-- @weight 0\nselect 1;", []string{"@weight 0"}},
		{"weight in a group", "-- @event g\n-- @weight 2\nselect 1;", []string{"@weight inside an @event group"}},
		{"delimiter never occurs", "select 1\nselect 2\n", []string{`the delimiter ";" never occurs`}},
		{"missing value file", "select {{file nope.txt}};", []string{"{{file nope.txt}}"}},
		{"value file that never ends", "select {{file /dev/zero}};", []string{"{{file /dev/zero}}: not a regular file"}},
		{"bad column name", "select {{column justone}};", []string{"column takes [DB.]TABLE.COLUMN"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(tc.src, ";", t.TempDir())
			if err == nil {
				t.Fatalf("got no error, want one containing %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestValidateNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "biz.sql")
	if err := os.WriteFile(path, []byte("select 1;\nselect \"x;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := newGenerator(newMeta())
	if err := g.Flags().Parse([]string{"--file=" + path}); err != nil {
		t.Fatal(err)
	}
	err := g.Validate()
	if err == nil || !strings.Contains(err.Error(), "--file "+path+": statement 2 (line 2)") {
		t.Errorf("got %v, want the file, statement 2 and line 2", err)
	}
	g = newGenerator(newMeta())
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), "--file is required") {
		t.Errorf("got %v, want --file is required", err)
	}
}

// TestEventKind checks what an event of a statement file is as the server
// counts it: one statement, one transaction, or not known.
func TestEventKind(t *testing.T) {
	cases := []struct {
		name, src string
		want      workload.EventKind
	}{
		{"statements", "SELECT 1;\n-- @weight 3\nUPDATE t SET n = n + 1;\n", workload.EventStatement},
		{"transactions", "-- @event a\nBEGIN;\nSELECT 1;\nCOMMIT;\n-- @event b\nSTART TRANSACTION;\nUPDATE t SET n = 1;\ncommit;\n", workload.EventTransaction},
		{"mixed", "SELECT 1;\n-- @event a\nBEGIN;\nSELECT 1;\nCOMMIT;\n", ""},
		{"a group without a transaction", "-- @event a\nSELECT 1;\nSELECT 2;\n", ""},
		{"a transaction left open", "-- @event a\nBEGIN;\nSELECT 1;\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := fileOf(t, c.src)
			if got := g.EventKind(); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	if got := (&generator{}).EventKind(); got != "" {
		t.Errorf("before Validate: got %q, want \"\"", got)
	}
}

// TestReadOnly: a file is read-only when the parser finds that none of its
// statements can change data; BEGIN, COMMIT and ROLLBACK do not count.
func TestReadOnly(t *testing.T) {
	cases := []struct {
		name, src string
		want      bool
	}{
		{"selects", "SELECT c FROM t WHERE id = {{uniform 1 100}};\nSHOW TABLES;\n", true},
		{"a read-only transaction", "-- @event a\nBEGIN;\nSELECT c FROM t WHERE id = {{uniform 1 100}};\nCOMMIT;\n-- @event b\nSTART TRANSACTION;\nSELECT 1;\nROLLBACK;\n", true},
		{"an update", "SELECT 1;\nUPDATE t SET n = n + 1 WHERE id = {{uniform 1 100}};\n", false},
		{"a locking read", "SELECT c FROM t WHERE id = {{uniform 1 100}} FOR UPDATE;\n", false},
		{"an insert in a transaction", "-- @event a\nBEGIN;\nINSERT INTO l VALUES ({{int 1 9}});\nCOMMIT;\n", false},
		{"not parsed", "SELECT c FROM t WHERE id = 1 FRO;\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := fileOf(t, c.src)
			if got := g.ReadOnly(); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
	if (&generator{}).ReadOnly() {
		t.Error("before Validate: got read-only, want not")
	}
}

// fileOf is a generator of the file src, as Validate leaves it.
func fileOf(t *testing.T, src string) *generator {
	t.Helper()
	p, err := parse(src, ";", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &generator{prog: p}
}
