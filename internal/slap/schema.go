package slap

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/shakedown/shakedown/internal/target"
)

// What slap does with --create-schema, beside what mysqlslap does:
//
//   - A schema that holds something (tables, views, routines, events) is
//     never dropped without --allow-drop-schema: where --create or
//     --auto-generate-sql would drop and re-create it, slap refuses before
//     anything runs. mysqlslap drops it.
//   - An empty schema is used: slap re-creates it as it found it (its
//     character set and collation) for each iteration, and at the end
//     leaves it empty rather than dropped, unless --no-drop keeps what the
//     test made.
//   - A schema that does not exist, for a test without --create (a --query
//     or an --init-command), is created before the first level and dropped
//     after the last unless --no-drop. mysqlslap's clients fail to connect
//     to it. The main connection finds it missing as it connects
//     (connectMain), so that such a test sends no statement beyond
//     mysqlslap's when the schema is there.
//   - A schema that exists, for a test without --create, is used as it is
//     and never dropped, as in mysqlslap.
//   - A test that stops early (a failure, an interrupt) leaves the schema
//     as a finished test does (session.stopped); mysqlslap leaves it as it
//     stood, and the next test would then find it holding tables.

// schemaState is what --create-schema held when the test began.
type schemaState struct {
	exists bool
	create string // its SHOW CREATE DATABASE, to make it again as it was

	tables, views, routines, events int
	// unlisted names what could not be listed (events need the EVENT
	// privilege); the schema then counts as holding something.
	unlisted string
}

func (f schemaState) empty() bool {
	return f.tables+f.views+f.routines+f.events == 0 && f.unlisted == ""
}

// holds says what the schema holds: "1 table", "2 tables and 1 view".
func (f schemaState) holds() string {
	var parts []string
	for _, c := range []struct {
		n    int
		name string
	}{{f.tables, "table"}, {f.views, "view"}, {f.routines, "routine"}, {f.events, "event"}} {
		switch {
		case c.n == 1:
			parts = append(parts, "1 "+c.name)
		case c.n > 1:
			parts = append(parts, fmt.Sprintf("%d %ss", c.n, c.name))
		}
	}
	if f.unlisted != "" {
		parts = append(parts, "events that could not be listed ("+f.unlisted+")")
	}
	switch len(parts) {
	case 0:
		return "nothing"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// lookSchema finds out on the main connection whether the schema exists and
// what it holds, for a test with --create: one statement when it does not
// exist, else five. They are SHOW statements, which the server counts
// apart from the test's own (Com_select and the like).
func (s *session) lookSchema(ctx context.Context) (schemaState, error) {
	schema := s.b.o.CreateSchema
	var f schemaState
	var name string
	q := "SHOW CREATE DATABASE " + quoteSchema(schema)
	s.verbose(3, "%s;\n", q)
	err := s.main.QueryRowContext(ctx, q).Scan(&name, &f.create)
	switch {
	case target.Code(err) == target.ERBadDB:
		return f, nil
	case target.Code(err) == target.ERDBAccessDenied:
		return f, fmt.Errorf("look up schema %s: user %q may not use it: grant it or name another with --create-schema: %w", schema, s.b.tgt.User, err)
	case err != nil:
		return f, fmt.Errorf("look up schema %s: %w", schema, err)
	}
	f.exists = true
	if err := s.eachRow(ctx, "SHOW FULL TABLES FROM "+quoteSchema(schema), func(cols []sql.RawBytes) {
		if len(cols) > 1 && strings.EqualFold(string(cols[1]), "VIEW") {
			f.views++
		} else {
			f.tables++
		}
	}); err != nil {
		return f, fmt.Errorf("list the tables of schema %s: %w", schema, err)
	}
	// The name goes as hex: it may hold quotes or backslashes, which
	// sql_mode decides how to read.
	db := "CONVERT(X'" + hex.EncodeToString([]byte(schema)) + "' USING utf8mb4)"
	for _, kind := range []string{"PROCEDURE", "FUNCTION"} {
		if err := s.eachRow(ctx, "SHOW "+kind+" STATUS WHERE Db = "+db, func([]sql.RawBytes) { f.routines++ }); err != nil {
			return f, fmt.Errorf("list the routines of schema %s: %w", schema, err)
		}
	}
	if err := s.eachRow(ctx, "SHOW EVENTS FROM "+quoteSchema(schema), func([]sql.RawBytes) { f.events++ }); err != nil {
		f.unlisted = err.Error()
	}
	return f, nil
}

// eachRow runs q on the main connection and calls fn with each row.
func (s *session) eachRow(ctx context.Context, q string, fn func([]sql.RawBytes)) error {
	s.verbose(3, "%s;\n", q)
	rows, err := s.main.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return err
	}
	cols := make([]sql.RawBytes, len(names))
	ptrs := make([]any, len(cols))
	for i := range cols {
		ptrs[i] = &cols[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		fn(cols)
	}
	return rows.Err()
}

func quoteSchema(schema string) string { return "`" + schema + "`" }

// planSchema decides, before anything runs, what the test does with the
// schema it found (see the rules at the top of this file). It refuses a
// schema that holds something where the test would drop it, and creates a
// missing one that a test without --create runs in.
func (s *session) planSchema(ctx context.Context) error {
	o := s.b.o
	schema := o.CreateSchema
	if len(s.b.create) == 0 {
		if !s.missing {
			return nil // used as it is, never dropped
		}
		if err := s.mainExec(ctx, "CREATE SCHEMA "+quoteSchema(schema)); err != nil {
			return fmt.Errorf("create schema %s, which does not exist: %w", schema, err)
		}
		s.madeMissing = true
		// The main connection is on the schema, as when it exists.
		if err := s.mainExec(ctx, "USE "+quoteSchema(schema)); err != nil {
			return fmt.Errorf("use schema %s: %w", schema, err)
		}
		if !o.Silent {
			kept := "it is dropped at the end (--no-drop keeps it)"
			if o.NoDrop {
				kept = "--no-drop keeps it"
			}
			fmt.Fprintf(s.env.Err, "slap: schema %s did not exist: created it; %s\n", schema, kept)
		}
		return nil
	}
	f, err := s.lookSchema(ctx)
	if err != nil || !f.exists {
		return err
	}
	if !f.empty() && !o.AllowDropSchema {
		fills := "--create"
		if o.AutoGenerate {
			fills = "--auto-generate-sql"
		}
		does := "slap drops and re-creates the schema that " + fills + " fills, and drops it at the end"
		if o.NoDrop {
			does = "slap creates the schema that " + fills + " fills (--no-drop only keeps it afterwards), so it would drop this one first"
		}
		return usagef("--create-schema=%s: schema %s exists and holds %s: %s; nothing was run or dropped: give --allow-drop-schema to drop it, or name a schema that does not exist (or is empty) with --create-schema",
			schema, schema, f.holds(), does)
	}
	s.found = true
	if f.empty() {
		// Re-made as it was, and left so at the end.
		s.createSQL = f.create
		s.restore = !o.NoDrop
	} else if !o.Silent {
		fmt.Fprintf(s.env.Err, "slap: schema %s holds %s: dropping it (--allow-drop-schema)\n", schema, f.holds())
	}
	return nil
}
