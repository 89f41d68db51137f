package verify

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
)

// FixTriggers says what the repair SQL does with a target table that has
// triggers. Its writes would fire them, and what they do (rows written to
// other tables, values changed on the way in) would make the target differ
// again; MySQL and MariaDB have no session setting that turns triggers off.
type FixTriggers string

const (
	// FixTriggersSkip (the default) leaves such a table unrepaired: its
	// statements are written as comments, under the names of its triggers.
	FixTriggersSkip FixTriggers = "skip"
	// FixTriggersDrop repairs it: each block of its statements runs with
	// the table locked (LOCK TABLES ... WRITE) and its triggers dropped,
	// and is followed by the triggers' CREATE statements, as SHOW CREATE
	// TRIGGER gave them, in their own sql_mode and character set and in
	// their firing order.
	FixTriggersDrop FixTriggers = "drop"
)

// trigger is a trigger of a target table that the repair SQL writes.
type trigger struct {
	name, timing, event string
	order               int64 // ACTION_ORDER among the table's triggers of one timing and event
	sqlMode             string
	charsetClient       string
	collationConnection string
	create              string // SHOW CREATE TRIGGER's statement; FixTriggersDrop only
}

func (tr *trigger) String() string { return tr.name + " (" + tr.timing + " " + tr.event + ")" }

// triggerKey keys a table's triggers by its database and name.
func triggerKey(db, table string) string { return db + "\x00" + table }

// eventOrder lists triggers the way a reader follows them: by event, then
// BEFORE before AFTER, then in firing order. Only the firing order within
// one timing and event is kept by recreating them in this order.
var eventOrder = map[string]int{"INSERT": 0, "UPDATE": 1, "DELETE": 2}

// readTriggers reads the triggers on the tables of dbs (db and table),
// keyed by triggerKey, each table's in eventOrder; with definitions, also
// each one's CREATE statement. An account without the TRIGGER privilege on
// a table sees none of its triggers: the repair SQL checks again when it
// is applied.
func readTriggers(ctx context.Context, s *schema.Side, dbs []string, definitions bool) (map[string][]*trigger, error) {
	out := map[string][]*trigger{}
	if len(dbs) == 0 {
		return out, nil
	}
	in := "(" + strings.TrimSuffix(strings.Repeat("?,", len(dbs)), ",") + ")"
	args := make([]any, len(dbs))
	for i, d := range dbs {
		args[i] = d
	}
	query := func(order string) (*sql.Rows, error) {
		return s.DB.QueryContext(ctx, `SELECT TRIGGER_SCHEMA, EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, TRIGGER_NAME,
			ACTION_TIMING, EVENT_MANIPULATION, `+order+`, SQL_MODE, CHARACTER_SET_CLIENT, COLLATION_CONNECTION
			FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA IN `+in, args...)
	}
	rows, err := query("ACTION_ORDER")
	if target.Code(err) == target.ERBadField {
		// Before MySQL 5.7.2 and MariaDB 10.2.3: one trigger per timing
		// and event, so no order to keep.
		rows, err = query("0")
	}
	if err != nil {
		return nil, fmt.Errorf("read the target's triggers: %w", err)
	}
	type named struct {
		db string
		tr *trigger
	}
	var all []named
	for rows.Next() {
		var trigDB, db, table string
		tr := &trigger{}
		if err := rows.Scan(&trigDB, &db, &table, &tr.name, &tr.timing, &tr.event, &tr.order, &tr.sqlMode, &tr.charsetClient, &tr.collationConnection); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read the target's triggers: %w", err)
		}
		tr.timing, tr.event = strings.ToUpper(tr.timing), strings.ToUpper(tr.event)
		k := triggerKey(db, table)
		out[k] = append(out[k], tr)
		all = append(all, named{trigDB, tr})
	}
	if err := target.CloseRows(rows); err != nil {
		return nil, fmt.Errorf("read the target's triggers: %w", err)
	}
	for _, ts := range out {
		sort.SliceStable(ts, func(i, j int) bool {
			a, b := ts[i], ts[j]
			switch {
			case a.event != b.event:
				return eventOrder[a.event] < eventOrder[b.event]
			case a.timing != b.timing:
				return a.timing == "BEFORE"
			}
			return a.order < b.order
		})
	}
	if !definitions {
		return out, nil
	}
	for _, n := range all {
		if n.tr.create, err = showCreateTrigger(ctx, s.DB, n.db, n.tr.name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// showCreateTrigger is SHOW CREATE TRIGGER's statement: the definer, the
// trigger's and its table's names as they were written, and the body.
func showCreateTrigger(ctx context.Context, db *sql.DB, schemaName, name string) (string, error) {
	rows, err := db.QueryContext(ctx, "SHOW CREATE TRIGGER "+escape.Qualified(schemaName, name))
	if err != nil {
		return "", fmt.Errorf("read the target's trigger %s.%s: %w", schemaName, name, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", fmt.Errorf("read the target's trigger %s.%s: %w", schemaName, name, err)
	}
	vals := make([]sql.NullString, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	var stmt string
	if rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return "", fmt.Errorf("read the target's trigger %s.%s: %w", schemaName, name, err)
		}
		for i, c := range cols {
			if strings.EqualFold(c, "SQL Original Statement") {
				stmt = vals[i].String
			}
		}
	}
	if err := target.CloseRows(rows); err != nil {
		return "", fmt.Errorf("read the target's trigger %s.%s: %w", schemaName, name, err)
	}
	if stmt == "" {
		return "", fmt.Errorf("read the target's trigger %s.%s: SHOW CREATE TRIGGER gave no statement", schemaName, name)
	}
	return stmt, nil
}

// startFix reads the target's triggers on the tables being compared and
// writes the head of the repair SQL, which names them and says what the
// file does about them.
func (r *runner) startFix(ctx context.Context, tables []*tableJob) error {
	if r.fix == nil {
		return nil
	}
	var dbs []string
	seen := map[string]bool{}
	for _, t := range tables {
		t.dstDB, t.dstTable = splitQualified(t.dstName)
		if !seen[t.dstDB] {
			seen[t.dstDB] = true
			dbs = append(dbs, t.dstDB)
		}
	}
	trig, err := readTriggers(ctx, r.dst, dbs, r.opts.FixTriggers == FixTriggersDrop)
	if err != nil {
		return err
	}
	for _, t := range tables {
		t.triggers = trig[triggerKey(t.dstDB, t.dstTable)]
	}
	r.fix.begin(tables)
	return nil
}

// splitQualified reads back a name quoted as escape.Qualified(db, table).
func splitQualified(q string) (db, table string) {
	var parts []string
	var b strings.Builder
	in := false
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case c == '`' && in && i+1 < len(q) && q[i+1] == '`':
			b.WriteByte('`')
			i++
		case c == '`':
			in = !in
			if !in {
				parts = append(parts, b.String())
				b.Reset()
			}
		case in:
			b.WriteByte(c)
		}
	}
	if len(parts) != 2 {
		return "", q
	}
	return parts[0], parts[1]
}

// triggerSection is what the head of the repair SQL says about the
// tables with triggers.
func triggerSection(w io.Writer, mode FixTriggers, tables []*tableJob) {
	var with []string
	for _, t := range tables {
		if len(t.triggers) == 0 {
			continue
		}
		names := make([]string, len(t.triggers))
		for i, tr := range t.triggers {
			names[i] = tr.String()
		}
		with = append(with, "--   "+t.dstDB+"."+t.dstTable+": "+strings.Join(names, ", "))
	}
	guard := `-- Before each table's statements, a SET @shakedown_trigger_guard reads the
-- table's triggers again: the client stops there, with ERROR 1242 (Subquery
-- returns more than 1 row), if the table has a trigger that verify did not
-- see (created since, or hidden from verify's account, which sees only the
-- triggers of tables it has the TRIGGER privilege on). Run verify again then.
`
	if len(with) == 0 {
		io.WriteString(w, "--\n-- TRIGGERS: verify saw none on the target's tables compared.\n"+guard)
		return
	}
	if mode != FixTriggersDrop {
		fmt.Fprintf(w, `--
-- TRIGGERS. The repair's writes would fire the target's triggers, and what
-- they do (rows written to other tables, values changed) would make the
-- target differ again. These tables have triggers and are NOT repaired by
-- this file; the statements they need are written as comments:
%s
-- To repair them too, run verify again with --fix-sql-triggers=drop: that
-- file locks each such table, drops its triggers around its statements and
-- recreates them as they were.
%s`, strings.Join(with, "\n"), guard)
		return
	}
	fmt.Fprintf(w, `--
-- TRIGGERS. The repair's writes would fire the target's triggers, and what
-- they do would make the target differ again. So for each block of
-- statements on these tables this file locks the table (LOCK TABLES ...
-- WRITE: other sessions wait, and none writes past the triggers meanwhile),
-- DROPS its triggers, runs the statements, RECREATES the triggers as SHOW
-- CREATE TRIGGER gave them when verify read them (definer, sql_mode,
-- character set and firing order kept) and unlocks it:
%s
-- Applying it takes the TRIGGER and LOCK TABLES privileges, and SUPER (SET
-- USER on MariaDB, SET_USER_ID on MySQL) for a trigger defined by another
-- account; --comments keeps the comments of the triggers' bodies. If the
-- client stops with an error inside a block, that table is left WITHOUT
-- its triggers: the block's CREATE TRIGGER statements, after its
-- statements, recreate them.
%s`, strings.Join(with, "\n"), guard)
}

// triggerGuard is a statement that fails when the table has a trigger
// other than those the file knows of: a subquery that returns a row for
// each such trigger and one more, which SET accepts only when it is one.
func triggerGuard(t *tableJob) string {
	cond := "EVENT_OBJECT_SCHEMA = " + stringLiteral([]byte(t.dstDB)) + " AND EVENT_OBJECT_TABLE = " + stringLiteral([]byte(t.dstTable))
	if len(t.triggers) > 0 {
		names := make([]string, len(t.triggers))
		for i, tr := range t.triggers {
			names[i] = stringLiteral([]byte(tr.name))
		}
		cond += " AND TRIGGER_NAME NOT IN (" + strings.Join(names, ",") + ")"
	}
	return "SET @shakedown_trigger_guard = (SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE " + cond + " UNION ALL SELECT NULL);"
}

// writeTriggerBlock writes a block of statements on a table with
// triggers: commented out, or run with the triggers dropped.
func writeTriggerBlock(w io.Writer, mode FixTriggers, t *tableJob, stmts []string) {
	if mode != FixTriggersDrop {
		fmt.Fprintf(w, "-- NOT repaired: the target's table has triggers (see the top of this file); it needs:\n")
		for _, s := range stmts {
			fmt.Fprintf(w, "-- %s\n", s)
		}
		return
	}
	fmt.Fprintf(w, "LOCK TABLES %s WRITE;\n%s\n", t.dstName, triggerGuard(t))
	for _, tr := range t.triggers {
		fmt.Fprintf(w, "DROP TRIGGER IF EXISTS %s.%s;\n", escape.Ident(t.dstDB), escape.Ident(tr.name))
	}
	for _, s := range stmts {
		fmt.Fprintf(w, "%s\n", s)
	}
	// SHOW CREATE TRIGGER names the trigger and its table as they were
	// written, unqualified: they are created in the table's database.
	fmt.Fprintf(w, "USE %s;\n", escape.Ident(t.dstDB))
	for _, tr := range t.triggers {
		cs := tr.charsetClient
		if !isASCII(tr.create) && !strings.HasPrefix(strings.ToLower(cs), "utf8") {
			// The text is utf8mb4 here: it is sent as such, and means
			// the same in the trigger's collation_connection.
			fmt.Fprintf(w, "-- %s was created with character_set_client %s; its text is not ASCII, so it is sent as utf8mb4\n", tr.name, cs)
			cs = "utf8mb4"
		}
		d := delimiter(tr.create)
		fmt.Fprintf(w, "SET character_set_client = %s, collation_connection = %s, sql_mode = %s;\nDELIMITER %s\n%s%s\nDELIMITER ;\n",
			stringLiteral([]byte(cs)), stringLiteral([]byte(tr.collationConnection)), stringLiteral([]byte(tr.sqlMode)), d, tr.create, d)
	}
	fmt.Fprintf(w, "SET NAMES utf8mb4;\nSET SESSION sql_mode = %s;\nUNLOCK TABLES;\n", stringLiteral([]byte(fixSQLMode)))
}

// delimiter is a statement delimiter for the client that the statement
// does not hold.
func delimiter(stmt string) string {
	for _, d := range []string{";;", "$$", "//", "$$$$", ";;;;"} {
		if !strings.Contains(stmt, d) {
			return d
		}
	}
	d := "$shakedown$"
	for strings.Contains(stmt, d) {
		d += "$"
	}
	return d
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
