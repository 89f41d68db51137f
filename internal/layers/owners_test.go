package layers

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The owners of two concepts, kept by scanning the source rather than the
// imports: package target opens every server session (client those of the
// lean protocol client, wire) and names every MySQL error number, so that
// how a connect is bounded and explained, and what an error number means,
// are decided in one place.

// errcodeFile is the one file where MySQL error numbers are written.
const errcodeFile = "target/errcode.go"

// connectOwners may open server connections: target; client, whose
// DialWire opens every connection of package wire (the load's, replay's
// and mirror's), since target cannot import wire (wire's tests start
// sandboxes, which connect through target); and wire, the protocol client
// itself.
var connectOwners = map[string]bool{"target": true, "client": true, "wire": true}

// source is one parsed non-test file of an internal package.
type source struct {
	rel  string // path below internal/, slash-separated
	pkg  string // its package's directory below internal/
	fset *token.FileSet
	file *ast.File
}

// sources parses every non-test Go file below internal/ except those of the
// packages that exist to serve tests (wire/wiretest, sandbox/gmstest,
// sandbox/sandboxtest, browsertest): they play servers and start them.
func sources(t *testing.T) []source {
	t.Helper()
	var out []source
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if path != ".." && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || strings.HasSuffix(n, "test")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel("..", path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		out = append(out, source{rel: rel, pkg: filepath.ToSlash(filepath.Dir(rel)), fset: fset, file: f})
		return nil
	})
	if err != nil {
		t.Fatalf("parse sources: %v", err)
	}
	if len(out) < 100 {
		t.Fatalf("parsed %d files, want at least 100: is the test run from internal/layers?", len(out))
	}
	return out
}

// importNames maps the names a file refers to its imports by to their paths.
func importNames(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		m[name] = p
	}
	return m
}

// opener names the calls that open a server connection, by import path and
// function.
var opener = map[string]map[string]bool{
	"database/sql":                   {"Open": true, "OpenDB": true},
	"github.com/go-sql-driver/mysql": {"NewConnector": true},
	module + "wire":                  {"Dial": true},
	"net":                            {"Dial": true, "DialTimeout": true},
}

// opens lists the calls in s that open a server connection: "file:line
// pkg.Func". sql.Open of the sqlite driver opens a file, not a server.
func opens(s source) []string {
	names := importNames(s.file)
	var out []string
	ast.Inspect(s.file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if sel.Sel.Name == "DialContext" {
			out = append(out, where(s, call)+" DialContext")
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok || !opener[names[x.Name]][sel.Sel.Name] {
			return true
		}
		if sel.Sel.Name == "Open" && len(call.Args) > 0 {
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Value == `"sqlite"` {
				return true
			}
		}
		out = append(out, where(s, call)+" "+x.Name+"."+sel.Sel.Name)
		return true
	})
	return out
}

func where(s source, n ast.Node) string {
	return s.rel + ":" + strconv.Itoa(s.fset.Position(n.Pos()).Line)
}

func TestOnlyTargetConnects(t *testing.T) {
	var bad []string
	for _, s := range sources(t) {
		top := strings.SplitN(s.pkg, "/", 2)[0]
		if connectOwners[top] {
			continue
		}
		bad = append(bad, opens(s)...)
	}
	reportEach(t, bad, "%s opens a server connection: got a connect outside target, want target's Open or OpenConfig, or client.DialWire")
}

// isCode reports whether e reads as a MySQL error number: a driver error's
// Number, a call of target.Code, or a name that says code or errno.
func isCode(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return e.Sel.Name == "Number" || codeName(e.Sel.Name)
	case *ast.Ident:
		return codeName(e.Name)
	case *ast.CallExpr:
		switch f := e.Fun.(type) {
		case *ast.Ident:
			return f.Name == "Code"
		case *ast.SelectorExpr:
			return f.Sel.Name == "Code"
		}
	case *ast.ParenExpr:
		return isCode(e.X)
	}
	return false
}

func codeName(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "code") || strings.Contains(n, "errno")
}

// errNumber reports whether lit is an integer (or a string of one) in the
// ranges of MySQL's and MariaDB's error numbers.
func errNumber(lit ast.Expr) bool {
	b, ok := lit.(*ast.BasicLit)
	if !ok {
		return false
	}
	v := b.Value
	if b.Kind == token.STRING {
		v, _ = strconv.Unquote(v)
	} else if b.Kind != token.INT {
		return false
	}
	n, err := strconv.Atoi(v)
	return err == nil && n >= 1000 && n < 5000
}

// errComment matches a comment that names an error: ER_NO_SUCH_TABLE,
// CR_SERVER_LOST.
var errComment = regexp.MustCompile(`\b(ER|CR|WARN)_[A-Z0-9_]+`)

// codeLiterals lists the error numbers written as literals in s: compared
// with a code, a case of a switch on a code, a key of a map literal keyed by
// error numbers, a constant or variable named as an error, or any number
// whose line's comment names an error.
func codeLiterals(s source) []string {
	var out []string
	seen := map[token.Pos]bool{}
	add := func(lit ast.Expr, why string) {
		if errNumber(lit) && !seen[lit.Pos()] {
			seen[lit.Pos()] = true
			out = append(out, where(s, lit)+" "+lit.(*ast.BasicLit).Value+" ("+why+")")
		}
	}
	commented := map[int]bool{}
	for _, cg := range s.file.Comments {
		if errComment.MatchString(cg.Text()) {
			commented[s.fset.Position(cg.Pos()).Line] = true
		}
	}
	ast.Inspect(s.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				if isCode(n.X) {
					add(n.Y, "compared with a code")
				}
				if isCode(n.Y) {
					add(n.X, "compared with a code")
				}
			}
		case *ast.SwitchStmt:
			if n.Tag != nil && isCode(n.Tag) {
				for _, c := range n.Body.List {
					for _, e := range c.(*ast.CaseClause).List {
						add(e, "a case of a switch on a code")
					}
				}
			}
		case *ast.CompositeLit:
			if _, ok := n.Type.(*ast.MapType); ok {
				var keys []ast.Expr
				for _, e := range n.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok && errNumber(kv.Key) {
						keys = append(keys, kv.Key)
					}
				}
				if len(keys) >= 3 {
					for _, k := range keys {
						add(k, "a key of a map of error numbers")
					}
				}
			}
		case *ast.ValueSpec:
			for i, name := range n.Names {
				if i < len(n.Values) && (strings.HasPrefix(strings.ToLower(name.Name), "err") || codeName(name.Name)) {
					add(n.Values[i], "a constant named as an error")
				}
			}
		case *ast.BasicLit:
			if commented[s.fset.Position(n.Pos()).Line] {
				add(n, "its comment names an error")
			}
		}
		return true
	})
	return out
}

func TestErrorNumbersNamedOnce(t *testing.T) {
	var bad []string
	found := false
	for _, s := range sources(t) {
		if s.rel == errcodeFile {
			found = true
			if len(codeLiterals(s)) == 0 {
				t.Errorf("%s names no error numbers: is the scan still finding them?", errcodeFile)
			}
			continue
		}
		bad = append(bad, codeLiterals(s)...)
	}
	if !found {
		t.Fatalf("%s not found: the constants file moved; update errcodeFile", errcodeFile)
	}
	reportEach(t, bad, "%s: got a MySQL error number as a literal, want a constant of %s", errcodeFile)
}

// stateWords are the words of stats.State: a verdict is a stats.State
// wherever it travels, so no package compares one with a string of its
// own (a comparison made as `v == "slower"` breaks silently when stats
// words it anew).
var stateWords = map[string]bool{"faster": true, "slower": true, "same": true, "inconclusive": true, "no verdict": true, "no data": true}

// stateLiterals lists the string literals in s that a verdict is compared
// with: an operand of == or != or a case of a switch.
func stateLiterals(s source) []string {
	var out []string
	check := func(e ast.Expr, why string) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return
		}
		if v, err := strconv.Unquote(lit.Value); err == nil && stateWords[v] {
			out = append(out, where(s, lit)+" "+lit.Value+" ("+why+")")
		}
	}
	ast.Inspect(s.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				check(n.X, "compared")
				check(n.Y, "compared")
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				check(e, "a case of a switch")
			}
		}
		return true
	})
	return out
}

// reportEach fails t once for each place in bad, in order: format takes
// the place first, then args.
func reportEach(t *testing.T, bad []string, format string, args ...any) {
	t.Helper()
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf(format, append([]any{b}, args...)...)
	}
}

// outside is what scan finds in every source but those of package owner.
func outside(t *testing.T, owner string, scan func(source) []string) []string {
	var bad []string
	for _, s := range sources(t) {
		if s.pkg != owner {
			bad = append(bad, scan(s)...)
		}
	}
	return bad
}

func TestVerdictsAreStates(t *testing.T) {
	bad := outside(t, "stats", stateLiterals)
	reportEach(t, bad, "%s: got a verdict compared with a string, want a stats.State constant")
}

// okStatus names the ok status of a stored run: result.StatusOK and the
// store's RunOK, which is it.
var okStatus = map[string]bool{"StatusOK": true, "RunOK": true}

// setsOK reports whether e is the ok status: one of okStatus, plain or
// qualified, or the literal "ok".
func setsOK(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return okStatus[e.Name]
	case *ast.SelectorExpr:
		return okStatus[e.Sel.Name]
	case *ast.BasicLit:
		return e.Kind == token.STRING && e.Value == `"ok"`
	}
	return false
}

// isStatusField reports whether e names a field called Status.
func isStatusField(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "Status"
}

// okStatuses lists where s stores the ok status in a Status field: a
// field of a composite literal or an assignment. Only result.StatusOf says
// a run is ok, so that run, sweep, a split load's merge and report cannot
// disagree about one run again.
func okStatuses(s source) []string {
	var out []string
	ast.Inspect(s.file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Status" && setsOK(n.Value) {
				out = append(out, where(s, n)+" Status: ok")
			}
		case *ast.AssignStmt:
			if len(n.Lhs) != len(n.Rhs) {
				return true
			}
			for i, l := range n.Lhs {
				if isStatusField(l) && setsOK(n.Rhs[i]) {
					out = append(out, where(s, n)+" .Status = ok")
				}
			}
		}
		return true
	})
	return out
}

func TestOnlyStatusOfSaysOK(t *testing.T) {
	bad := outside(t, "result", okStatuses)
	reportEach(t, bad, "%s: got a run's status set to ok, want the status result.StatusOf gives")
}

// TestOwnerScansSee proves the scans above find what they look for, so
// that a clean run means a clean tree and not a blind scan.
func TestOwnerScansSee(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		scan      func(source) []string
		want      int
	}{
		{"verdict compared with a string", `package p; func f(v string) bool { return v == "slower" }`, stateLiterals, 1},
		{"verdict switched on strings", `package p; func f(v string) int { switch v { case "same", "faster": return 1 }; return 0 }`, stateLiterals, 2},
		{"verdict compared with a state", `package p; func f(v stats.State) bool { return v == stats.Slower }`, stateLiterals, 0},
		{"status set to ok", `package p; func f(m *Run) { m.Status, m.Error = RunOK, "" }`, okStatuses, 1},
		{"status ok in a literal", `package p; var r = Run{Status: store.RunOK}`, okStatuses, 1},
		{"status from StatusOf", `package p; func f(m *Run) { m.Status, _ = result.StatusOf(nil, nil, false) }`, okStatuses, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "p.go", tc.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.scan(source{rel: "p/p.go", pkg: "p", fset: fset, file: f}); len(got) != tc.want {
				t.Errorf("got %d findings %v, want %d", len(got), got, tc.want)
			}
		})
	}
}

// eraseLine is what a live status line is redrawn with: a carriage return
// and the terminal's erase-line sequence. Only package progress writes it,
// so that sweep, copy, capacity, slap and rehearse keep their lines one
// way.
var eraseLine = []string{"\r\033[K", "\r\x1b[K"}

// redraws lists the string literals in s that redraw a line in place.
func redraws(s source) []string {
	var out []string
	ast.Inspect(s.file, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		v, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		for _, e := range eraseLine {
			if strings.Contains(v, e) {
				out = append(out, where(s, lit)+" "+lit.Value)
				break
			}
		}
		return true
	})
	return out
}

func TestOnlyProgressRedrawsLines(t *testing.T) {
	var bad []string
	owned := 0
	for _, s := range sources(t) {
		if s.pkg == "progress" {
			owned += len(redraws(s))
			continue
		}
		bad = append(bad, redraws(s)...)
	}
	if owned == 0 {
		t.Errorf("got no line redrawn in package progress, want its erase-line writes: is the scan blind?")
	}
	reportEach(t, bad, "%s: got a status line redrawn by hand, want a progress.Line")
}

// joinCalls are the store's calls by which a runner joins a split load;
// only splitload makes them (splitload.Register), so that run and sweep
// runners join one way, with one key and one set of refusals.
var joinCalls = map[string]bool{"JoinSplit": true, "ClockOffset": true}

func TestOnlySplitloadJoins(t *testing.T) {
	var bad []string
	for _, s := range sources(t) {
		if s.pkg == "splitload" || s.pkg == "store" {
			continue
		}
		ast.Inspect(s.file, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && joinCalls[sel.Sel.Name] {
					bad = append(bad, where(s, call)+" "+sel.Sel.Name)
				}
			}
			return true
		})
	}
	reportEach(t, bad, "%s: got a split load joined by hand, want splitload.Register")
}

// TestSweepsBeginInPreflight keeps one way into a sweep: whoever starts one
// (the command, the demo, a rehearsal) reaches its targets and checks its
// data through sweep.Preflight, so that a check added there holds for all.
func TestSweepsBeginInPreflight(t *testing.T) {
	var bad []string
	calls := 0
	for _, s := range sources(t) {
		if s.pkg == "sweep" {
			continue
		}
		names := importNames(s.file)
		ast.Inspect(s.file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && strings.HasSuffix(names[x.Name], "/internal/sweep") {
				switch sel.Sel.Name {
				case "Preflight":
					calls++
				case "Check", "CheckData":
					bad = append(bad, where(s, call)+" sweep."+sel.Sel.Name)
				}
			}
			return true
		})
	}
	if calls == 0 {
		t.Errorf("got no call of sweep.Preflight, want the command's, the demo's and the rehearsal's: is the scan blind?")
	}
	reportEach(t, bad, "%s: got a sweep begun by hand, want sweep.Preflight")
}

// TestOnlyKeeperKeepsUnsavedSteps keeps one way for a split runner to
// keep the steps a lost store did not take: splitload.Keeper, used by run
// and sweep runners alike.
func TestOnlyKeeperKeepsUnsavedSteps(t *testing.T) {
	var bad []string
	owned := 0
	for _, s := range sources(t) {
		if s.pkg == "store" {
			continue
		}
		ast.Inspect(s.file, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewUnsaved" {
					if s.rel == "splitload/keeper.go" {
						owned++
					} else {
						bad = append(bad, where(s, call)+" NewUnsaved")
					}
				}
			}
			return true
		})
	}
	if owned == 0 {
		t.Errorf("got no store.NewUnsaved in splitload/keeper.go: is the scan blind?")
	}
	reportEach(t, bad, "%s: got a runner keeping unsaved steps by hand, want splitload.Keeper")
}
