package sqlfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelpExamplesParse: the example statements of --help are a valid
// statement file, with the events and names the text says they make.
func TestHelpExamplesParse(t *testing.T) {
	section := helpText[strings.Index(helpText, "The statement file"):strings.Index(helpText, "Placeholders")]
	var lines []string
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "    ") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	path := filepath.Join(t.TempDir(), "help.sql")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := parseFile(path, ";")
	if err != nil {
		t.Fatalf("got %v, want the examples of --help to parse:\n%s", err, strings.Join(lines, "\n"))
	}
	if len(p.events) != 3 || len(p.stmts) != 6 {
		t.Errorf("got %d events and %d statements, want 3 and 6", len(p.events), len(p.stmts))
	}
	var names []string
	for _, s := range p.stmts {
		names = append(names, s.name)
	}
	if !strings.Contains(strings.Join(names, " "), "top_orders") {
		t.Errorf("got statement names %q, want top_orders among them", names)
	}
}
