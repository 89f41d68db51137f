package dbcopy

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/target"
)

// object is a view, routine or trigger: its name and the statement that
// creates it on the target, with the sql_mode it was created under.
type object struct {
	kind, name string
	sqlMode    string
	create     string
}

// tableDDL is a table's CREATE TABLE and what is added after the rows.
type tableDDL struct {
	create  string   // without the deferred parts
	indexes []string // ALTER TABLE statements adding secondary indexes
	fks     []string // ALTER TABLE statements adding foreign keys
}

var definer = regexp.MustCompile("DEFINER=(`[^`]*`|[^@ ]*)@(`[^`]*`|[^ ]*) ")

// retarget makes a statement read from the source work on the target: no
// DEFINER (the creating account becomes it, as the source's may not exist
// there) and the source database's name, where the statement spells it,
// replaced by the target's.
func retarget(stmt, srcDB, dstDB string) string {
	stmt = definer.ReplaceAllString(stmt, "")
	if srcDB != dstDB {
		stmt = strings.ReplaceAll(stmt, escape.Ident(srcDB)+".", escape.Ident(dstDB)+".")
	}
	return stmt
}

// splitCreateTable takes SHOW CREATE TABLE apart: secondary indexes (when
// deferIndexes) and foreign keys go into ALTER TABLE statements run after
// the rows. It relies on SHOW CREATE TABLE's layout: one column, key or
// constraint per line. The columns named in json (lower case) are MariaDB
// JSON, a LONGTEXT with CHECK (json_valid(col)), made JSON again for a
// target whose JSON is a type of its own (see jsonColumn).
func splitCreateTable(create, table string, deferIndexes bool, json map[string]bool) tableDDL {
	lines := strings.Split(create, "\n")
	if len(lines) < 3 {
		return tableDDL{create: create}
	}
	var keep, idx, fulltext, fks []string
	last := len(lines) - 1
	for last > 0 && !strings.HasPrefix(lines[last], ")") {
		last--
	}
	for _, l := range lines[1:last] {
		item := strings.TrimSuffix(strings.TrimSpace(l), ",")
		if len(json) > 0 {
			var drop bool
			if item, drop = jsonColumn(item, json); drop {
				continue
			}
		}
		switch {
		case strings.HasPrefix(item, "CONSTRAINT ") && strings.Contains(item, " FOREIGN KEY "):
			fks = append(fks, "ADD "+item)
		case deferIndexes && strings.HasPrefix(item, "KEY "):
			idx = append(idx, "ADD "+item)
		case deferIndexes && (strings.HasPrefix(item, "FULLTEXT KEY ") || strings.HasPrefix(item, "SPATIAL KEY ")):
			fulltext = append(fulltext, "ADD "+item)
		default:
			keep = append(keep, "  "+item)
		}
	}
	d := tableDDL{create: lines[0] + "\n" + strings.Join(keep, ",\n") + "\n" + strings.Join(lines[last:], "\n")}
	alter := "ALTER TABLE " + escape.Ident(table) + " "
	if len(idx) > 0 {
		d.indexes = append(d.indexes, alter+strings.Join(idx, ", "))
	}
	// InnoDB builds one FULLTEXT index per statement.
	for _, f := range fulltext {
		d.indexes = append(d.indexes, alter+f)
	}
	if len(fks) > 0 {
		d.fks = append(d.fks, alter+strings.Join(fks, ", "))
	}
	return d
}

var (
	jsonCheckRE  = regexp.MustCompile("(?i)^CONSTRAINT `[^`]*` CHECK \\(json_valid\\(`([^`]+)`\\)\\)$")
	jsonColumnRE = regexp.MustCompile("(?i)^`([^`]+)` longtext(.*)$")
	jsonDropRE   = regexp.MustCompile("(?i) CHARACTER SET \\w+| COLLATE \\w+| CHECK \\(json_valid\\(`[^`]+`\\)\\)")
)

// jsonColumn rewrites one item of a CREATE TABLE for a JSON column of
// json: the column as JSON, without the character set, collation and
// json_valid check that MariaDB gives its text (the type checks it
// itself); drop says the item is such a check, made as a constraint of
// the table, and goes.
func jsonColumn(item string, json map[string]bool) (out string, drop bool) {
	if m := jsonCheckRE.FindStringSubmatch(item); m != nil && json[strings.ToLower(m[1])] {
		return "", true
	}
	if m := jsonColumnRE.FindStringSubmatch(item); m != nil && json[strings.ToLower(m[1])] {
		return escape.Ident(m[1]) + " json" + jsonDropRE.ReplaceAllString(m[2], ""), false
	}
	return item, false
}

// showCreate runs a SHOW CREATE statement and returns its row by
// lower-case column name (SHOW CREATE's columns differ by object kind).
func showCreate(ctx context.Context, q target.Querier, stmt string) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, stmt)
	if err != nil {
		return nil, fmt.Errorf("read definition: %s: %w", stmt, err)
	}
	m, err := target.FirstRow(rows)
	if err != nil {
		return nil, fmt.Errorf("read definition: %s: %w", stmt, err)
	}
	if m == nil {
		return nil, fmt.Errorf("read definition: %s: no row (missing privilege?)", stmt)
	}
	return m, nil
}

// names runs a query that returns one or two text columns per row.
func names(ctx context.Context, q target.Querier, query string, args ...any) ([][2]string, error) {
	return target.QueryAll(ctx, q, func(row target.Scanner) ([2]string, error) {
		var n [2]string
		err := row.Scan(&n[0], &n[1])
		return n, err
	}, query, args...)
}

// readObjects reads db's views, routines and triggers from the source,
// retargeted to dstDB. Triggers come in their firing order.
func readObjects(ctx context.Context, q target.Querier, db, dstDB string) (views, routines, triggers []object, err error) {
	views, err = readKind(ctx, q, viewKind, db, dstDB)
	if err != nil {
		return nil, nil, nil, err
	}
	rs, err := names(ctx, q, "SELECT ROUTINE_TYPE, ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ? AND ROUTINE_TYPE IN ('PROCEDURE','FUNCTION') ORDER BY ROUTINE_TYPE, ROUTINE_NAME", db)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("list routines of %s: %w", db, err)
	}
	for _, r := range rs {
		m, err := showCreate(ctx, q, "SHOW CREATE "+r[0]+" "+escape.Qualified(db, r[1]))
		if err != nil {
			return nil, nil, nil, err
		}
		body := m["create "+strings.ToLower(r[0])]
		if body == "" {
			return nil, nil, nil, fmt.Errorf("read definition of %s %s.%s: empty (the account needs SELECT on mysql.proc or SHOW_ROUTINE)", strings.ToLower(r[0]), db, r[1])
		}
		routines = append(routines, object{kind: strings.ToLower(r[0]), name: r[1], sqlMode: m["sql_mode"], create: retarget(body, db, dstDB)})
	}
	triggers, err = readKind(ctx, q, triggerKind, db, dstDB)
	if err != nil {
		return nil, nil, nil, err
	}
	return views, routines, triggers, nil
}

// objectKind is how one kind of object of a database is listed and its
// definitions read: list selects the names (and ”) of the schema given as
// its one argument, in the order they are created in; create is the
// column of SHOW CREATE <kind> that holds the statement.
type objectKind struct {
	kind, list, create string
}

var (
	viewKind    = objectKind{"view", "SELECT TABLE_NAME, '' FROM information_schema.VIEWS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME", "create view"}
	triggerKind = objectKind{"trigger", "SELECT TRIGGER_NAME, '' FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ? ORDER BY EVENT_OBJECT_TABLE, ACTION_ORDER", "sql original statement"}
	eventKind   = objectKind{"event", "SELECT EVENT_NAME, '' FROM information_schema.EVENTS WHERE EVENT_SCHEMA = ? ORDER BY EVENT_NAME", "create event"}
)

// readKind reads db's objects of kind k from the source, retargeted to
// dstDB, each under the sql_mode it was created with (a view has none).
func readKind(ctx context.Context, q target.Querier, k objectKind, db, dstDB string) ([]object, error) {
	ns, err := names(ctx, q, k.list, db)
	if err != nil {
		return nil, fmt.Errorf("list %ss of %s: %w", k.kind, db, err)
	}
	var objs []object
	for _, n := range ns {
		m, err := showCreate(ctx, q, "SHOW CREATE "+strings.ToUpper(k.kind)+" "+escape.Qualified(db, n[0]))
		if err != nil {
			return nil, err
		}
		objs = append(objs, object{kind: k.kind, name: n[0], sqlMode: m["sql_mode"], create: retarget(m[k.create], db, dstDB)})
	}
	return objs, nil
}

// execer is what *sql.Conn offers for writing.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// createObjects creates objects on conn (whose default database is the
// target's), each under its own sql_mode. Views may use views: those that
// fail are tried again while some succeed, which creates them in
// dependency order without parsing them.
func createObjects(ctx context.Context, conn execer, objs []object) error {
	pending := objs
	for len(pending) > 0 {
		var failed []object
		var lastErr error
		for _, o := range pending {
			if _, err := conn.ExecContext(ctx, "SET SESSION sql_mode = ?", o.sqlMode); err != nil {
				return fmt.Errorf("set sql_mode for %s %s: %w", o.kind, o.name, err)
			}
			if _, err := conn.ExecContext(ctx, o.create); err != nil {
				if o.kind != "view" || ctx.Err() != nil {
					return fmt.Errorf("create %s %s: %w", o.kind, o.name, err)
				}
				failed, lastErr = append(failed, o), fmt.Errorf("create view %s: %w", o.name, err)
			}
		}
		if len(failed) == len(pending) {
			return lastErr
		}
		pending = failed
	}
	_, err := conn.ExecContext(ctx, "SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO'")
	return err
}

// readEvents reads db's events from the source, retargeted to dstDB.
func readEvents(ctx context.Context, q target.Querier, db, dstDB string) ([]object, error) {
	return readKind(ctx, q, eventKind, db, dstDB)
}

// disableEvents turns off the events among objs, just created on the
// target: an event copied enabled would change the target's rows on its
// schedule (and its verify would differ) before the move.
func disableEvents(ctx context.Context, conn execer, objs []object) error {
	for _, o := range objs {
		if o.kind != "event" {
			continue
		}
		if _, err := conn.ExecContext(ctx, "ALTER EVENT "+escape.Ident(o.name)+" DISABLE"); err != nil {
			return fmt.Errorf("disable event %s: %w", o.name, err)
		}
	}
	return nil
}
