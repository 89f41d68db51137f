package check

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/shakedown/shakedown/internal/schema"
)

// routineDef is a stored routine's or an event's definition, read to
// compare it with the other side's: what it does, and the session it was
// created in (sql_mode and character sets, which decide how its body reads
// literals and compares text).
type routineDef struct {
	kind    string // procedure, function or event
	aspects []aspect
}

// aspect is one part of a definition. A difference in one that acts
// changes what the object does; in one that does not, how its body reads
// values (sql_mode, character sets and collations).
type aspect struct {
	name, value string
	acts        bool
}

func (d *routineDef) add(name, value string, acts bool) {
	d.aspects = append(d.aspects, aspect{name, value, acts})
}

var spaceRE = regexp.MustCompile(`\s+`)

// normBody compares bodies as the same text up to white space.
func normBody(s string) string { return strings.TrimSpace(spaceRE.ReplaceAllString(s, " ")) }

// normDTD drops integer display widths, which MySQL 8 no longer shows, as
// a column's type is compared (schema.NormType).
func normDTD(s string) string { return schema.NormType(strings.ToLower(strings.TrimSpace(s))) }

// normMode is an sql_mode as a sorted list. NO_AUTO_CREATE_USER is left
// out: it concerns GRANT only, and MySQL 8 has no such mode, so every
// routine moved there would differ by it.
func normMode(s string) string {
	var modes []string
	for _, m := range strings.Split(strings.ToUpper(s), ",") {
		if m = strings.TrimSpace(m); m != "" && m != "NO_AUTO_CREATE_USER" {
			modes = append(modes, m)
		}
	}
	slices.Sort(modes)
	return strings.Join(modes, ",")
}

type param struct {
	name, mode, typ, collation string
}

// readRoutineDefs reads the definitions of the stored routines, with
// their parameters, in two bulk queries.
func (s *snapshot) readRoutineDefs(ctx context.Context) error {
	type raw struct {
		typ, returns, returnColl, deterministic, access, security, definer, mode string
		client, conn, dbColl                                                     string
		body                                                                     sql.NullString
	}
	raws := map[string]*raw{}
	err := s.queryScope(ctx, "routinedefs", "information_schema.ROUTINES",
		`SELECT ROUTINE_SCHEMA, ROUTINE_NAME, ROUTINE_TYPE, ROUTINE_DEFINITION, COALESCE(DTD_IDENTIFIER, ''),
		COALESCE(IS_DETERMINISTIC, ''), COALESCE(SQL_DATA_ACCESS, ''), COALESCE(SECURITY_TYPE, ''), COALESCE(DEFINER, ''),
		COALESCE(SQL_MODE, ''), COALESCE(CHARACTER_SET_CLIENT, ''), COALESCE(COLLATION_CONNECTION, ''), COALESCE(DATABASE_COLLATION, '')
		FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA IN `,
		func(rows *sql.Rows) error {
			var db, name string
			r := &raw{}
			if err := rows.Scan(&db, &name, &r.typ, &r.body, &r.returns, &r.deterministic, &r.access, &r.security, &r.definer,
				&r.mode, &r.client, &r.conn, &r.dbColl); err != nil {
				return err
			}
			raws[db+"."+name] = r
			return nil
		})
	if err != nil {
		return err
	}
	params := map[string][]param{}
	err = s.queryScope(ctx, "parameters", "information_schema.PARAMETERS",
		`SELECT SPECIFIC_SCHEMA, SPECIFIC_NAME, ORDINAL_POSITION, COALESCE(PARAMETER_MODE, ''), COALESCE(PARAMETER_NAME, ''),
		COALESCE(DTD_IDENTIFIER, ''), COALESCE(COLLATION_NAME, '')
		FROM information_schema.PARAMETERS WHERE SPECIFIC_SCHEMA IN `,
		func(rows *sql.Rows) error {
			var db, name string
			var pos int
			var p param
			if err := rows.Scan(&db, &name, &pos, &p.mode, &p.name, &p.typ, &p.collation); err != nil {
				return err
			}
			if r := raws[db+"."+name]; pos == 0 && r != nil {
				r.returnColl = normCollation(p.collation) // a function's return value
				return nil
			}
			params[db+"."+name] = append(params[db+"."+name], p)
			return nil
		})
	if err != nil {
		return err
	}
	s.routineDefs = map[string]*routineDef{}
	for n, r := range raws {
		d := &routineDef{kind: strings.ToLower(r.typ)}
		if r.body.Valid {
			d.add("body", normBody(r.body.String), true)
		}
		var sig, colls []string
		for _, p := range params[n] {
			sig = append(sig, strings.TrimSpace(strings.ToUpper(p.mode)+" "+p.name+" "+normDTD(p.typ)))
			if p.collation != "" {
				colls = append(colls, p.name+" "+normCollation(p.collation))
			}
		}
		d.add("parameters", "("+strings.Join(sig, ", ")+")", true)
		if d.kind == "function" {
			d.add("returns", normDTD(r.returns), true)
			colls = append(colls, "return value "+r.returnColl)
		}
		d.add("DETERMINISTIC", r.deterministic, true)
		d.add("SQL data access", r.access, true)
		d.add("SQL SECURITY", r.security, true)
		d.add("DEFINER", r.definer, true)
		d.add("parameter collations", strings.Join(colls, ", "), false)
		d.add("sql_mode", normMode(r.mode), false)
		d.add("character_set_client", normCollation(r.client), false)
		d.add("collation_connection", normCollation(r.conn), false)
		d.add("database collation", normCollation(r.dbColl), false)
		s.routineDefs[n] = d
	}
	return nil
}

// readEventDefs reads the definitions of the events.
func (s *snapshot) readEventDefs(ctx context.Context) error {
	s.eventDefs = map[string]*routineDef{}
	return s.queryScope(ctx, "eventdefs", "information_schema.EVENTS",
		`SELECT EVENT_SCHEMA, EVENT_NAME, EVENT_DEFINITION, COALESCE(EVENT_TYPE, ''), COALESCE(EXECUTE_AT, ''),
		COALESCE(INTERVAL_VALUE, ''), COALESCE(INTERVAL_FIELD, ''), COALESCE(STARTS, ''), COALESCE(ENDS, ''), COALESCE(STATUS, ''),
		COALESCE(ON_COMPLETION, ''), COALESCE(DEFINER, ''), COALESCE(TIME_ZONE, ''), COALESCE(SQL_MODE, ''),
		COALESCE(CHARACTER_SET_CLIENT, ''), COALESCE(COLLATION_CONNECTION, ''), COALESCE(DATABASE_COLLATION, '')
		FROM information_schema.EVENTS WHERE EVENT_SCHEMA IN `,
		func(rows *sql.Rows) error {
			var db, name, typ, at, every, field, starts, ends, status, completion, definer, tz, mode, client, conn, dbColl string
			var body sql.NullString
			if err := rows.Scan(&db, &name, &body, &typ, &at, &every, &field, &starts, &ends, &status, &completion, &definer, &tz,
				&mode, &client, &conn, &dbColl); err != nil {
				return err
			}
			d := &routineDef{kind: "event"}
			if body.Valid {
				d.add("body", normBody(body.String), true)
			}
			schedule := "AT " + at
			if strings.EqualFold(typ, "RECURRING") {
				schedule = strings.TrimSpace("EVERY " + every + " " + field + " STARTS " + starts)
				if ends != "" {
					schedule += " ENDS " + ends
				}
			}
			d.add("schedule", schedule, true)
			d.add("status", status, true)
			d.add("ON COMPLETION", completion, true)
			d.add("DEFINER", definer, true)
			d.add("time_zone", tz, true)
			d.add("sql_mode", normMode(mode), false)
			d.add("character_set_client", normCollation(client), false)
			d.add("collation_connection", normCollation(conn), false)
			d.add("database collation", normCollation(dbColl), false)
			s.eventDefs[db+"."+name] = d
			return nil
		})
}

// compareDefinitions compares the routines and events that both sides
// have, aspect by aspect. A difference in what one does is an error; one
// only in how its body reads values (sql_mode, character sets,
// collations), as a copy that creates it in its own session leaves, is a
// warning.
func (r *runner) compareDefinitions(fold func(string) string, inScope func(string) bool, gaps map[string]bool) {
	kinds := []struct {
		id, feature string
		items       []string
		get         func(*snapshot) map[string]*routineDef
		show        func(kind string) string
	}{
		{"routine_differs", "stored_routine", []string{"routines", "routinedefs", "parameters"},
			func(s *snapshot) map[string]*routineDef { return s.routineDefs }, strings.ToUpper},
		{"event_differs", "event", []string{"events", "eventdefs"},
			func(s *snapshot) map[string]*routineDef { return s.eventDefs }, func(string) string { return "EVENT" }},
	}
	for _, k := range kinds {
		if gaps[k.feature] || !r.haveBoth(k.id, k.items...) {
			continue
		}
		src, dst := k.get(r.src), k.get(r.dst)
		dstNames := foldKeys(dst, fold)
		for _, n := range slices.Sorted(maps.Keys(src)) {
			d, ok := dst[dstNames[fold(n)]]
			if !ok || !inScope(n) {
				continue // missing_routine or missing_event says it
			}
			s := src[n]
			var acts, reads []string
			for _, sa := range s.aspects {
				for _, da := range d.aspects {
					if da.name != sa.name || da.value == sa.value {
						continue
					}
					what := fmt.Sprintf("%s %s on the source, %s on the target", sa.name, orNone(sa.value), orNone(da.value))
					if sa.name == "body" {
						what = "the body differs"
					}
					if sa.acts {
						acts = append(acts, what)
					} else {
						reads = append(reads, what)
					}
				}
			}
			if len(acts)+len(reads) == 0 {
				continue
			}
			fix := fmt.Sprintf("recreate it on the target as on the source: SHOW CREATE %s %s on the source prints the statement with the sql_mode and character sets to run it in (mariadb-dump --routines --events keeps them)",
				k.show(s.kind), qualifiedName(n))
			if len(acts) > 0 {
				r.add(k.id, Error, n, fmt.Sprintf("%s %s is defined differently: %s: it does something else on the target",
					s.kind, n, strings.Join(append(acts, reads...), "; ")), fix)
				continue
			}
			r.add(k.id, Warning, n, fmt.Sprintf("%s %s differs in its character sets or sql_mode: %s: its body reads literals, compares text or treats invalid values differently on the target",
				s.kind, n, strings.Join(reads, "; ")), fix)
		}
	}
}
