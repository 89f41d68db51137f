package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/schema"
)

// checkInventory compares the objects of every database that exists on
// both sides. A database the target does not have yet is one notice: its
// objects are compared once it is there (before the copy, that is
// expected).
func (r *runner) checkInventory() {
	if !r.haveBoth("missing_database", "databases") {
		return
	}
	fold := r.folder()
	dstDBs := map[string]string{}
	for n := range r.dst.schemas {
		dstDBs[fold(n)] = n
	}
	// A user without SHOW DATABASES sees only some databases: the others
	// are not compared, and are said to be.
	r.have("missing_database", r.src, "databases_hidden")
	r.have("missing_database", r.dst, "databases_hidden")
	var both []string
	for _, db := range r.src.dbs {
		if _, ok := dstDBs[fold(db)]; ok {
			both = append(both, db)
			continue
		}
		r.add("missing_database", Notice, db, "the target has no database "+db+" yet: its objects are compared once it exists",
			"create it on the target (the copy usually does)")
	}
	if len(both) == 0 {
		return
	}
	inBoth := map[string]bool{}
	for _, db := range both {
		inBoth[fold(db)] = true
	}
	inScope := func(name string) bool {
		db, _, _ := strings.Cut(name, ".")
		return inBoth[fold(db)]
	}

	if r.haveBoth("missing_table", "tableinfo", "tables") {
		r.compareTables(fold, inScope)
	}
	gaps := r.flavourLacks()
	kinds := []struct {
		id, item, what, feature string
		get                     func(*snapshot) map[string]string
	}{
		{"missing_routine", "routines", "stored routine", "stored_routine", func(s *snapshot) map[string]string { return s.routines }},
		{"missing_trigger", "triggers", "trigger", "trigger", func(s *snapshot) map[string]string { return s.triggers }},
		{"missing_event", "events", "event", "event", func(s *snapshot) map[string]string { return s.events }},
	}
	for _, k := range kinds {
		if gaps[k.feature] {
			continue // the flavour finding says it already
		}
		if !r.haveBoth(k.id, k.item) {
			continue
		}
		srcObjs, dstObjs := foldKeys(k.get(r.src), fold), foldKeys(k.get(r.dst), fold)
		for _, n := range slices.Sorted(maps.Keys(k.get(r.src))) {
			if !inScope(n) {
				continue
			}
			if _, ok := dstObjs[fold(n)]; !ok {
				what := k.what
				if k.id == "missing_routine" {
					what = strings.ToLower(r.src.routines[n])
				}
				r.add(k.id, Error, n, fmt.Sprintf("%s %s exists on the source but not on the target", what, n),
					fmt.Sprintf("create it on the target: SHOW CREATE %s %s on the source prints the statement", strings.ToUpper(what), qualifiedName(n)))
			}
		}
		for _, n := range slices.Sorted(maps.Keys(k.get(r.dst))) {
			if _, ok := srcObjs[fold(n)]; !ok && inScope(n) {
				r.add("extra_object", Notice, n, fmt.Sprintf("%s %s exists only on the target", k.what, n), "keep it if the target needs it; drop it otherwise")
			}
		}
	}
	r.compareDefinitions(fold, inScope, gaps)
}

// compareTables compares base tables and views, and the columns and
// indexes of tables on both sides (with internal/verify's comparison).
func (r *runner) compareTables(fold func(string) string, inScope func(string) bool) {
	dstInfo := map[string]*tableInfo{}
	for n, t := range r.dst.info {
		dstInfo[fold(n)] = t
	}
	dstTables := foldKeys(r.dst.tables, fold)
	for _, n := range slices.Sorted(maps.Keys(r.src.info)) {
		if !inScope(n) {
			continue
		}
		t := r.src.info[n]
		d := dstInfo[fold(n)]
		isView := t.typ == "VIEW"
		switch {
		case d == nil && isView:
			r.add("missing_view", Error, n, "view "+n+" exists on the source but not on the target: queries that read it fail",
				"create it on the target: SHOW CREATE VIEW "+qualifiedName(n)+" on the source prints the statement")
			continue
		case d == nil:
			r.add("missing_table", Error, n, "table "+n+" exists on the source but not on the target",
				"create it on the target and copy its rows: SHOW CREATE TABLE "+qualifiedName(n)+" on the source prints the statement")
			continue
		case isView:
			continue
		}
		st, dt := r.src.tables[n], r.dst.tables[dstTables[fold(n)]]
		if st == nil || dt == nil {
			continue
		}
		r.compareColumns(n, st, dt)
	}
	srcInfo := map[string]bool{}
	for n := range r.src.info {
		srcInfo[fold(n)] = true
	}
	for _, n := range slices.Sorted(maps.Keys(r.dst.info)) {
		if !srcInfo[fold(n)] && inScope(n) {
			kind := "table"
			if r.dst.info[n].typ == "VIEW" {
				kind = "view"
			}
			r.add("extra_object", Notice, n, kind+" "+n+" exists only on the target", "keep it if the target needs it; drop it otherwise")
		}
	}
}

// compareColumns turns internal/schema's differences into findings.
// Engines are left to the engine check.
func (r *runner) compareColumns(name string, st, dt *schema.Table) {
	var differs []string
	for _, d := range schema.Compare(st, dt) {
		switch d.Kind {
		case "engine":
		case "column_missing_on_target":
			r.add("missing_column", Error, name+"."+d.Object, "column "+d.Object+" of "+name+" is missing on the target: statements that name it fail",
				"ALTER TABLE "+qualifiedName(name)+" ADD COLUMN ... as on the source (SHOW CREATE TABLE)")
		case "column_extra_on_target":
			r.add("extra_object", Notice, name+"."+d.Object, "column "+d.Object+" of "+name+" exists only on the target",
				"keep it if it has a default the application can live with; drop it otherwise")
		case "primary_key":
			r.add("key_differs", Error, name, fmt.Sprintf("the primary key differs: source %s, target %s: rows are matched and kept unique differently",
				orNone(d.Source), orNone(d.Target)), "ALTER TABLE "+qualifiedName(name)+" on the target to the source's primary key")
		case "index_missing_on_target":
			r.add("missing_index", Warning, name, "index "+d.Object+" is missing on the target: queries that use it read far more rows there, and a missing UNIQUE lets duplicates in",
				"CREATE the index on the target as on the source")
		case "index_extra_on_target":
			r.add("extra_object", Notice, name, "index "+d.Object+" exists only on the target: writes pay for it", "keep it if queries need it")
		case "foreign_key_missing_on_target":
			r.add("missing_foreign_key", Error, name, "foreign key "+d.Object+" "+d.Source+" is missing on the target: it accepts rows the source refuses, and its ON DELETE and ON UPDATE actions do not happen there",
				"on the target: ALTER TABLE "+qualifiedName(name)+" ADD CONSTRAINT "+escape.Ident(d.Object)+" FOREIGN KEY "+d.Source+" (SHOW CREATE TABLE on the source has it)")
		case "foreign_key":
			r.add("foreign_key_differs", Error, name, fmt.Sprintf("foreign key %s differs: source %s, target %s: the target accepts or refuses other rows, or acts otherwise on delete and update",
				d.Object, d.Source, d.Target),
				"on the target: ALTER TABLE "+qualifiedName(name)+" DROP FOREIGN KEY "+escape.Ident(d.Object)+", ADD CONSTRAINT "+escape.Ident(d.Object)+" FOREIGN KEY "+d.Source)
		case "foreign_key_name":
			r.add("foreign_key_differs", Warning, name, fmt.Sprintf("foreign key %s is named %s on the source and %s on the target: statements that name it (ALTER TABLE ... DROP FOREIGN KEY) fail",
				d.Object, d.Source, d.Target),
				"on the target: ALTER TABLE "+qualifiedName(name)+" DROP FOREIGN KEY "+escape.Ident(d.Target)+", ADD CONSTRAINT "+escape.Ident(d.Source)+" FOREIGN KEY "+d.Object)
		case "foreign_key_extra_on_target":
			r.add("extra_object", Warning, name, "foreign key "+d.Object+" "+d.Target+" exists only on the target: it refuses rows the source accepts",
				"keep it if the application keeps to it; drop it otherwise: ALTER TABLE "+qualifiedName(name)+" DROP FOREIGN KEY "+escape.Ident(d.Object))
		default:
			differs = append(differs, d.String())
		}
	}
	if len(differs) > 0 {
		r.add("column_differs", Warning, name, "columns are defined differently: "+list(differs, 6)+": values may be stored, compared or sorted differently",
			"ALTER TABLE "+qualifiedName(name)+" MODIFY the columns on the target as on the source (SHOW CREATE TABLE)")
	}
}

// folder returns how names compare: ignoring case when either side stores
// or compares names in lower case.
func (r *runner) folder() func(string) string {
	if r.src.vars["lower_case_table_names"] != "0" && r.src.vars["lower_case_table_names"] != "" ||
		r.dst.vars["lower_case_table_names"] != "0" && r.dst.vars["lower_case_table_names"] != "" {
		return strings.ToLower
	}
	return func(s string) string { return s }
}

// foldKeys maps folded names to the names as stored.
func foldKeys[V any](m map[string]V, fold func(string) string) map[string]string {
	out := make(map[string]string, len(m))
	for k := range m {
		out[fold(k)] = k
	}
	return out
}

// qualifiedName quotes db.name.
func qualifiedName(n string) string {
	db, name, _ := strings.Cut(n, ".")
	return escape.Qualified(db, name)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
