package target

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/shakedown/shakedown/internal/suggest"
	"github.com/shakedown/shakedown/internal/usage"
)

// DatabaseRule is what a command does with a target URL that names no
// database. Each command states its rule in its help.
type DatabaseRule int

// Rules.
const (
	// EveryDatabase: no database means every user database (verify,
	// analyze).
	EveryDatabase DatabaseRule = iota
	// OneDatabase: no database is bad usage that asks for one.
	OneDatabase
	// ServerWide: the command reads the whole server and needs no
	// database (vars, watch); one that is named must still exist.
	ServerWide
)

// SystemDatabases are the server's own schemas, never user databases.
var SystemDatabases = []string{"information_schema", "mysql", "performance_schema", "sys"}

// Querier is what *sql.DB, *sql.Conn and *sql.Tx offer.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Databases returns the databases a command works on: named (from an
// option such as --databases) when given, else the URL's database, else by
// rule every user database (or bad usage asking for one). Every database
// named, in the option or the URL, must exist on the server q is
// connected to: one that does not is bad usage that names it. what names
// the command in messages ("analyze"). ServerWide returns nil when nothing
// is named.
func (t *Target) Databases(ctx context.Context, q Querier, named []string, rule DatabaseRule, what string) ([]string, error) {
	all, err := ListDatabases(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%s: list databases on %s: %w", what, t, err)
	}
	check := func(dbs []string, where string) error {
		for _, db := range dbs {
			if slices.Contains(all, db) {
				continue
			}
			return usage.Errorf("%s: %s: database %q does not exist on %s%s; its databases: %s",
				what, where, db, t, suggest.DidYouMean(db, all), listOrNone(UserDatabases(all)))
		}
		return nil
	}
	switch {
	case len(named) > 0:
		return named, check(named, "--databases")
	case t.NamesDB():
		return []string{t.DB}, check([]string{t.DB}, "the URL")
	}
	switch rule {
	case EveryDatabase:
		user := UserDatabases(all)
		if len(user) == 0 {
			return nil, usage.Errorf("%s: %s holds no user database (only %s)", what, t, strings.Join(all, ", "))
		}
		return user, nil
	case OneDatabase:
		return nil, usage.Errorf("%s: name a database in the URL (mysql://user@host:port/DB) or with --databases; databases on %s: %s",
			what, t, listOrNone(UserDatabases(all)))
	}
	return nil, nil
}

// ListDatabases lists every database on the server, system ones too, by
// name. It asks SHOW DATABASES: a gateway answers it with the databases
// its clients see (vtgate's keyspaces), where information_schema.SCHEMATA
// is one backend's (vt_shop_0 for the keyspace shop).
func ListDatabases(ctx context.Context, q Querier) ([]string, error) {
	all, err := QueryAll(ctx, q, ScanString, "SHOW DATABASES")
	slices.Sort(all)
	return all, err
}

// UserDatabases is dbs without the system databases.
func UserDatabases(dbs []string) []string {
	var out []string
	for _, d := range dbs {
		if !slices.Contains(SystemDatabases, strings.ToLower(d)) {
			out = append(out, d)
		}
	}
	return out
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
