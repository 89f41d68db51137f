package layers

import (
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/shakedown/shakedown/internal/"

// order is the layering of the internal packages, lowest first. A package
// may import packages of lower layers only, never one of its own layer or
// above: packages of one layer are peers that meet in what lies below them.
// Every internal package is listed, so a new one is placed on purpose.
var order = [][]string{
	// Leaves: no internal imports.
	{"flavour"},
	{"version", "usage", "suggest", "clock", "ioloop", "stats", "sqlsplit", "progress", "histogram",
		"randgen", "vars", "fingerprint", "golden", "browsertest", "host", "outfile", "home", "escape", "wire/lenenc"},
	// Flags, run segments, the wire protocol and the in-process test server;
	// render, the one frame and stylesheet of every HTML page.
	{"sbflag", "segment", "wire", "wire/wiretest", "sandbox/gmstest", "render",
		"sandbox/gmstest/gmsserver"},
	// Server sessions (target opens every connection but wire's, which
	// client opens), the workload interface, captures.
	{"target", "workload", "capture"},
	// Table definitions, read and compared (for verify and check alike), the
	// sandboxes, which connect through target, and the LOAD DATA LOCAL
	// stream (prepare's and copy's).
	{"schema", "sandbox", "loaddata"},
	// The sandboxes tests start, and the sources host facts are read for
	// (a sandbox, a target).
	{"sandbox/sandboxtest", "hostsource"},
	// Clients, the workloads and the stored documents (result holds every
	// stored document, the one vars bisect writes among them, and imports
	// no producer); the run as a typed value, which the plan makes and
	// bench runs.
	{"client", "client/fakeconn", "workload/connect", "workload/hotrow", "workload/oltp",
		"workload/ping", "workload/sqlfile", "result", "runspec"},
	// The runner, the store, the plan (which does not import bench),
	// the workload set and the tools that compare servers: verify and
	// check (which does not import verify); stall capture, which the
	// monitor drives.
	{"runner", "store", "plan", "workload/all", "verify", "check", "stall"},
	// Producers above the runner (slap and replay measure their client's
	// load with its probe), a split load's runner, and copy, which
	// verifies what it copied.
	{"monitor", "slap", "replay", "splitload", "dbcopy"},
	// The load (bench: one prepare, run or cleanup), the follower of a copy's binary log (which
	// proves its copies with dbcopy and verify), and the mirror of live
	// reads (which compares results with replay's comparison).
	{"bench", "follow", "mirror"},
	// Workflows and the renderer of stored documents: peers, none imports
	// another; report renders what bisect and sweep stored without linking
	// them. capacity searches a target's rate with bench's runs.
	{"sweep", "bisect", "report", "capacity"},
	// Readiness reads the evidence of the tools below it.
	{"readiness"},
	// A rehearsal chains the tools and workflows below it and ends on the
	// readiness page.
	{"rehearse"},
	// demo runs a sweep of its own sandboxes, reports it, and rehearses a
	// migration between them.
	{"demo"},
	// The command layer.
	{"cli"},
}

// layerOf maps each package to its layer.
func layerOf(t *testing.T) map[string]int {
	t.Helper()
	m := map[string]int{}
	for i, layer := range order {
		for _, p := range layer {
			if _, dup := m[p]; dup {
				t.Fatalf("package %s is listed twice in the order", p)
			}
			m[p] = i
		}
	}
	return m
}

// imports lists, for each internal package below dir, the internal packages
// its non-test files import (test files may reach up to build fixtures).
func imports(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != dir && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
			return filepath.SkipDir
		}
		pkg, err := build.Default.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "." || rel == "layers" {
			return nil
		}
		var internal []string
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, module) {
				internal = append(internal, strings.TrimPrefix(imp, module))
			}
		}
		sort.Strings(internal)
		out[rel] = internal
		return nil
	})
	if err != nil {
		t.Fatalf("list packages: %v", err)
	}
	return out
}

func TestLayers(t *testing.T) {
	layer := layerOf(t)
	pkgs := imports(t, "..")
	if len(pkgs) < 30 {
		t.Fatalf("found %d internal packages, want at least 30: is the test run from internal/layers?", len(pkgs))
	}
	for p := range layer {
		if _, ok := pkgs[p]; !ok {
			t.Errorf("package %s is in the order but not in internal/: remove it from the order", p)
		}
	}
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		lp, ok := layer[p]
		if !ok {
			t.Errorf("package %s is not in the order: place it in a layer of layers_test.go", p)
			continue
		}
		for _, imp := range pkgs[p] {
			li, ok := layer[imp]
			if !ok || li < lp {
				continue
			}
			if li == lp {
				t.Errorf("%s imports its peer %s (layer %d): got an import within a layer, want imports of lower layers only", p, imp, lp+1)
			} else {
				t.Errorf("%s (layer %d) imports %s (layer %d): got an import up the order, want imports of lower layers only", p, lp+1, imp, li+1)
			}
		}
	}
}

// TestArchitectureLayout fails when the layout section of
// docs/architecture.md does not describe the order as it is: one item a
// layer, lowest first, each naming (as `name`, or `parent/*` for a family
// such as the workloads) the packages of its layer and no other, and a
// last item for `layers` itself.
func TestArchitectureLayout(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "\n## Layout\n")
	if start < 0 {
		t.Fatal("docs/architecture.md has no \"## Layout\" section")
	}
	section := text[start+1:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	items := layoutItems(section)
	if len(items) != len(order)+1 || !slices.Equal(items[len(items)-1], []string{"layers"}) {
		t.Fatalf("docs/architecture.md: got %d items in the layout, want %d: one a layer of the order, then `layers`", len(items), len(order)+1)
	}
	layer := layerOf(t)
	for i, names := range items[:len(order)] {
		for _, p := range order[i] {
			if !slices.ContainsFunc(names, func(n string) bool { return standsFor(n, p) }) {
				t.Errorf("docs/architecture.md: item %d does not name %s: got it missing, want it described where it sits (layer %d)", i+1, p, i+1)
			}
		}
		for _, n := range names {
			if !slices.ContainsFunc(order[i], func(p string) bool { return standsFor(n, p) }) {
				where := "in no layer"
				for p, l := range layer {
					if standsFor(n, p) {
						where = fmt.Sprintf("in layer %d", l+1)
						break
					}
				}
				t.Errorf("docs/architecture.md: item %d names %s, which is %s: got it under layer %d, want it where it sits", i+1, n, where, i+1)
			}
		}
	}
}

// standsFor reports whether a name of the layout (`sandbox/gmstest`,
// `gmsserver`, `workload/*`) stands for package p.
func standsFor(name, p string) bool {
	if family, ok := strings.CutSuffix(name, "/*"); ok {
		return strings.HasPrefix(p, family+"/")
	}
	return name == p || name == p[strings.LastIndex(p, "/")+1:]
}

// layoutItems reads the list of a layout section: for each item ("- "
// at the start of a line), the packages it names, the backquoted words
// before the first "`:" that ends them.
func layoutItems(section string) [][]string {
	var items [][]string
	for _, item := range strings.Split("\n"+section, "\n- ")[1:] {
		head, _, ok := strings.Cut(item, "`:")
		if !ok {
			items = append(items, nil)
			continue
		}
		var names []string
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(head+"`", -1) {
			names = append(names, m[1])
		}
		items = append(items, names)
	}
	return items
}
