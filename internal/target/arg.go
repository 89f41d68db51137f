package target

import (
	"context"
	"database/sql"
	"strings"

	"github.com/shakedown/shakedown/internal/usage"
)

// The commands that take target URLs as arguments (verify, analyze, vars,
// watch, host, check, capture, replay) read them here, with the password
// options every command has.

// ParseArg reads a target URL argument and finds its password (see
// Credentials); a malformed URL or an unreadable password file is bad
// usage. what names the command, or the argument, in messages.
func (c *Credentials) ParseArg(getenv func(string) string, what, raw string) (*Target, error) {
	if !strings.HasPrefix(raw, "mysql://") {
		return nil, usage.Errorf("%s: %q is not a target URL: use mysql://user@host:port/db (shakedown help targets)", what, RedactArg(raw))
	}
	tgt, err := Parse(raw)
	if err != nil {
		return nil, usage.Errorf("%s: %v", what, err)
	}
	if err := c.Fill(tgt, getenv); err != nil {
		return nil, err
	}
	if !tgt.NamesDB() {
		// No default database here: each command says what a URL
		// without one means (DatabaseRule).
		tgt.DB = ""
	}
	return tgt, nil
}

// ConnectArg parses a target URL argument and opens a checked pool of size
// connections on its first endpoint, without a default database: watch
// and vars read server-wide figures. A database the URL names must exist
// all the same, so that a typo is not silently ignored. Connection
// failures come back explained.
func (c *Credentials) ConnectArg(ctx context.Context, getenv func(string) string, verb, raw string, size int) (*Target, *sql.DB, error) {
	tgt, err := c.ParseArg(getenv, verb, raw)
	if err != nil {
		return nil, nil, err
	}
	db, err := tgt.ConnectServer(ctx, size, verb)
	if err != nil {
		return nil, nil, err
	}
	return tgt, db, nil
}

// RedactArg keeps what looks like a password out of an error about a
// malformed argument.
func RedactArg(s string) string {
	if at := strings.LastIndex(s, "@"); at >= 0 {
		if i := strings.Index(s, "://"); i >= 0 && i < at {
			return s[:i+3] + "...@" + s[at+1:]
		}
		return "...@" + s[at+1:]
	}
	return s
}
