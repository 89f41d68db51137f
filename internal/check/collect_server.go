package check

import (
	"context"
	"database/sql"
	"strings"

	"github.com/shakedown/shakedown/internal/schema"
)

// Server-level facts: what a server can hold (collations, engines,
// reserved words, authentication plugins, time zones, loadable functions).

func (s *snapshot) readCollations(ctx context.Context) error {
	s.collations, s.charsets = map[string]string{}, map[string]string{}
	if err := s.queryPairs(ctx, "collations", "information_schema.COLLATIONS",
		`SELECT COLLATION_NAME, CHARACTER_SET_NAME FROM information_schema.COLLATIONS`,
		func(name, cs string) { s.collations[normCollation(name)] = normCollation(cs) }); err != nil {
		return err
	}
	return s.queryPairs(ctx, "collations", "information_schema.CHARACTER_SETS",
		`SELECT CHARACTER_SET_NAME, DEFAULT_COLLATE_NAME FROM information_schema.CHARACTER_SETS`,
		func(name, def string) { s.charsets[normCollation(name)] = normCollation(def) })
}

func (s *snapshot) readEngines(ctx context.Context) error {
	s.engines = map[string]string{}
	return s.queryPairs(ctx, "engines", "information_schema.ENGINES",
		`SELECT ENGINE, SUPPORT FROM information_schema.ENGINES`,
		func(name, support string) { s.engines[strings.ToLower(name)] = strings.ToUpper(support) })
}

// queryPairs reads a listing of names with a value each (NULL reads as
// ""), as the server-level facts mostly are; the read fails as query's do.
func (s *snapshot) queryPairs(ctx context.Context, item, missing, q string, take func(name, value string)) error {
	_, err := s.query(ctx, item, missing, "", q, nil, func(rows *sql.Rows) error {
		var name string
		var value sql.NullString
		if err := rows.Scan(&name, &value); err != nil {
			return err
		}
		take(name, value.String)
		return nil
	})
	return err
}

// readKeywords asks a server that knows which of its keywords are reserved
// (MySQL 8's information_schema.KEYWORDS); other servers are looked up in
// the lists of keywords.go.
func (s *snapshot) readKeywords(ctx context.Context) error {
	if s.server.flavour != "mysql" || s.server.major() < 8 {
		return nil
	}
	words := map[string]bool{}
	ok, err := s.query(ctx, "keywords", "information_schema.KEYWORDS", "",
		`SELECT WORD FROM information_schema.KEYWORDS WHERE RESERVED = 1`, nil,
		func(rows *sql.Rows) error {
			var w string
			if err := rows.Scan(&w); err != nil {
				return err
			}
			words[strings.ToUpper(w)] = true
			return nil
		})
	if ok && len(words) > 0 {
		s.reserved = words
	}
	delete(s.failed, "keywords") // the built-in lists stand in
	return err
}

func (s *snapshot) readAuthPlugins(ctx context.Context) error {
	s.authPlugins = map[string]bool{}
	return s.queryPairs(ctx, "plugins", "information_schema.PLUGINS",
		`SELECT PLUGIN_NAME, PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_TYPE = 'AUTHENTICATION'`,
		func(name, status string) {
			if strings.EqualFold(status, "ACTIVE") {
				s.authPlugins[strings.ToLower(name)] = true
			}
		})
}

// readTimeZones asks whether named time zones work: CONVERT_TZ returns NULL
// for a name the server cannot resolve, which needs no privilege to see.
func (s *snapshot) readTimeZones(ctx context.Context) error {
	_, err := s.query(ctx, "timezones", "CONVERT_TZ", "",
		`SELECT CONVERT_TZ('2000-01-01 00:00:00', 'Europe/Paris', 'America/New_York') IS NOT NULL`, nil,
		func(rows *sql.Rows) error {
			var loaded sql.NullString
			if err := rows.Scan(&loaded); err != nil {
				return err
			}
			s.tzLoaded = loaded.String == "1"
			return nil
		})
	return err
}

// readUDFs lists the loadable functions; a server without mysql.func has
// none.
func (s *snapshot) readUDFs(ctx context.Context) error {
	_, err := s.query(ctx, "udfs", "mysql.func", "SELECT on mysql.func", `SELECT name FROM mysql.func`, nil, func(rows *sql.Rows) error {
		var n string
		if err := rows.Scan(&n); err != nil {
			return err
		}
		s.udfs = append(s.udfs, n)
		return nil
	})
	if nc, failed := s.failed["udfs"]; failed && nc.Missing != "" {
		delete(s.failed, "udfs")
	}
	return err
}

// normCollation spells utf8 as utf8mb3, as newer servers do, in lower
// case.
func normCollation(s string) string { return schema.NormCharset(strings.ToLower(s)) }
