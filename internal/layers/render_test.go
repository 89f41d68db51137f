package layers

import (
	"go/ast"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pageOwner is the one package that writes a page's shell and styles:
// every HTML page is framed by render, and every tool keeps only its
// content, so that the stylesheet, the head and the escaping rule exist
// once.
const pageOwner = "render"

// shellMarks are what only a page's shell holds, lower-cased.
var shellMarks = []string{"<!doctype", "<html", "<style"}

// shellMark returns the first shell mark in text, or "".
func shellMark(text string) string {
	low := strings.ToLower(text)
	for _, m := range shellMarks {
		if strings.Contains(low, m) {
			return m
		}
	}
	return ""
}

// shellLiterals lists the string literals in s that hold a shell mark:
// "file:line mark".
func shellLiterals(s source) []string {
	var out []string
	ast.Inspect(s.file, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		v, err := strconv.Unquote(lit.Value)
		if err != nil {
			v = lit.Value
		}
		if m := shellMark(v); m != "" {
			out = append(out, where(s, lit)+" "+m)
		}
		return true
	})
	return out
}

// TestOnlyRenderWritesPages fails when a package other than render writes
// a page's shell or a stylesheet: a doctype, an <html> or a <style> in a
// string of a non-test Go file, or in a file beside the Go files (an
// embedded template or stylesheet).
func TestOnlyRenderWritesPages(t *testing.T) {
	var bad []string
	owned := 0
	for _, s := range sources(t) {
		lits := shellLiterals(s)
		if s.pkg == pageOwner {
			owned += len(lits)
			continue
		}
		bad = append(bad, lits...)
	}
	if owned == 0 {
		t.Errorf("got no page shell in package %s, want its doctype, <html> and <style>: is the scan blind?", pageOwner)
	}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		n := d.Name()
		if d.IsDir() {
			if path != ".." && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(n, ".go") {
			return nil
		}
		rel, err := filepath.Rel("..", path)
		if err != nil {
			return err
		}
		if filepath.ToSlash(filepath.Dir(rel)) == pageOwner {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if m := shellMark(string(b)); m != "" {
			bad = append(bad, filepath.ToSlash(rel)+" "+m)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk internal: %v", err)
	}
	reportEach(t, bad, "%s: got a page shell or stylesheet outside %s, want the page's content only, framed by render.Write or render.Execute", pageOwner)
}

// TestShellMark: the scan sees every shell mark in any case, and passes
// content and style attributes.
func TestShellMark(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"doctype", "<!DOCTYPE html>\n", "<!doctype"},
		{"html element", `<html lang="en">`, "<html"},
		{"style block", "<style>body{}</style>", "<style"},
		{"upper case", "<HTML>", "<html"},
		{"content", `<h1>shakedown</h1><table><tr><td class="l">x</td></tr></table>`, ""},
		{"style attribute", `<span class="swatch" style="background:#000"></span>`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := shellMark(c.text); got != c.want {
				t.Errorf("shellMark(%q): got %q, want %q", c.text, got, c.want)
			}
		})
	}
}
