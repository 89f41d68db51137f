package sbflag

import (
	"strings"
	"testing"
)

func TestWriteSections(t *testing.T) {
	fs := NewFlagSet("t")
	var a, b, c int
	fs.IntVar(&a, "alpha", 1, "the first")
	fs.IntVar(&b, "beta", 2, "the second")
	fs.IntVar(&c, "gamma", 3, "left out")
	sections := []Section{{"Two", []string{"beta", "alpha"}}, {"None", []string{"missing"}}}
	var w strings.Builder
	WriteSections(&w, fs, sections)
	got := w.String()
	// The section's order; an empty section is not shown; the option of
	// no section comes last.
	want := "\nTwo:\n      --beta int    the second (default 2)\n      --alpha int   the first (default 1)\n\nOther options:\n      --gamma int   left out (default 3)\n"
	if got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if u := Unplaced(fs, sections); len(u) != 1 || u[0] != "gamma" {
		t.Errorf("Unplaced: got %v, want [gamma]", u)
	}
}
