package layers

import (
	"go/ast"
	"testing"
)

// fileWriters are the files that write files themselves, not through
// package outfile, and why. Every other file that writes one goes through
// outfile.WriteAtomic or outfile.Create: whole or not at all, synced, its
// errors naming the path. The test fails when a file here no longer
// writes, so that the list only shrinks.
var fileWriters = map[string]string{
	"sandbox/cgroup.go":    "the kernel's cgroup control files",
	"sandbox/sandbox.go":   "the sandbox's init.sql, given to the server at its first start",
	"sandbox/process.go":   "the sandbox's console log, appended to",
	"sandbox/server.go":    "the server's own log",
	"golden/golden.go":     "goldens under -update",
	"slap/slap.go":         "--csv appends, as mysqlslap's does",
	"capture/create.go":    "capture -o streams records as it reads them: an interrupted capture keeps what it read",
	"capture/workload.go":  "--to-workload writes a workload and a file of values per statement beside it (to move to outfile)",
	"verify/checkpoint.go": "the checkpoint journal, appended to as chunks finish",
	"dbcopy/checkpoint.go": "the checkpoint journal, appended to as ranges finish",
	"follow/live.go":       "--json streams a line per progress interval while the follower runs: a killed follower keeps what it wrote",
	"verify/options.go":    "--fix-sql streams the repair statements as differences are found (to move to outfile)",
}

// writesFile names the calls that create or write a file.
var writesFile = map[string]bool{"Create": true, "WriteFile": true, "OpenFile": true, "CreateTemp": true}

// fileWrites lists the calls in s of os.Create, os.WriteFile, os.OpenFile
// and os.CreateTemp.
func fileWrites(s source) []string {
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
		if x, ok := sel.X.(*ast.Ident); ok && names[x.Name] == "os" && writesFile[sel.Sel.Name] {
			out = append(out, where(s, call)+" os."+sel.Sel.Name)
		}
		return true
	})
	return out
}

func TestOneWayToWriteAFile(t *testing.T) {
	var bad []string
	seen := map[string]bool{}
	owner := 0
	for _, s := range sources(t) {
		w := fileWrites(s)
		if s.pkg == "outfile" {
			owner += len(w)
			continue
		}
		if _, ok := fileWriters[s.rel]; ok {
			seen[s.rel] = len(w) > 0
			continue
		}
		bad = append(bad, w...)
	}
	if owner == 0 {
		t.Errorf("got no file written in package outfile, want its writes: is the scan blind?")
	}
	reportEach(t, bad, "%s: got a file written by hand, want outfile.WriteAtomic or outfile.Create")
	for f := range fileWriters {
		if !seen[f] {
			t.Errorf("%s writes no file any more: remove it from fileWriters", f)
		}
	}
}
