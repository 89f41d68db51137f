package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/sweep"
	"github.com/shakedown/shakedown/internal/target"
)

// checkStore proves, before any work starts, that the store a flag names
// can be used, as checkOutputs does for files: a SQLite file that can be
// written (its directory made if missing, as opening it does), or a store
// on a server that opens. It keeps nothing it made.
func checkStore(ctx context.Context, env *Env, flag, path string) error {
	if path == "" {
		return nil
	}
	if store.IsURL(path) {
		st, err := openStore(ctx, env, flag, path)
		if err != nil {
			return err
		}
		return st.Close()
	}
	dir := filepath.Dir(path)
	for {
		// The directory the store would be made in is the nearest that
		// exists; a missing one is made when the store is opened.
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	probe := path
	if dir != filepath.Dir(path) {
		probe = filepath.Join(dir, "probe")
	}
	if err := outfile.Writable(probe); err != nil {
		return fmt.Errorf("%s %s: cannot be written: %w", flag, path, err)
	}
	return nil
}

// storeFlagUsage is the help of --store where a command keeps its result
// only when asked: the rule is the same in every command (--store FILE,
// or --store=FILE), and the store named by default elsewhere is said.
func storeFlagUsage(env *Env, what string) string {
	return fmt.Sprintf("%s in this results store: a SQLite file, or mysql://user@host:port/db (password: SHAKEDOWN_STORE_PASSWORD); sweep, report, baseline and readiness use %s unless given --store",
		what, store.DefaultPath(env.Getenv))
}

// storeArg is --store PATH as a command line the tool prints should
// write it: a word the shell reads back as PATH.
func storeArg(path string) string { return "--store " + sweep.Quote(path) }

// openStoreFlag opens the store a flag names before the load starts: a
// store that cannot be opened or written stops the command (exit 1) before
// anything is measured. A store on a server takes its password from its
// URL or the option files only; commands that have the environment use
// openStore.
func openStoreFlag(ctx context.Context, flag, path string) (*store.Store, error) {
	return openStore(ctx, nil, flag, path)
}

// StorePasswordEnv is the environment variable that holds the password of
// a store on a server (--store mysql://user@host:port/db), when its URL
// holds none.
const StorePasswordEnv = "SHAKEDOWN_STORE_PASSWORD"

// openStore opens the store flag names: a SQLite file, or with a
// mysql:// URL a database on a MySQL-compatible server, whose password
// comes from the URL, else SHAKEDOWN_STORE_PASSWORD, else the MySQL option
// files, as for a target. env may be nil (no environment). A store that
// cannot be reached or written is a failure (exit 1), said before any load
// starts.
func openStore(ctx context.Context, env *Env, flag, where string) (*store.Store, error) {
	if !store.IsURL(where) {
		st, err := store.Open(ctx, where)
		if err != nil {
			return nil, fmt.Errorf("%s %s: cannot be used: %w", flag, where, err)
		}
		return st, nil
	}
	t, err := target.Parse(where)
	if err != nil {
		return nil, usagef("%s: %v", flag, err)
	}
	var getenv func(string) string
	if env != nil {
		getenv = env.Getenv
	}
	creds := target.Credentials{EnvVar: StorePasswordEnv}
	if err := creds.Fill(t, getenv); err != nil {
		return nil, err
	}
	st, err := store.OpenMySQL(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot be used: %w", flag, err)
	}
	return st, nil
}

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
