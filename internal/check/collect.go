package check

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/vars"
)

// snapshot is what check read from one side. An item that could not be
// read is in failed, with what it would need.
type snapshot struct {
	role    string
	side    *schema.Side
	server  serverVersion
	timeout time.Duration
	failed  map[string]NotChecked

	vars     map[string]string
	user     string                // CURRENT_USER() as 'user'@'host'
	schemas  map[string]schemaInfo // every database on the server
	dbs      []string              // the databases in scope that exist here
	tables   map[string]*schema.Table
	info     map[string]*tableInfo // base tables, views, sequences: db.name
	routines map[string]string     // db.name -> PROCEDURE or FUNCTION
	triggers map[string]string     // db.name -> db.table it fires on
	events   map[string]string     // db.name -> status
	// routineDefs and eventDefs are the definitions, by db.name.
	routineDefs map[string]*routineDef
	eventDefs   map[string]*routineDef
	bodies      []body   // SQL bodies of views, routines, triggers, events
	subparts    []string // db.table with subpartitions
	fks         []string // db.table.constraint
	descIdx     []string // db.table.index with a descending part
	// cardinality is the largest index cardinality of each table's unique
	// indexes: what the optimizer believes the row count is.
	cardinality map[string]int64
	collations  map[string]string // collation -> character set
	charsets    map[string]string // character set -> default collation
	engines     map[string]string // lower-case engine -> SUPPORT
	reserved    map[string]bool   // from information_schema.KEYWORDS; nil: unknown
	accounts    map[string]*account
	privNames   map[string]bool // canonical privilege names (SHOW PRIVILEGES)
	authPlugins map[string]bool // active authentication plugins
	tzLoaded    bool
	locks       tableLocks // the source's explicit table locks
	udfs        []string   // loadable functions (mysql.func)
	zeroDates   []zeroDate
	// hiddenTables are the privileges whose lack hides some databases'
	// tables from the user ("SELECT on db.*").
	hiddenTables []string
}

type schemaInfo struct{ charset, collation string }

type tableInfo struct {
	db, name   string
	typ        string // BASE TABLE, VIEW, SEQUENCE, SYSTEM VERSIONED
	engine     string
	autoInc    uint64 // next AUTO_INCREMENT value; 0 when none
	collation  string
	rows       int64
	bytes      int64 // DATA_LENGTH: about what one statement changing every row writes
	createOpts string
}

type body struct{ kind, object, text string }

type zeroDate struct {
	object  string // db.table.column
	inData  bool   // a row holds one (else the default is one)
	defVal  string
	dataTyp string
}

func newSnapshot(role string, s *schema.Side, timeout time.Duration) *snapshot {
	return &snapshot{role: role, side: s, server: parseServer(s.Server), timeout: timeout, failed: map[string]NotChecked{}}
}

// systemDatabases are never compared.
var systemDatabases = map[string]bool{"mysql": true, "information_schema": true, "performance_schema": true,
	"sys": true, "metrics_schema": true, "inspection_schema": true}

// errFatal marks a failure that ends the check: the side is gone.
type errFatal struct {
	role string
	err  error
}

func (e *errFatal) Error() string { return e.role + ": " + e.err.Error() }
func (e *errFatal) Unwrap() error { return e.err }

// query runs q under the per-query timeout and calls scan for each row. A
// failure that leaves the side usable is recorded under item (privilege
// names what a user would need; missing what the server would lack) and
// query returns false; a lost connection or the end of ctx is an error.
func (s *snapshot) query(ctx context.Context, item, missing, privilege, q string, args []any, scan func(*sql.Rows) error) (bool, error) {
	qctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	err := func() error {
		rows, err := s.side.DB.QueryContext(qctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}()
	if err == nil {
		return true, nil
	}
	if target.IsConnLost(err) {
		// The driver's error does not say what was being read.
		err = fmt.Errorf("read %s: %w", missing, err)
	}
	return false, s.readFailed(ctx, err, item, missing, privilege)
}

// readFailed sorts out a failed read of item: a cancelled run or a lost
// connection ends the check; anything else leaves item not checked, and
// what needed it says why.
func (s *snapshot) readFailed(ctx context.Context, err error, item, missing, privilege string) error {
	if ctx.Err() != nil {
		return &errFatal{s.role, ctx.Err()}
	}
	if target.IsConnLost(err) {
		return &errFatal{s.role, err}
	}
	s.fail(item, classify(err, missing, privilege, s.timeout))
	return nil
}

func (s *snapshot) fail(item string, nc NotChecked) {
	if _, ok := s.failed[item]; !ok {
		s.failed[item] = nc
	}
}

// classify turns a failed read into what the check would need.
func classify(err error, missing, privilege string, timeout time.Duration) NotChecked {
	if errors.Is(err, context.DeadlineExceeded) {
		return NotChecked{Detail: fmt.Sprintf("reading %s took longer than %s (--query-timeout)", missing, timeout)}
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch {
		case target.PrivilegeCode(me.Number):
			if privilege != "" {
				return NotChecked{Privilege: privilege, Detail: me.Message}
			}
			return NotChecked{Detail: me.Message}
		case target.MissingCode(me.Number):
			return NotChecked{Missing: missing, Detail: me.Message}
		}
		return NotChecked{Detail: fmt.Sprintf("reading %s failed: %s", missing, me.Message)}
	}
	return NotChecked{Detail: fmt.Sprintf("reading %s failed: %v", missing, err)}
}

// readDatabases reads every database and its defaults.
func (s *snapshot) readDatabases(ctx context.Context) error {
	s.schemas = map[string]schemaInfo{}
	_, err := s.query(ctx, "databases", "information_schema.SCHEMATA", "",
		`SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA`, nil,
		func(rows *sql.Rows) error {
			var name string
			var cs, coll sql.NullString
			if err := rows.Scan(&name, &cs, &coll); err != nil {
				return err
			}
			s.schemas[name] = schemaInfo{charset: normCollation(cs.String), collation: normCollation(coll.String)}
			return nil
		})
	return err
}

// userDatabases are the databases other than the system ones, sorted.
func (s *snapshot) userDatabases() []string {
	var out []string
	for n := range s.schemas {
		if !systemDatabases[strings.ToLower(n)] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// collect reads everything the checks use. The target also needs what it
// can hold (collations, engines, reserved words, privileges, plugins).
func (s *snapshot) collect(ctx context.Context, scope []string, isTarget bool) error {
	if s.schemas == nil {
		if err := s.readDatabases(ctx); err != nil {
			return err
		}
	}
	for _, d := range scope {
		if _, ok := s.schemas[d]; ok {
			s.dbs = append(s.dbs, d)
			continue
		}
		// A server with lower_case_table_names set stores the name in
		// lower case.
		for n := range s.schemas {
			if strings.EqualFold(n, d) {
				s.dbs = append(s.dbs, n)
				break
			}
		}
	}
	steps := []func(context.Context) error{
		s.readVariables, s.readUser, s.readTables, s.readTableInfo, s.readRoutines, s.readTriggers,
		s.readEvents, s.readRoutineDefs, s.readEventDefs, s.readViews, s.readPartitions, s.readForeignKeys, s.readIndexStats,
		s.readCollations, s.readAccounts, s.readVisibility, s.readPrivilegeNames, s.readAuthPlugins, s.readTimeZones,
	}
	if isTarget {
		steps = append(steps, s.readEngines, s.readKeywords)
	} else {
		steps = append(steps, s.readKeywords, s.readUDFs, s.readTableLocks)
	}
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (s *snapshot) readVariables(ctx context.Context) error {
	qctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	v, err := vars.Collect(qctx, s.side.DB)
	if err != nil {
		return s.readFailed(ctx, err, "variables", "SHOW GLOBAL VARIABLES", "")
	}
	s.vars = v
	return nil
}

func (s *snapshot) readUser(ctx context.Context) error {
	_, err := s.query(ctx, "user", "CURRENT_USER()", "", `SELECT CURRENT_USER()`, nil, func(rows *sql.Rows) error {
		var u string
		if err := rows.Scan(&u); err != nil {
			return err
		}
		user, host, _ := strings.Cut(u, "@")
		s.user = accountName(user, host)
		return nil
	})
	return err
}

// queryScope runs q, which ends in "IN ", on the databases in scope; with
// none in scope there is nothing to read.
func (s *snapshot) queryScope(ctx context.Context, item, missing, q string, scan func(*sql.Rows) error) error {
	if len(s.dbs) == 0 {
		return nil
	}
	args := make([]any, len(s.dbs))
	for i, d := range s.dbs {
		args[i] = d
	}
	_, err := s.query(ctx, item, missing, "", q+"("+strings.TrimSuffix(strings.Repeat("?,", len(s.dbs)), ",")+")", args, scan)
	return err
}

func (s *snapshot) readTables(ctx context.Context) error {
	s.tables = map[string]*schema.Table{}
	qctx, cancel := context.WithTimeout(ctx, s.timeout*3)
	defer cancel()
	t, err := schema.Load(qctx, s.side, s.dbs)
	if err != nil {
		return s.readFailed(ctx, err, "tables", "information_schema.TABLES, COLUMNS and STATISTICS", "")
	}
	s.tables = t
	return nil
}

func (s *snapshot) readTableInfo(ctx context.Context) error {
	s.info = map[string]*tableInfo{}
	return s.queryScope(ctx, "tableinfo", "information_schema.TABLES",
		`SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, ENGINE, AUTO_INCREMENT, TABLE_COLLATION, TABLE_ROWS, DATA_LENGTH, CREATE_OPTIONS
		FROM information_schema.TABLES WHERE TABLE_SCHEMA IN `,
		func(rows *sql.Rows) error {
			var t tableInfo
			var typ, engine, autoInc, coll, nrows, size, opts sql.NullString
			if err := rows.Scan(&t.db, &t.name, &typ, &engine, &autoInc, &coll, &nrows, &size, &opts); err != nil {
				return err
			}
			t.bytes, _ = strconv.ParseInt(size.String, 10, 64)
			t.typ, t.engine, t.collation, t.createOpts = typ.String, engine.String, normCollation(coll.String), opts.String
			t.autoInc, _ = strconv.ParseUint(autoInc.String, 10, 64)
			t.rows, _ = strconv.ParseInt(nrows.String, 10, 64)
			s.info[t.db+"."+t.name] = &t
			return nil
		})
}

func (s *snapshot) readRoutines(ctx context.Context) error {
	s.routines = map[string]string{}
	return s.queryScope(ctx, "routines", "information_schema.ROUTINES",
		`SELECT ROUTINE_SCHEMA, ROUTINE_NAME, ROUTINE_TYPE, ROUTINE_DEFINITION FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA IN `,
		func(rows *sql.Rows) error {
			var db, name, typ string
			var def sql.NullString
			if err := rows.Scan(&db, &name, &typ, &def); err != nil {
				return err
			}
			s.routines[db+"."+name] = strings.ToUpper(typ)
			s.bodies = append(s.bodies, body{strings.ToLower(typ), db + "." + name, def.String})
			return nil
		})
}

func (s *snapshot) readTriggers(ctx context.Context) error {
	s.triggers = map[string]string{}
	return s.queryScope(ctx, "triggers", "information_schema.TRIGGERS",
		`SELECT TRIGGER_SCHEMA, TRIGGER_NAME, EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE, ACTION_STATEMENT
		FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA IN `,
		func(rows *sql.Rows) error {
			var db, name, tdb, tbl string
			var stmt sql.NullString
			if err := rows.Scan(&db, &name, &tdb, &tbl, &stmt); err != nil {
				return err
			}
			s.triggers[db+"."+name] = tdb + "." + tbl
			s.bodies = append(s.bodies, body{"trigger", db + "." + name, stmt.String})
			return nil
		})
}

func (s *snapshot) readEvents(ctx context.Context) error {
	s.events = map[string]string{}
	return s.queryScope(ctx, "events", "information_schema.EVENTS",
		`SELECT EVENT_SCHEMA, EVENT_NAME, STATUS, EVENT_DEFINITION FROM information_schema.EVENTS WHERE EVENT_SCHEMA IN `,
		func(rows *sql.Rows) error {
			var db, name string
			var status, def sql.NullString
			if err := rows.Scan(&db, &name, &status, &def); err != nil {
				return err
			}
			s.events[db+"."+name] = status.String
			s.bodies = append(s.bodies, body{"event", db + "." + name, def.String})
			return nil
		})
}

func (s *snapshot) readViews(ctx context.Context) error {
	return s.queryScope(ctx, "views", "information_schema.VIEWS",
		`SELECT TABLE_SCHEMA, TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS WHERE TABLE_SCHEMA IN `,
		func(rows *sql.Rows) error {
			var db, name string
			var def sql.NullString
			if err := rows.Scan(&db, &name, &def); err != nil {
				return err
			}
			s.bodies = append(s.bodies, body{"view", db + "." + name, def.String})
			return nil
		})
}

func (s *snapshot) readPartitions(ctx context.Context) error {
	return s.queryScope(ctx, "partitions", "information_schema.PARTITIONS",
		`SELECT DISTINCT TABLE_SCHEMA, TABLE_NAME FROM information_schema.PARTITIONS
		WHERE SUBPARTITION_METHOD IS NOT NULL AND SUBPARTITION_METHOD <> '' AND TABLE_SCHEMA IN `,
		func(rows *sql.Rows) error {
			var db, name string
			if err := rows.Scan(&db, &name); err != nil {
				return err
			}
			s.subparts = append(s.subparts, db+"."+name)
			return nil
		})
}

func (s *snapshot) readForeignKeys(ctx context.Context) error {
	return s.queryScope(ctx, "foreignkeys", "information_schema.REFERENTIAL_CONSTRAINTS",
		`SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA IN `,
		func(rows *sql.Rows) error {
			var db, tbl, name string
			if err := rows.Scan(&db, &tbl, &name); err != nil {
				return err
			}
			s.fks = append(s.fks, db+"."+tbl+"."+name)
			return nil
		})
}

// readIndexStats reads, per table, what the optimizer believes about its
// unique indexes, and which indexes have descending parts.
func (s *snapshot) readIndexStats(ctx context.Context) error {
	s.cardinality = map[string]int64{}
	desc := map[string]bool{}
	return s.queryScope(ctx, "indexstats", "information_schema.STATISTICS",
		`SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, NON_UNIQUE, CARDINALITY, COLLATION
		FROM information_schema.STATISTICS WHERE TABLE_SCHEMA IN `,
		func(rows *sql.Rows) error {
			var db, tbl, idx string
			var nonUnique, card, coll sql.NullString
			if err := rows.Scan(&db, &tbl, &idx, &nonUnique, &card, &coll); err != nil {
				return err
			}
			key := db + "." + tbl
			if nonUnique.String == "0" {
				n, _ := strconv.ParseInt(card.String, 10, 64)
				if c, seen := s.cardinality[key]; !seen || n > c {
					s.cardinality[key] = n
				}
			}
			if coll.String == "D" && !desc[key+"."+idx] {
				desc[key+"."+idx] = true
				s.descIdx = append(s.descIdx, key+"."+idx)
			}
			return nil
		})
}
