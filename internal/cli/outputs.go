package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/store"
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

// findings are the --json, --html and --store flags of the tools whose
// results are evidence for readiness pages: verify, check and replay.
type findings struct {
	json, html, store string
}

// bindFiles declares --json and --html; what names the document in their
// help.
func (f *findings) bindFiles(fs *pflag.FlagSet, what string) {
	fs.StringVar(&f.json, "json", "", "write the "+what+" as JSON to FILE")
	fs.StringVar(&f.html, "html", "", "write the "+what+" as a self-contained HTML page to FILE")
}

// bindStore declares --store; why says what is saved there.
func (f *findings) bindStore(fs *pflag.FlagSet, env *Env, why string) {
	fs.StringVar(&f.store, "store", "", store.FlagUsage(env.Getenv, why))
}

// check makes sure, before anything is read, that every file and the
// store the flags name can be written.
func (f *findings) check(ctx context.Context, env *Env, more ...outfile.File) error {
	files := append([]outfile.File{{Flag: "--json", Path: f.json}, {Flag: "--html", Path: f.html}}, more...)
	if err := outfile.Check(files...); err != nil {
		return err
	}
	return store.CheckFlag(ctx, env.Getenv, "--store", f.store)
}

// keep writes the document to --json and --html through writeJSON and
// writeHTML, and saves the evidence that evidence makes in --store. An
// interrupted run is saved too.
func (f *findings) keep(ctx context.Context, env *Env, writeJSON, writeHTML func(io.Writer) error, evidence func() ([]*store.Evidence, error)) error {
	if f.json != "" {
		if err := outfile.Create(f.json, writeJSON); err != nil {
			return err
		}
	}
	if f.html != "" {
		if err := outfile.Create(f.html, writeHTML); err != nil {
			return err
		}
	}
	if f.store == "" {
		return nil
	}
	evs, err := evidence()
	if err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	st, err := store.OpenFlag(ctx, env.Getenv, "--store", f.store)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, ev := range evs {
		if _, err := st.AddEvidence(ctx, ev); err != nil {
			return fmt.Errorf("--store %s: %w", store.Display(f.store), err)
		}
	}
	_, err = fmt.Fprintf(env.Stdout, "stored in %s (shakedown readiness)\n", store.Display(f.store))
	return err
}

// one is a single piece of evidence as evidence wants it.
func one(ev *store.Evidence, err error) ([]*store.Evidence, error) {
	return []*store.Evidence{ev}, err
}

// chooseFormat settles a command's --format from its --html, -o and
// --format: see outfile.Choose.
func chooseFormat(cmd string, fs *pflag.FlagSet, out, format *string, formats []string) error {
	html := ""
	if f := fs.Lookup("html"); f != nil && f.Changed {
		html = f.Value.String()
	}
	if err := outfile.Choose(cmd, html, fs.Changed("format"), out, format, formats); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// loadOutputs opens the results store a load command's --store names
// (none when storePath is empty; the caller defers closeStore) and says
// where its summary goes: standard error when --json - gives standard
// output to the document.
func loadOutputs(ctx context.Context, env *Env, storePath, jsonPath string) (st *store.Store, out io.Writer, closeStore func(), err error) {
	out = env.Stdout
	if jsonPath == "-" {
		out = env.Stderr
	}
	if storePath == "" {
		return nil, out, func() {}, nil
	}
	if st, err = store.OpenFlag(ctx, env.Getenv, "--store", storePath); err != nil {
		return nil, nil, nil, err
	}
	return st, out, func() { st.Close() }, nil
}

// loadEnd is how a load command ends once what it measured was saved:
// when saving failed too, the load's own error is printed and the save's
// returned.
func loadEnd(env *Env, runErr, saveErr error) error {
	if saveErr == nil {
		return runErr
	}
	if runErr != nil {
		fmt.Fprintln(env.Stderr, "shakedown:", runErr)
	}
	return saveErr
}
