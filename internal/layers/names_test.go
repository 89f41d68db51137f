package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
	"testing"
)

// secondNames are the exported second names for another package's type,
// constant or variable that are known and still to be removed, each
// "package.Name". The test fails when one is no longer there, so that the
// list only shrinks: a concept has one name, its owner's, and callers use
// it.
var secondNames = map[string]string{
	"cli.Version":          "version.Number",
	"report.Stat":          "stats.Summary",
	"store.RunOK":          "result.StatusOK",
	"store.RunFailed":      "result.StatusFailed",
	"store.RunInterrupted": "result.StatusInterrupted",
	"sweep.ErrInterrupted": "bench.ErrInterrupted",
}

// aliases lists the exported names s gives to another package's: "pkg.Name
// (file:line)" for a type alias (type T = other.T) or a constant or variable
// that is another internal package's (const C = other.C); a value of the
// standard library's (time.Second) is a value, not a name.
func aliases(s source) map[string]string {
	out := map[string]string{}
	imported := importNames(s.file)
	other := func(e ast.Expr) bool {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		x, ok := sel.X.(*ast.Ident)
		return ok && strings.HasPrefix(imported[x.Name], module)
	}
	for _, d := range s.file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range g.Specs {
			switch sp := spec.(type) {
			case *ast.TypeSpec:
				if sp.Assign.IsValid() && sp.Name.IsExported() && other(sp.Type) {
					out[s.pkg+"."+sp.Name.Name] = where(s, sp)
				}
			case *ast.ValueSpec:
				for i, n := range sp.Names {
					if i < len(sp.Values) && n.IsExported() && other(sp.Values[i]) {
						out[s.pkg+"."+n.Name] = where(s, n)
					}
				}
			}
		}
	}
	return out
}

func TestNoSecondNames(t *testing.T) {
	found := map[string]string{}
	for _, s := range sources(t) {
		for name, at := range aliases(s) {
			found[name] = at
		}
	}
	var names []string
	for n := range found {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if _, known := secondNames[n]; !known {
			t.Errorf("%s (%s) is a second name for another package's: got an alias, want callers to use the owner's name", n, found[n])
		}
	}
	for n := range secondNames {
		if _, ok := found[n]; !ok {
			t.Errorf("second name %s is gone: remove it from secondNames", n)
		}
	}
}

// TestAliasScanSees proves the scan finds a planted alias of each kind.
func TestAliasScanSees(t *testing.T) {
	src := `package p
import (
	"github.com/shakedown/shakedown/internal/stats"
	"time"
)
type Summary = stats.Summary
const Min = stats.MinRuns
var Every = time.Second
const own = stats.MinRuns
type Mine struct{}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := aliases(source{rel: "p/p.go", pkg: "p", fset: fset, file: f})
	for _, want := range []string{"p.Summary", "p.Min"} {
		if _, ok := got[want]; !ok {
			t.Errorf("got %v, want %s among them", got, want)
		}
	}
	if len(got) != 2 {
		t.Errorf("got %d aliases %v, want 2 (not the unexported one, not time's)", len(got), got)
	}
}
