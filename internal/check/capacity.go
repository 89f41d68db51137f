package check

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/schema"
)

// checkCharsets lists the character sets and collations in use on the
// source that the target does not have.
func (r *runner) checkCharsets() {
	if !r.have("missing_collation", r.src, "tables", "tableinfo") || !r.have("missing_collation", r.dst, "collations") {
		return
	}
	users := map[string][]string{} // collation -> objects using it
	for _, db := range r.src.dbs {
		if s, ok := r.src.schemas[db]; ok && s.collation != "" {
			users[s.collation] = append(users[s.collation], "database "+db)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(r.src.info)) {
		if c := r.src.info[n].collation; c != "" {
			users[c] = append(users[c], "table "+n)
		}
	}
	for _, n := range slices.Sorted(maps.Keys(r.src.tables)) {
		for _, c := range r.src.tables[n].Columns {
			if c.Collation != "" {
				users[c.Collation] = append(users[c.Collation], "column "+n+"."+c.Name)
			}
		}
	}
	charsetsDone := map[string]bool{}
	for _, coll := range slices.Sorted(maps.Keys(users)) {
		if _, ok := r.dst.collations[coll]; ok {
			continue
		}
		cs := r.src.collations[coll]
		if cs == "" {
			cs, _, _ = strings.Cut(coll, "_")
		}
		if _, ok := r.dst.charsets[cs]; !ok && len(r.dst.charsets) > 0 {
			if !charsetsDone[cs] {
				charsetsDone[cs] = true
				r.add("missing_charset", Error, cs,
					fmt.Sprintf("the target (%s) has no character set %s, used by %s", r.dst.server.name(), cs, list(users[coll], 4)),
					"convert the objects to a character set the target has (utf8mb4 holds every character): ALTER TABLE ... CONVERT TO CHARACTER SET utf8mb4")
			}
			continue
		}
		alt := r.collationFor(coll, cs)
		r.add("missing_collation", Error, coll,
			fmt.Sprintf("the target (%s) has no collation %s, used by %s: creating these objects fails", r.dst.server.name(), coll, list(users[coll], 4)),
			fmt.Sprintf("convert them to a collation the target has, e.g. %s (ALTER TABLE ... CONVERT TO CHARACTER SET %s COLLATE %s); check that it sorts and compares as your application expects", alt, cs, alt))
	}
}

// collationFor suggests the target's nearest collation.
func (r *runner) collationFor(coll, cs string) string {
	var candidates []string
	if strings.Contains(coll, "_0900_") {
		candidates = []string{cs + "_uca1400_ai_ci", cs + "_unicode_520_ci", cs + "_unicode_ci"}
		if strings.HasSuffix(coll, "_bin") {
			candidates = []string{cs + "_bin"}
		}
	}
	if strings.Contains(coll, "_uca1400_") {
		candidates = []string{cs + "_0900_ai_ci", cs + "_unicode_520_ci", cs + "_unicode_ci"}
	}
	for _, c := range candidates {
		if _, ok := r.dst.collations[c]; ok {
			return c
		}
	}
	if d := r.dst.charsets[cs]; d != "" {
		return d
	}
	return cs + "_bin"
}

// checkReservedWords flags names that the target's version reserves and
// the source's does not: statements that use them unquoted worked on the
// source and fail on the target.
func (r *runner) checkReservedWords() {
	const id = "reserved_word"
	if !r.have(id, r.src, "tables", "tableinfo") {
		return
	}
	dst, src := r.dst.reservedWords(), r.src.reservedWords()
	seen := map[string]bool{}
	flag := func(word, object string) {
		w := strings.ToUpper(word)
		if !dst[w] || src[w] || seen[object] {
			return
		}
		seen[object] = true
		r.add(id, Warning, object,
			fmt.Sprintf("%s is a reserved word on %s but not on %s: statements that name it without backquotes fail on the target",
				w, r.dst.server.name(), r.src.server.name()),
			"quote the name with backquotes in every statement (`"+word+"`), or rename it")
	}
	for _, db := range r.src.dbs {
		flag(db, db)
	}
	for _, n := range slices.Sorted(maps.Keys(r.src.info)) {
		_, name, _ := strings.Cut(n, ".")
		flag(name, n)
	}
	for _, n := range slices.Sorted(maps.Keys(r.src.tables)) {
		for _, c := range r.src.tables[n].Columns {
			flag(c.Name, n+"."+c.Name)
		}
	}
	for _, objs := range []map[string]string{r.src.routines, r.src.triggers, r.src.events} {
		for _, n := range slices.Sorted(maps.Keys(objs)) {
			_, name, _ := strings.Cut(n, ".")
			flag(name, n)
		}
	}
}

// checkEngines flags tables in engines other than InnoDB.
func (r *runner) checkEngines() {
	const id = "engine"
	if !r.have(id, r.src, "tableinfo") {
		return
	}
	haveEngines := r.have(id, r.dst, "engines")
	for _, n := range slices.Sorted(maps.Keys(r.src.info)) {
		t := r.src.info[n]
		e := strings.ToLower(t.engine)
		if t.typ != "BASE TABLE" && t.typ != "SYSTEM VERSIONED" || e == "" || e == "innodb" {
			continue
		}
		support := r.dst.engines[e]
		switch {
		case r.dst.server.flavour == "tidb":
			r.add(id, Warning, n, fmt.Sprintf("%s table: TiDB ignores ENGINE and stores every table the same, transactional way: what relied on %s (no transactions, table locks, its own files) changes", t.engine, t.engine),
				"nothing to create it; check what the application expects of a "+t.engine+" table")
		case r.dst.side.Server.Flavour.Cluster():
			r.add(id, Error, n, fmt.Sprintf("%s table: %s replicates InnoDB tables only, so writes to it stay on the node that took them and the nodes' copies drift apart", t.engine, r.dst.side.Server.Flavour.Title()),
				"convert it before the move: ALTER TABLE "+qualifiedName(n)+" ENGINE=InnoDB")
		case haveEngines && (support == "" || support == "NO" || support == "DISABLED"):
			r.add(id, Error, n, fmt.Sprintf("%s table: the target has no %s engine, so creating it fails (or, without NO_ENGINE_SUBSTITUTION, silently makes an InnoDB table)", t.engine, t.engine),
				"convert it before the move: ALTER TABLE "+qualifiedName(n)+" ENGINE=InnoDB")
		default:
			r.add(id, Warning, n, fmt.Sprintf("%s table: not transactional, so a consistent copy needs it locked and a crash can leave it damaged; changes to it are not rolled back", t.engine),
				"convert it: ALTER TABLE "+qualifiedName(n)+" ENGINE=InnoDB (on the source before the copy, or on the target)")
		}
	}
}

// intMax are the largest values of the integer types.
var intMax = map[string][2]float64{ // signed, unsigned
	"tinyint":   {127, 255},
	"smallint":  {32767, 65535},
	"mediumint": {8388607, 16777215},
	"int":       {2147483647, 4294967295},
	"integer":   {2147483647, 4294967295},
	"bigint":    {9223372036854775807, 18446744073709551615},
}

// nearMax is the share of the range from which a column is flagged.
const nearMax = 0.8

// checkAutoIncrement flags AUTO_INCREMENT columns whose next value is near
// the maximum of their type: inserts start failing once it is reached.
func (r *runner) checkAutoIncrement() {
	const id = "auto_increment_near_max"
	if !r.have(id, r.src, "tables", "tableinfo") {
		return
	}
	for _, n := range slices.Sorted(maps.Keys(r.src.tables)) {
		t, info := r.src.tables[n], r.src.info[n]
		if info == nil || info.autoInc == 0 {
			continue
		}
		for _, c := range t.Columns {
			if !strings.Contains(c.Extra, "auto_increment") {
				continue
			}
			lim, ok := intMax[c.DataType]
			if !ok {
				continue
			}
			max := lim[0]
			if c.Unsigned {
				max = lim[1]
			}
			used := float64(info.autoInc-1) / max
			if used < nearMax {
				continue
			}
			sev := Warning
			why := ""
			if r.dst.server.flavour == "tidb" {
				sev = Error
				why = "; TiDB hands out ids in batches per server, so the rest of the range goes faster there"
			}
			r.add(id, sev, n+"."+c.Name,
				fmt.Sprintf("the next AUTO_INCREMENT value is %d, %.0f%% of %s's maximum %s: inserts fail once it is reached%s",
					info.autoInc, math.Floor(used*100), c.Type, fmt.Sprintf("%.0f", max), why),
				fmt.Sprintf("widen the column before it runs out: ALTER TABLE %s MODIFY %s %s",
					qualifiedName(n), escape.Ident(c.Name), widerType(c)))
		}
	}
}

// widerType suggests the next integer type up (an unsigned type doubles a
// signed one's range).
func widerType(c *schema.Column) string {
	next := map[string]string{"tinyint": "SMALLINT", "smallint": "INT", "mediumint": "INT", "int": "BIGINT", "integer": "BIGINT", "bigint": "BIGINT"}[c.DataType]
	return next + " UNSIGNED NOT NULL AUTO_INCREMENT"
}

// checkPrimaryKeys flags base tables without a primary key, saying which
// unique key could serve instead.
func (r *runner) checkPrimaryKeys() {
	const id = "no_primary_key"
	if !r.have(id, r.src, "tables") {
		return
	}
	for _, n := range slices.Sorted(maps.Keys(r.src.tables)) {
		hasPK, usable := rowKey(r.src.tables[n])
		if hasPK {
			continue
		}
		if f := r.dst.side.Server.Flavour; f.Cluster() {
			r.add(id, Error, n, fmt.Sprintf("no primary key: %s certifies and applies every row change by its primary key, so a table without one replicates each change by a scan on every node, and DELETEs on it can leave the nodes different", f.Title()),
				fmt.Sprintf("add one: ALTER TABLE %s ADD COLUMN id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY (INVISIBLE on MariaDB 10.3+ keeps SELECT * unchanged)", qualifiedName(n)))
			continue
		}
		if usable != nil {
			r.add(id, Warning, n,
				fmt.Sprintf("no primary key; the unique key %s on (%s), all NOT NULL, can serve: row-based replication and most migration tools use it, but some require a primary key",
					usable.Name, strings.Join(usable.Parts, ", ")),
				fmt.Sprintf("make it the primary key: ALTER TABLE %s DROP INDEX %s, ADD PRIMARY KEY (%s)",
					qualifiedName(n), escape.Ident(usable.Name), quoteList(usable.Columns)))
			continue
		}
		r.add(id, Error, n, noRowKeyProblem, addPrimaryKey(n))
	}
}

// noRowKeyProblem is what is wrong with a table that rowKey finds no key
// in.
const noRowKeyProblem = "no primary key and no unique key on NOT NULL columns: row-based replication applies each change by scanning the whole table, and migration tools cannot copy it in chunks or match its rows"

// rowKey is what identifies a row of t: whether it has a primary key,
// and else the first unique key whose columns are all NOT NULL (nil when
// none is). Neither means a row change in the binary log cannot be
// matched to one row.
func rowKey(t *schema.Table) (primary bool, usable *schema.Index) {
	for _, ix := range t.Indexes {
		if ix.Primary {
			return true, nil
		}
		if ix.Unique && !ix.Nullable && usable == nil {
			usable = ix
		}
	}
	return false, usable
}

// addPrimaryKey is the fix for table n (db.table) without a key.
func addPrimaryKey(n string) string {
	return fmt.Sprintf("add one: ALTER TABLE %s ADD COLUMN id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY (INVISIBLE on MySQL 8.0.23+ and MariaDB 10.3+ keeps SELECT * unchanged)", qualifiedName(n))
}

func quoteList(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = escape.Ident(c)
	}
	return strings.Join(q, ", ")
}

// Statistics are flagged on tables with at least this many rows.
const statsMinRows = 1000

// checkStatistics flags target tables whose statistics are missing or far
// from their row count: after a bulk copy the optimizer may still believe
// a table is empty and choose bad plans until ANALYZE TABLE runs.
func (r *runner) checkStatistics() {
	const id = "stale_statistics"
	if !r.have(id, r.dst, "tableinfo", "indexstats") {
		return
	}
	if f := r.dst.side.Server.Flavour; !f.IndexStatistics() {
		r.rep.NotChecked = append(r.rep.NotChecked, NotChecked{Check: id, Side: r.dst.role,
			Missing: "index cardinality in information_schema.STATISTICS", Detail: flavour.NotAvailable("index statistics in information_schema", f, r.dst.server.raw) + " (SHOW STATS_META and SHOW STATS_HEALTHY show them)"})
		return
	}
	fold := r.folder()
	srcRows := map[string]int64{}
	for n, t := range r.src.info {
		srcRows[fold(n)] = t.rows
	}
	for _, n := range slices.Sorted(maps.Keys(r.dst.info)) {
		t := r.dst.info[n]
		src, onSource := srcRows[fold(n)]
		if !onSource || t.typ != "BASE TABLE" || !strings.EqualFold(t.engine, "InnoDB") {
			continue
		}
		card, hasUnique := r.dst.cardinality[n]
		var why string
		switch {
		case hasUnique && t.rows >= statsMinRows && float64(card) < 0.5*float64(t.rows):
			why = fmt.Sprintf("its unique index's statistics count %d distinct values for about %d rows", card, t.rows)
		case t.rows > 0 && src >= statsMinRows && (float64(t.rows) < 0.5*float64(src) || float64(t.rows) > 2*float64(src)):
			// An estimate of 0 is an empty table: the copy has not run
			// yet, which is no news before the move.
			why = fmt.Sprintf("the target estimates %d rows, the source %d", t.rows, src)
		default:
			continue
		}
		r.add(id, Warning, n,
			why+": the optimizer plans with statistics that do not match the data, and queries may be far slower until they are refreshed",
			fmt.Sprintf("ANALYZE TABLE %s on the target, or every table at once: shakedown analyze TARGET --databases %s (if the counts still differ, the copy is incomplete: shakedown verify)",
				qualifiedName(n), strings.SplitN(n, ".", 2)[0]))
	}
}
