// Package schema reads the definitions of base tables from
// information_schema, normalized so that the same definition reads the same
// on MySQL and MariaDB, and compares two definitions of a table. verify and
// check both compare schemas with it.
package schema

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/shakedown/shakedown/internal/target"
)

// Side is one of the two servers being compared: a pool with the comparing
// tool's session settings and what the server said it is.
type Side struct {
	Role   string // "source" or "target"
	Target *target.Target
	DB     *sql.DB
	Server target.Server
}

// Table is one base table as information_schema describes it.
type Table struct {
	DB, Name string
	Engine   string
	Rows     int64 // the server's estimate (TABLE_ROWS)
	Columns  []*Column
	Indexes  []*Index
	// ForeignKeys are by name; ForeignKeysUnknown says the server has no
	// information_schema table of them, and they are not compared.
	ForeignKeys        []*ForeignKey
	ForeignKeysUnknown bool
	byName             map[string]*Column
}

// FullName is db.table.
func (t *Table) FullName() string { return t.DB + "." + t.Name }

// Column looks a column up by name (case-insensitively, as MySQL does).
func (t *Table) Column(name string) *Column { return t.byName[strings.ToLower(name)] }

// Column is one column, with its type and attributes normalized so that
// the same definition reads the same on MySQL and MariaDB.
type Column struct {
	Name       string
	DataType   string // lowercase DATA_TYPE; "json" also for MariaDB's JSON alias
	Type       string // normalized COLUMN_TYPE: no integer display widths
	Nullable   bool
	Default    string // normalized default: "" none, NULL, 'literal', or an expression
	Charset    string // normalized: utf8 reads utf8mb3
	Collation  string
	Scale      int // NUMERIC_SCALE
	Precision  int // NUMERIC_PRECISION
	TimePrec   int // DATETIME_PRECISION
	Extra      string
	Generated  bool
	Unsigned   bool
	Zerofill   bool
	IsJSONText bool // MariaDB JSON: a longtext with CHECK (json_valid(col))
}

// Index is one index; Primary implies Unique.
type Index struct {
	Name     string
	Primary  bool
	Unique   bool
	Type     string // BTREE, HASH, FULLTEXT, SPATIAL
	Columns  []string
	Parts    []string // column names with prefix lengths: c(10)
	Nullable bool     // some column of it allows NULL
}

// Signature identifies an index by what it does, not by its name.
func (ix *Index) Signature() string {
	kind := "INDEX"
	switch {
	case ix.Primary:
		kind = "PRIMARY KEY"
	case ix.Unique:
		kind = "UNIQUE"
	case ix.Type == "FULLTEXT" || ix.Type == "SPATIAL":
		kind = ix.Type
	}
	return kind + " (" + strings.Join(ix.Parts, ", ") + ")"
}

// loadEach is loadSchema one database at a time, for a server that reads
// information_schema for one database a query.
func loadEach(ctx context.Context, s *Side, dbs []string) (map[string]*Table, error) {
	all := map[string]*Table{}
	for _, d := range dbs {
		tables, err := loadSchema(ctx, s, []string{d})
		if err != nil {
			return nil, err
		}
		maps.Copy(all, tables)
	}
	return all, nil
}

// loadSchema reads the base tables of the given databases.
func loadSchema(ctx context.Context, s *Side, dbs []string) (map[string]*Table, error) {
	if len(dbs) == 0 {
		return map[string]*Table{}, nil
	}
	if len(dbs) > 1 && !s.Server.Flavour.SchemaListRouted() {
		return loadEach(ctx, s, dbs)
	}
	// One database is an equality: vtgate routes no other form.
	in := "IN (" + strings.TrimSuffix(strings.Repeat("?,", len(dbs)), ",") + ")"
	if len(dbs) == 1 {
		in = "= ?"
	}
	args := make([]any, len(dbs))
	for i, d := range dbs {
		args[i] = d
	}
	tables := map[string]*Table{}
	err := target.QueryEach(ctx, s.DB, func(row target.Scanner) error {
		t := &Table{byName: map[string]*Column{}}
		if err := row.Scan(&t.DB, &t.Name, &t.Engine, &t.Rows); err != nil {
			return err
		}
		t.DB = s.Server.Flavour.CatalogSchema(t.DB, dbs)
		tables[t.FullName()] = t
		return nil
	}, `SELECT TABLE_SCHEMA, TABLE_NAME, COALESCE(ENGINE, ''), COALESCE(TABLE_ROWS, 0)
		FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA `+in, args...)
	if err != nil {
		return nil, fmt.Errorf("list %s tables: %w", s.Role, err)
	}

	jsonCols := readJSONChecks(ctx, s, dbs, in, args)

	err = target.QueryEach(ctx, s.DB, func(row target.Scanner) error {
		var db, tbl, name, nullable, dataType, colType, extra string
		var def, cs, coll sql.NullString
		var prec, scale, tprec sql.NullInt64
		if err := row.Scan(&db, &tbl, &name, &def, &nullable, &dataType, &colType, &cs, &coll, &prec, &scale, &tprec, &extra); err != nil {
			return err
		}
		db = s.Server.Flavour.CatalogSchema(db, dbs)
		t := tables[db+"."+tbl]
		if t == nil {
			return nil // a view
		}
		c := &Column{
			Name:      name,
			DataType:  strings.ToLower(dataType),
			Nullable:  nullable == "YES",
			Charset:   NormCharset(cs.String),
			Collation: NormCharset(coll.String),
			Precision: int(prec.Int64),
			Scale:     int(scale.Int64),
			TimePrec:  int(tprec.Int64),
		}
		lt := strings.ToLower(colType)
		c.Unsigned = strings.Contains(lt, "unsigned")
		c.Zerofill = strings.Contains(lt, "zerofill")
		c.Type = NormType(lt)
		if jsonCols[db+"."+tbl+"."+strings.ToLower(name)] && c.DataType == "longtext" {
			c.DataType, c.Type, c.IsJSONText = "json", "json", true
		}
		c.Extra, c.Generated = normExtra(extra)
		c.Default = normDefault(s.Server.Stores().IsMariaDB(), def, c.Nullable, extra)
		t.Columns = append(t.Columns, c)
		t.byName[strings.ToLower(name)] = c
		return nil
	}, `SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_DEFAULT, IS_NULLABLE,
		DATA_TYPE, COLUMN_TYPE, CHARACTER_SET_NAME, COLLATION_NAME, NUMERIC_PRECISION, NUMERIC_SCALE,
		DATETIME_PRECISION, EXTRA
		FROM information_schema.COLUMNS WHERE TABLE_SCHEMA `+in+`
		ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`, args...)
	if err != nil {
		return nil, fmt.Errorf("read %s columns: %w", s.Role, err)
	}

	err = target.QueryEach(ctx, s.DB, func(row target.Scanner) error {
		var db, tbl, name, nullable, typ string
		var nonUnique int
		var col sql.NullString
		var sub sql.NullInt64
		if err := row.Scan(&db, &tbl, &name, &nonUnique, &col, &sub, &nullable, &typ); err != nil {
			return err
		}
		db = s.Server.Flavour.CatalogSchema(db, dbs)
		t := tables[db+"."+tbl]
		if t == nil {
			return nil
		}
		var ix *Index
		if n := len(t.Indexes); n > 0 && t.Indexes[n-1].Name == name {
			ix = t.Indexes[n-1]
		} else {
			ix = &Index{Name: name, Primary: name == "PRIMARY", Unique: nonUnique == 0, Type: strings.ToUpper(typ)}
			t.Indexes = append(t.Indexes, ix)
		}
		part := col.String
		if !col.Valid {
			part = "(expression)" // MySQL 8 functional key part
		}
		ix.Columns = append(ix.Columns, part)
		if sub.Valid {
			part += fmt.Sprintf("(%d)", sub.Int64)
		}
		ix.Parts = append(ix.Parts, part)
		if nullable == "YES" || !col.Valid {
			ix.Nullable = true
		}
		return nil
	}, `SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, NON_UNIQUE, COLUMN_NAME, SUB_PART,
		COALESCE(NULLABLE, ''), COALESCE(INDEX_TYPE, '')
		FROM information_schema.STATISTICS WHERE TABLE_SCHEMA `+in+`
		ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`, args...)
	if err != nil {
		return nil, fmt.Errorf("read %s indexes: %w", s.Role, err)
	}
	for _, t := range tables {
		sort.SliceStable(t.Indexes, func(i, j int) bool { return t.Indexes[i].Primary && !t.Indexes[j].Primary })
	}
	if err := loadForeignKeys(ctx, s, tables, dbs, in, args); err != nil {
		return nil, err
	}
	return tables, nil
}

var (
	jsonValidRE   = regexp.MustCompile("(?i)^json_valid\\(`?([^`)]+)`?\\)$")
	intWidthRE    = regexp.MustCompile(`^(tinyint|smallint|mediumint|int|integer|bigint|year)\(\d+\)`)
	numLiteralRE  = regexp.MustCompile(`^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$`)
	emptyParensRE = regexp.MustCompile(`\(\)`)
)

// NormType drops what MySQL 8 no longer shows (integer display widths) so
// that int(11) and int compare equal. ZEROFILL keeps its width: it changes
// how the value prints. t is a COLUMN_TYPE in lower case.
func NormType(t string) string {
	if strings.Contains(t, "zerofill") {
		return t
	}
	return intWidthRE.ReplaceAllString(t, "$1")
}

// NormCharset spells a character set or collation of utf8 as utf8mb3, as
// newer servers do, so that the same definition compares equal across
// versions.
func NormCharset(s string) string {
	switch {
	case s == "utf8":
		return "utf8mb3"
	case strings.HasPrefix(s, "utf8_"):
		return "utf8mb3_" + s[len("utf8_"):]
	}
	return s
}

// normExtra keeps what changes behaviour (auto_increment, generated,
// on update) in one spelling.
func normExtra(extra string) (string, bool) {
	e := strings.ToLower(extra)
	e = strings.ReplaceAll(e, "default_generated", "")
	e = strings.ReplaceAll(e, "persistent generated", "stored generated")
	e = emptyParensRE.ReplaceAllString(e, "")
	e = strings.Join(strings.Fields(e), " ")
	return e, strings.Contains(e, "generated")
}

// normDefault renders COLUMN_DEFAULT the same way for both flavours:
// "" when there is none, NULL, a quoted literal, or a lowercase expression.
// MariaDB (10.2.7+) quotes literals and spells NULL; MySQL does neither and
// marks expressions DEFAULT_GENERATED.
func normDefault(mariadb bool, def sql.NullString, nullable bool, extra string) string {
	if !def.Valid {
		if nullable && !mariadb {
			return "NULL"
		}
		return ""
	}
	v := def.String
	if mariadb {
		switch {
		case v == "NULL":
			return "NULL"
		case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
			return quoteLiteral(strings.ReplaceAll(v[1:len(v)-1], "''", "'"))
		case numLiteralRE.MatchString(v):
			return quoteLiteral(v)
		}
		return normExpr(v)
	}
	if strings.Contains(strings.ToUpper(extra), "DEFAULT_GENERATED") ||
		strings.HasPrefix(strings.ToLower(v), "current_timestamp") {
		return normExpr(v)
	}
	return quoteLiteral(v)
}

func normExpr(v string) string {
	return emptyParensRE.ReplaceAllString(strings.ToLower(v), "")
}

func quoteLiteral(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }

// Diff is one difference between the two definitions of a table.
type Diff struct {
	Kind   string `json:"kind"`
	Object string `json:"object,omitempty"`
	Source string `json:"source,omitempty"`
	Target string `json:"target,omitempty"`
}

// String is the difference in words.
func (d Diff) String() string {
	switch d.Kind {
	case "table_missing_on_target", "table_extra_on_target":
		return strings.ReplaceAll(d.Kind, "_", " ")
	case "column_missing_on_target", "column_extra_on_target",
		"index_missing_on_target", "index_extra_on_target":
		return strings.ReplaceAll(strings.TrimPrefix(d.Kind, ""), "_", " ") + ": " + d.Object
	case "foreign_key_missing_on_target":
		return "foreign key missing on target: " + d.Object + " " + d.Source
	case "foreign_key_extra_on_target":
		return "foreign key extra on target: " + d.Object + " " + d.Target
	}
	what := strings.ReplaceAll(d.Kind, "_", " ")
	if d.Object != "" {
		what += " of " + d.Object
	}
	return fmt.Sprintf("%s: source %s, target %s", what, orNone(d.Source), orNone(d.Target))
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// compareSchema lists the differences between a table's two definitions.
func compareSchema(src, dst *Table) []Diff {
	var out []Diff
	if src.Engine != dst.Engine {
		out = append(out, Diff{Kind: "engine", Source: src.Engine, Target: dst.Engine})
	}
	for _, sc := range src.Columns {
		dc := dst.Column(sc.Name)
		if dc == nil {
			out = append(out, Diff{Kind: "column_missing_on_target", Object: sc.Name})
			continue
		}
		add := func(kind, s, d string) {
			if s != d {
				out = append(out, Diff{Kind: kind, Object: sc.Name, Source: s, Target: d})
			}
		}
		add("column_type", sc.Type, dc.Type)
		add("column_nullable", yesNo(sc.Nullable), yesNo(dc.Nullable))
		add("column_default", sc.Default, dc.Default)
		if sc.DataType != "json" || dc.DataType != "json" {
			add("column_charset", sc.Charset, dc.Charset)
			add("column_collation", sc.Collation, dc.Collation)
		}
		add("column_extra", sc.Extra, dc.Extra)
	}
	for _, dc := range dst.Columns {
		if src.Column(dc.Name) == nil {
			out = append(out, Diff{Kind: "column_extra_on_target", Object: dc.Name})
		}
	}
	sp, dp := primaryKey(src), primaryKey(dst)
	if sig(sp) != sig(dp) {
		out = append(out, Diff{Kind: "primary_key", Source: sig(sp), Target: sig(dp)})
	}
	sIdx, dIdx := indexSigs(src), indexSigs(dst)
	for _, s := range slices.Sorted(maps.Keys(sIdx)) {
		if _, ok := dIdx[s]; !ok {
			out = append(out, Diff{Kind: "index_missing_on_target", Object: sIdx[s].Name + " " + s})
		}
	}
	for _, s := range slices.Sorted(maps.Keys(dIdx)) {
		if _, ok := sIdx[s]; !ok {
			out = append(out, Diff{Kind: "index_extra_on_target", Object: dIdx[s].Name + " " + s})
		}
	}
	return append(out, compareForeignKeys(src, dst)...)
}

func yesNo(b bool) string {
	if b {
		return "NULL"
	}
	return "NOT NULL"
}

func primaryKey(t *Table) *Index {
	for _, ix := range t.Indexes {
		if ix.Primary {
			return ix
		}
	}
	return nil
}

func sig(ix *Index) string {
	if ix == nil {
		return ""
	}
	return "(" + strings.Join(ix.Parts, ", ") + ")"
}

// indexSigs maps the signatures of the non-primary indexes to the indexes.
func indexSigs(t *Table) map[string]*Index {
	m := map[string]*Index{}
	for _, ix := range t.Indexes {
		if !ix.Primary {
			m[ix.Signature()] = ix
		}
	}
	return m
}

// Load reads the base tables of the databases dbs on s (columns, indexes
// and foreign keys included), keyed by db.table, in a few bulk queries on
// information_schema.
func Load(ctx context.Context, s *Side, dbs []string) (map[string]*Table, error) {
	return loadSchema(ctx, s, dbs)
}

// Compare lists the differences between two definitions of a table:
// engine, columns (type, nullability, default, character set, collation,
// extra), primary key and indexes, each named by what it does, and foreign
// keys (columns, referenced table and columns, ON DELETE, ON UPDATE; a
// definition found under another name is a renamed key).
func Compare(src, dst *Table) []Diff { return compareSchema(src, dst) }

// readJSONChecks finds MariaDB's JSON columns, LONGTEXT with a CHECK
// (json_valid(col)), by "db.table.column" in lower case; in and args are
// loadSchema's condition on the schema's name.
func readJSONChecks(ctx context.Context, s *Side, dbs []string, in string, args []any) map[string]bool {
	jsonCols := map[string]bool{}
	if !s.Server.Stores().IsMariaDB() {
		return jsonCols
	}
	// MariaDB's JSON is LONGTEXT plus CHECK (json_valid(col)); older
	// servers have no CHECK_CONSTRAINTS, which only costs the JSON rule
	// (and so does any error reading them).
	each := func(row target.Scanner) error {
		var db, tbl, clause string
		if row.Scan(&db, &tbl, &clause) == nil {
			db = s.Server.Flavour.CatalogSchema(db, dbs)
			if m := jsonValidRE.FindStringSubmatch(clause); m != nil {
				jsonCols[db+"."+tbl+"."+strings.ToLower(m[1])] = true
			}
		}
		return nil
	}
	err := target.QueryEach(ctx, s.DB, each, `SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CHECK_CLAUSE
		FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA `+in, args...)
	if err != nil {
		// MariaDB's CHECK_CONSTRAINTS names the table, the standard's
		// does not: a gateway that knows only the standard's columns
		// (vtgate) refuses TABLE_NAME, and TABLE_CONSTRAINTS names it.
		// (Two tables' checks of one name in one schema match each
		// other here; only a LONGTEXT column's json_valid makes JSON.)
		_ = target.QueryEach(ctx, s.DB, each, `SELECT tc.TABLE_SCHEMA, tc.TABLE_NAME, cc.CHECK_CLAUSE
			FROM information_schema.TABLE_CONSTRAINTS tc JOIN information_schema.CHECK_CONSTRAINTS cc
			ON cc.CONSTRAINT_SCHEMA = tc.CONSTRAINT_SCHEMA AND cc.CONSTRAINT_NAME = tc.CONSTRAINT_NAME
			WHERE tc.CONSTRAINT_TYPE = 'CHECK' AND tc.TABLE_SCHEMA `+in+` AND cc.CONSTRAINT_SCHEMA `+in, append(args, args...)...)
	}
	return jsonCols
}
