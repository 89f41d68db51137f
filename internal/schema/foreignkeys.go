package schema

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/shakedown/shakedown/internal/target"
)

// ForeignKey is one foreign key of a table.
type ForeignKey struct {
	Name       string
	Columns    []string
	RefDB      string // "" when the referenced table is in the table's own database
	RefTable   string
	RefColumns []string
	// OnDelete and OnUpdate are RESTRICT, CASCADE, SET NULL or SET
	// DEFAULT. NO ACTION reads RESTRICT: InnoDB checks both at once, and
	// MySQL 8 reports NO ACTION where MariaDB reports RESTRICT for the
	// same definition.
	OnDelete, OnUpdate string
}

// Definition is the foreign key without its name, as CREATE TABLE writes
// it after FOREIGN KEY.
func (fk *ForeignKey) Definition() string {
	ref := fk.RefTable
	if fk.RefDB != "" {
		ref = fk.RefDB + "." + ref
	}
	return "(" + strings.Join(fk.Columns, ", ") + ") REFERENCES " + ref + " (" + strings.Join(fk.RefColumns, ", ") +
		") ON DELETE " + fk.OnDelete + " ON UPDATE " + fk.OnUpdate
}

// sameAs says two definitions are the same: names of columns compare as
// MySQL compares them, without case; so do those of tables, which differ
// only by case where one side stores them in lower case.
func (fk *ForeignKey) sameAs(o *ForeignKey) bool {
	return strings.EqualFold(fk.Definition(), o.Definition())
}

func normRule(r string) string {
	r = strings.ToUpper(strings.TrimSpace(r))
	if r == "NO ACTION" || r == "" {
		return "RESTRICT"
	}
	return r
}

// loadForeignKeys adds the foreign keys of the tables, in two bulk
// queries: their rules, then their columns. A server without these
// information_schema tables leaves ForeignKeysUnknown set.
func loadForeignKeys(ctx context.Context, s *Side, tables map[string]*Table, dbs []string, in string, args []any) error {
	rows, err := s.DB.QueryContext(ctx, `SELECT CONSTRAINT_SCHEMA, TABLE_NAME, COALESCE(CONSTRAINT_NAME, ''), UPDATE_RULE, DELETE_RULE
		FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA `+in, args...)
	if code := target.Code(err); code == target.ERUnknownTable || code == target.ERNoSuchTable {
		for _, t := range tables {
			t.ForeignKeysUnknown = true
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s foreign keys: %w", s.Role, err)
	}
	fks := map[string]*ForeignKey{} // db \x00 table \x00 name
	for rows.Next() {
		var db, tbl string
		fk := &ForeignKey{}
		err := rows.Scan(&db, &tbl, &fk.Name, &fk.OnUpdate, &fk.OnDelete)
		db = s.Server.Flavour.CatalogSchema(db, dbs)
		if err != nil {
			rows.Close()
			return fmt.Errorf("read %s foreign keys: %w", s.Role, err)
		}
		fk.OnUpdate, fk.OnDelete = normRule(fk.OnUpdate), normRule(fk.OnDelete)
		t := tables[db+"."+tbl]
		if t == nil {
			continue
		}
		t.ForeignKeys = append(t.ForeignKeys, fk)
		fks[db+"\x00"+tbl+"\x00"+fk.Name] = fk
	}
	if err := target.CloseRows(rows); err != nil {
		return fmt.Errorf("read %s foreign keys: %w", s.Role, err)
	}
	if len(fks) == 0 {
		return nil
	}
	// The COALESCEs are for servers that leave a column of the standard
	// NULL (go-mysql-server); MySQL and MariaDB fill them all.
	err = target.QueryEach(ctx, s.DB, func(row target.Scanner) error {
		var db, tbl, name, col, refDB, refTable, refCol string
		if err := row.Scan(&db, &tbl, &name, &col, &refDB, &refTable, &refCol); err != nil {
			return err
		}
		db, refDB = s.Server.Flavour.CatalogSchema(db, dbs), s.Server.Flavour.CatalogSchema(refDB, dbs)
		fk := fks[db+"\x00"+tbl+"\x00"+name]
		if fk == nil {
			return nil
		}
		fk.Columns = append(fk.Columns, col)
		fk.RefColumns = append(fk.RefColumns, refCol)
		fk.RefTable = refTable
		if refDB != db {
			fk.RefDB = refDB
		}
		return nil
	}, `SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, COALESCE(COLUMN_NAME, ''),
		COALESCE(REFERENCED_TABLE_SCHEMA, CONSTRAINT_SCHEMA), REFERENCED_TABLE_NAME, COALESCE(REFERENCED_COLUMN_NAME, '')
		FROM information_schema.KEY_COLUMN_USAGE
		WHERE REFERENCED_TABLE_NAME IS NOT NULL AND CONSTRAINT_SCHEMA `+in+`
		ORDER BY CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION`, args...)
	if err != nil {
		return fmt.Errorf("read %s foreign key columns: %w", s.Role, err)
	}
	for _, t := range tables {
		slices.SortFunc(t.ForeignKeys, func(a, b *ForeignKey) int { return strings.Compare(a.Name, b.Name) })
	}
	return nil
}

// compareForeignKeys pairs the foreign keys by name (without case, as the
// servers compare them), then those left by definition: the same
// definition under another name is a renamed key, not a missing one.
func compareForeignKeys(src, dst *Table) []Diff {
	if src.ForeignKeysUnknown || dst.ForeignKeysUnknown {
		return nil
	}
	dstByName := map[string]*ForeignKey{}
	for _, fk := range dst.ForeignKeys {
		dstByName[strings.ToLower(fk.Name)] = fk
	}
	var out []Diff
	matched := map[*ForeignKey]bool{}
	var unmatched []*ForeignKey
	for _, s := range src.ForeignKeys {
		d := dstByName[strings.ToLower(s.Name)]
		if d == nil {
			unmatched = append(unmatched, s)
			continue
		}
		matched[d] = true
		if !s.sameAs(d) {
			out = append(out, Diff{Kind: "foreign_key", Object: s.Name, Source: s.Definition(), Target: d.Definition()})
		}
	}
	var missing []Diff
	for _, s := range unmatched {
		var renamed *ForeignKey
		for _, d := range dst.ForeignKeys {
			if !matched[d] && s.sameAs(d) {
				renamed = d
				break
			}
		}
		if renamed != nil {
			matched[renamed] = true
			out = append(out, Diff{Kind: "foreign_key_name", Object: s.Definition(), Source: s.Name, Target: renamed.Name})
			continue
		}
		missing = append(missing, Diff{Kind: "foreign_key_missing_on_target", Object: s.Name, Source: s.Definition()})
	}
	out = append(out, missing...)
	extra := map[string]*ForeignKey{}
	for _, d := range dst.ForeignKeys {
		if !matched[d] {
			extra[d.Name] = d
		}
	}
	for _, n := range slices.Sorted(maps.Keys(extra)) {
		out = append(out, Diff{Kind: "foreign_key_extra_on_target", Object: n, Target: extra[n].Definition()})
	}
	return out
}
