package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/shakedown/shakedown/internal/sweep"
)

// storeArg is --store PATH as a command line the tool prints should
// write it: a word the shell reads back as PATH.
func storeArg(path string) string { return "--store " + sweep.Quote(path) }

// errNotSaved is a failure to keep what a command measured; the caller has
// printed why, and the measurement itself on standard error.
var errNotSaved = errors.New("the results could not be saved: they are on standard error above, as JSON")

// rescue prints what could not be saved on standard error, as JSON, so
// that it is not lost.
func rescue(stderr io.Writer, why error, doc any) error {
	fmt.Fprintln(stderr, "shakedown:", why)
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("%w; nor could they be printed: %v", why, err)
	}
	fmt.Fprintf(stderr, "%s\n", b)
	return errNotSaved
}
