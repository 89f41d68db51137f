package sbflag

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// Section is a titled group of options in a command's help: the options
// by name, listed in that order.
type Section struct {
	Title   string
	Options []string
}

// WriteSections writes fs's options under the titles of sections, each
// section aligned on its own and preceded by a blank line. An option in
// no section (and not hidden) comes last, under "Other options", so that
// one is never left out; Unplaced says which those are, for a test.
func WriteSections(w io.Writer, fs *pflag.FlagSet, sections []Section) {
	placed := map[string]bool{}
	write := func(title string, names []string) {
		sub := NewFlagSet(title)
		for _, n := range names {
			if f := fs.Lookup(n); f != nil && !placed[f.Name] {
				sub.AddFlag(f)
				placed[f.Name] = true
			}
		}
		if sub.HasFlags() {
			fmt.Fprintf(w, "\n%s:\n%s", title, sub.FlagUsages())
		}
	}
	for _, s := range sections {
		write(s.Title, s.Options)
	}
	write("Other options", Unplaced(fs, sections))
}

// Unplaced names fs's options, hidden ones aside, that no section lists.
func Unplaced(fs *pflag.FlagSet, sections []Section) []string {
	in := map[string]bool{}
	for _, s := range sections {
		for _, n := range s.Options {
			in[n] = true
		}
	}
	var out []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !in[f.Name] && !f.Hidden {
			out = append(out, f.Name)
		}
	})
	return out
}
