package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
)

// PasswordEnv is the environment variable that holds the password of a
// store on a server (--store mysql://user@host:port/db), when its URL
// holds none.
const PasswordEnv = "SHAKEDOWN_STORE_PASSWORD"

// OpenFlag opens the store a command's flag names: a SQLite file, or with
// a mysql:// URL a database on a MySQL-compatible server, whose password
// comes from the URL, else SHAKEDOWN_STORE_PASSWORD, else the MySQL option
// files, as for a target. getenv may be nil (no environment: the URL or
// the option files only). A store that cannot be reached or written is a
// failure (exit 1), said before any load starts; a malformed URL is bad
// usage.
func OpenFlag(ctx context.Context, getenv func(string) string, flag, where string) (*Store, error) {
	if !IsURL(where) {
		st, err := Open(ctx, where)
		if err != nil {
			return nil, fmt.Errorf("%s %s: cannot be used: %w", flag, where, err)
		}
		return st, nil
	}
	t, err := target.Parse(where)
	if err != nil {
		return nil, usage.Errorf("%s: %v", flag, err)
	}
	creds := target.Credentials{EnvVar: PasswordEnv}
	if err := creds.Fill(t, getenv); err != nil {
		return nil, err
	}
	st, err := OpenMySQL(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot be used: %w", flag, err)
	}
	return st, nil
}

// CheckFlag proves, before any work starts, that the store a flag names
// can be used, as outfile.Check does for files: a SQLite file that can be
// written (its directory made if missing, as opening it does), or a store
// on a server that opens. It keeps nothing it made. An empty path is no
// store, and fine.
func CheckFlag(ctx context.Context, getenv func(string) string, flag, path string) error {
	if path == "" {
		return nil
	}
	if IsURL(path) {
		st, err := OpenFlag(ctx, getenv, flag, path)
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

// FlagUsage is the help of --store where a command keeps its result only
// when asked: the rule is the same in every command (--store FILE, or
// --store=FILE), and the store named by default elsewhere is said.
func FlagUsage(getenv func(string) string, what string) string {
	return fmt.Sprintf("%s in this results store: a SQLite file, or mysql://user@host:port/db (password: %s); sweep, report, baseline and readiness use %s unless given --store",
		what, PasswordEnv, DefaultPath(getenv))
}

// OpenExisting opens a store that must already exist: reading a file that
// is not there is bad input, not a reason to make an empty one. (A store
// on a server is made on first use by whoever writes to it.) what names
// the command in messages.
func OpenExisting(ctx context.Context, getenv func(string) string, path, what string) (*Store, error) {
	if IsURL(path) {
		return OpenFlag(ctx, getenv, "--store", path)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, usage.Errorf("%s: no store at %s: name the store with --store", what, path)
	}
	return Open(ctx, path)
}
