package layers

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The command layer holds flags, one call into the package that owns the
// work, printing and exit codes. Two rules say so: its functions are short
// (a command's file grows with its flags and its printing, which is fine;
// a long function is work that belongs to an owner), and it sends no SQL
// (no database/sql, no driver, no wire: whatever talks to a server is an
// owner's). Everywhere else, a function stays short enough to read whole.
const (
	// maxCLIFuncLines is the most lines of one function in internal/cli.
	maxCLIFuncLines = 80
	// maxFuncLines is the most lines of one function anywhere else.
	maxFuncLines = 120
)

// longFuncs are the functions longer than maxFuncLines that are known and
// still to be split, each with the most lines it may have: the list only
// shrinks (the test fails when one grows, and when one is split and its
// entry is left behind).
var longFuncs = map[string]int{
	"sweep/sweep.go:Run":                       210,
	"bench/legacy.go:legacyArgs":               168,
	"schema/schema.go:loadSchema":              148,
	"bench/run.go:(*Job).Run":                  136,
	"verify/columns.go:newColSpec":             134,
	"check/grants.go:(*snapshot).readAccounts": 123,
}

// cliForbidden are the imports that would let the command layer talk to a
// server itself.
var cliForbidden = map[string]bool{
	"database/sql":                            true,
	"github.com/go-sql-driver/mysql":          true,
	module + "/internal/wire":                 true,
	module + "/internal/wire/lenenc":          true,
	"github.com/go-mysql-org/go-mysql/client": true,
}

// funcName is a declaration as longFuncs names it: file:Name or
// file:(Recv).Name, the file below internal/.
func funcName(rel string, fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return rel + ":" + fd.Name.Name
	}
	var recv func(ast.Expr) string
	recv = func(e ast.Expr) string {
		switch t := e.(type) {
		case *ast.StarExpr:
			return "*" + recv(t.X)
		case *ast.Ident:
			return t.Name
		case *ast.IndexExpr:
			return recv(t.X)
		case *ast.IndexListExpr:
			return recv(t.X)
		}
		return "?"
	}
	return fmt.Sprintf("%s:(%s).%s", rel, recv(fd.Recv.List[0].Type), fd.Name.Name)
}

func TestFunctionLength(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range sources(t) {
		for _, d := range s.file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			n := s.fset.Position(fd.End()).Line - s.fset.Position(fd.Pos()).Line + 1
			name := funcName(s.rel, fd)
			limit := maxFuncLines
			if s.pkg == "cli" {
				limit = maxCLIFuncLines
			}
			if known, ok := longFuncs[name]; ok {
				seen[name] = true
				if n <= limit {
					t.Errorf("%s has %d lines, within the limit of %d: remove it from longFuncs", name, n, limit)
				}
				limit = known
			}
			if n > limit {
				hint := "split it into steps that each say what they do"
				if s.pkg == "cli" {
					hint = "split it, or move its work into the package that owns it"
				}
				t.Errorf("%s has %d lines, want at most %d: %s", name, n, limit, hint)
			}
		}
	}
	for name := range longFuncs {
		if !seen[name] {
			t.Errorf("%s is in longFuncs but not in the source: remove it", name)
		}
	}
}

func TestCLISendsNoSQL(t *testing.T) {
	var bad []string
	files := 0
	for _, s := range sources(t) {
		if s.pkg != "cli" {
			continue
		}
		files++
		for _, imp := range s.file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if cliForbidden[p] {
				bad = append(bad, s.rel+" imports "+p)
			}
		}
	}
	if files < 10 {
		t.Fatalf("found %d files in internal/cli, want at least 10: is the test run from internal/layers?", files)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: the command layer sends no SQL; move the work into the package that owns it", b)
	}
}

// TestRulesSee proves the two scans find what they look for in planted
// source.
func TestRulesSee(t *testing.T) {
	src := "package cli\nimport \"database/sql\"\nvar _ sql.DB\nfunc (c *cmd) long() {\n" + strings.Repeat("\t_ = 1\n", 85) + "}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	fd := f.Decls[len(f.Decls)-1].(*ast.FuncDecl)
	if got, want := funcName("cli/x.go", fd), "cli/x.go:(*cmd).long"; got != want {
		t.Errorf("funcName: got %q, want %q", got, want)
	}
	if n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1; n <= maxCLIFuncLines {
		t.Errorf("planted function: got %d lines, want more than %d", n, maxCLIFuncLines)
	}
	p, _ := strconv.Unquote(f.Imports[0].Path.Value)
	if !cliForbidden[p] {
		t.Errorf("import %s: got allowed, want forbidden in cli", p)
	}
}
