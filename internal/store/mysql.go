package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/target"
)

// IsURL reports whether where names a store on a server (mysql://...)
// rather than a SQLite file.
func IsURL(where string) bool { return strings.HasPrefix(where, "mysql://") }

// Display is where as written for people: a SQLite file as it is, a store
// on a server as its URL without the password the URL may hold (what Path
// gives once it is open). Messages and pages name the store by it, never by
// the --store value as given.
func Display(where string) string {
	if !IsURL(where) {
		return where
	}
	t, err := target.Parse(where)
	if err != nil {
		// Parse names no password in its errors; the URL itself is not
		// shown, as it may hold one.
		return "mysql://(a URL that does not parse)"
	}
	return t.Redacted()
}

// ioTimeout bounds every read from and write to a store on a server: a
// stalled store costs a runner at most this, never its run.
const ioTimeout = time.Minute

// OpenMySQL opens the store in the database t names on a MySQL-compatible
// server, creating the database when it is missing (if the user may) and
// the tables. t carries its password (the caller fills it); Path is its
// URL without it. The caller closes the store.
func OpenMySQL(ctx context.Context, t *target.Target) (*Store, error) {
	ep := t.Endpoints()[0]
	where := t.Redacted()
	cctx, cancel := context.WithTimeout(ctx, t.ConnectTimeout+ioTimeout)
	defer cancel()
	db, err := openPool(t, ep, t.DB)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", where, err)
	}
	err = db.PingContext(cctx)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == target.ERBadDB {
		db.Close()
		if err = createDatabase(cctx, t, ep); err != nil {
			return nil, fmt.Errorf("open store %s: %w", where, err)
		}
		if db, err = openPool(t, ep, t.DB); err != nil {
			return nil, fmt.Errorf("open store %s: %w", where, err)
		}
		err = db.PingContext(cctx)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", where, t.Explain(ep, err))
	}
	s := &Store{db: db, path: where, dialect: mysqlDialect{}}
	if err := s.migrate(cctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", where, err)
	}
	return s, nil
}

// openPool is a small pool on the store's database whose reads and
// writes are bounded.
func openPool(t *target.Target, ep target.Endpoint, db string) (*sql.DB, error) {
	cfg := t.Config(ep, db)
	cfg.ReadTimeout, cfg.WriteTimeout = ioTimeout, ioTimeout
	pool, err := t.OpenConfig(cfg, 4)
	if err != nil {
		return nil, err
	}
	pool.SetMaxOpenConns(4)
	pool.SetConnMaxIdleTime(time.Minute)
	return pool, nil
}

func createDatabase(ctx context.Context, t *target.Target, ep target.Endpoint) error {
	db, err := openPool(t, ep, "")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+escape.Ident(t.DB)+" DEFAULT CHARACTER SET utf8mb4"); err != nil {
		return fmt.Errorf("database %q does not exist and could not be created: %w; create it (CREATE DATABASE %s) or name another", t.DB, t.Explain(ep, err), t.DB)
	}
	return nil
}
