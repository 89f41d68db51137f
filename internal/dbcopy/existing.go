package dbcopy

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/schema"
)

// Schema modes: where the target's tables come from.
const (
	// SchemaCreate creates the target's tables, views, routines and
	// triggers from the source's (the default).
	SchemaCreate = "create"
	// SchemaExisting loads rows into tables that exist on the target
	// already, made beforehand by the DBA as the new server should have
	// them (other indexes, engine, partitioning): nothing of theirs is
	// changed. Views and routines the target lacks are created from the
	// source's, and its triggers after the rows.
	SchemaExisting = "existing"
)

// checkExisting makes sure every table to copy exists on the target and
// is empty (with Replace, empties it), and that no target trigger would
// fire on the copied rows. It then creates the views and routines the
// target lacks.
func (c *copier) checkExisting(ctx context.Context, tables map[string]*schema.Table, objs map[string][4][]object) error {
	for _, p := range c.pairs {
		have, err := names(ctx, c.dst.DB, "SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", p.Target)
		if err != nil {
			return fmt.Errorf("target: list tables of %s: %w", p.Target, err)
		}
		exists := map[string]bool{}
		for _, h := range have {
			exists[h[0]] = h[1] != "VIEW"
		}
		for _, name := range slices.Sorted(maps.Keys(tables)) {
			t := tables[name]
			if t.DB != p.Source {
				continue
			}
			if !exists[t.Name] {
				return fmt.Errorf("%w: --schema existing: table %s.%s does not exist on the target: create it first, or copy with --schema create",
					ErrBadOptions, p.Target, t.Name)
			}
			if err := c.emptyExisting(ctx, p.Target, t.Name); err != nil {
				return err
			}
		}
		trig, err := names(ctx, c.dst.DB, "SELECT TRIGGER_NAME, EVENT_OBJECT_TABLE FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ?", p.Target)
		if err != nil {
			return fmt.Errorf("target: list triggers of %s: %w", p.Target, err)
		}
		if len(trig) > 0 {
			return fmt.Errorf("%w: --schema existing: target table %s.%s has trigger %s, which would fire on every copied row: drop it (the copy creates the source's triggers after the rows)",
				ErrBadOptions, p.Target, trig[0][1], trig[0][0])
		}
		conn, err := c.targetConn(ctx, p.Target)
		if err != nil {
			return err
		}
		o := objs[p.Source]
		missing, err := c.missing(ctx, p.Target, append(append([]object{}, o[1]...), o[0]...))
		if err == nil {
			err = createObjects(ctx, conn, missing)
		}
		conn.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// emptyExisting refuses a target table that holds rows, or with Replace
// empties it.
func (c *copier) emptyExisting(ctx context.Context, db, table string) error {
	var one int
	err := c.dst.DB.QueryRowContext(ctx, "SELECT 1 FROM "+escape.Qualified(db, table)+" LIMIT 1").Scan(&one)
	switch {
	case err == sql.ErrNoRows:
		return nil
	case err != nil:
		return fmt.Errorf("target: read %s.%s: %w", db, table, err)
	case !c.opts.Replace:
		return fmt.Errorf("%w: target table %s.%s holds rows; --replace empties it and copies afresh", ErrTargetNotEmpty, db, table)
	}
	c.logf("emptying target table %s.%s: --replace", db, table)
	conn, err := c.targetConn(ctx, db)
	if err != nil {
		return err
	}
	defer conn.Close()
	// foreign_key_checks is off on this connection: a parent table may be
	// truncated before its children.
	if _, err := conn.ExecContext(ctx, "TRUNCATE TABLE "+escape.Ident(table)); err != nil {
		return fmt.Errorf("target: empty %s.%s: %w", db, table, err)
	}
	return nil
}

// missing are the objects of objs that the target database db lacks: a
// resumed copy, or a schema the DBA made with some of them, keeps those
// it has.
func (c *copier) missing(ctx context.Context, db string, objs []object) ([]object, error) {
	if len(objs) == 0 {
		return nil, nil
	}
	have := map[string]bool{}
	queries := []string{
		"SELECT 'view', TABLE_NAME FROM information_schema.VIEWS WHERE TABLE_SCHEMA = ?",
		"SELECT LOWER(ROUTINE_TYPE), ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?",
		"SELECT 'trigger', TRIGGER_NAME FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = ?",
		"SELECT 'event', EVENT_NAME FROM information_schema.EVENTS WHERE EVENT_SCHEMA = ?",
	}
	for _, q := range queries {
		got, err := names(ctx, c.dst.DB, q, db)
		if err != nil {
			return nil, fmt.Errorf("target: list objects of %s: %w", db, err)
		}
		for _, g := range got {
			have[g[0]+" "+strings.ToLower(g[1])] = true
		}
	}
	var out []object
	for _, o := range objs {
		if !have[o.kind+" "+strings.ToLower(o.name)] {
			out = append(out, o)
		}
	}
	return out, nil
}
