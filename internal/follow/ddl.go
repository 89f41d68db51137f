package follow

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // literal values for the parser

	"github.com/shakedown/shakedown/internal/escape"
)

// statement kinds a statement event can hold.
const (
	kindTable    = "table"    // CREATE/ALTER/DROP/RENAME/TRUNCATE TABLE, CREATE/DROP INDEX
	kindDatabase = "database" // CREATE/DROP DATABASE
	kindOther    = "other"    // views, routines, triggers, events in a followed database
	kindDML      = "dml"      // a change logged as a statement, not as rows
)

// ddlStmt is a statement event as the follower sees it.
type ddlStmt struct {
	text     string
	schema   string // the default database it ran in
	kind     string
	followed bool // it touches a followed database
	dbs      []string
	// qualified: it names a database itself, so it cannot simply be run in
	// another database of another name.
	qualified bool
}

var (
	dmlStart   = regexp.MustCompile(`(?is)^\s*(/\*.*?\*/\s*)*(INSERT|UPDATE|DELETE|REPLACE|LOAD\s+DATA)\b`)
	ddlStart   = regexp.MustCompile(`(?is)^\s*(/\*.*?\*/\s*)*(CREATE|ALTER|DROP|RENAME|TRUNCATE)\b`)
	dbStmt     = regexp.MustCompile(`(?is)^\s*(/\*.*?\*/\s*)*(CREATE|DROP)\s+(DATABASE|SCHEMA)\b(\s+IF\s+(NOT\s+)?EXISTS)?\s+` + "`?([^`\\s;]+)`?")
	accountDDL = regexp.MustCompile(`(?is)^\s*(CREATE|ALTER|DROP|RENAME)\s+(USER|ROLE|SERVER)\b`)
)

// classify reads what a statement event is and whether it touches the
// followed databases (by name, source side).
func classify(q, schemaName string, followed map[string]string) ddlStmt {
	d := ddlStmt{text: q, schema: schemaName, kind: kindOther}
	if dmlStart.MatchString(q) {
		// A session that logged its changes as statements
		// (binlog_format=STATEMENT or MIXED for it): skipping them would
		// lose them, so the follower stops before one that touches its
		// databases.
		d.kind = kindDML
		d.followed = names(q, schemaName, followed)
		return d
	}
	if !ddlStart.MatchString(q) || accountDDL.MatchString(q) {
		// GRANT, FLUSH, ANALYZE, SET PASSWORD...: not the data followed.
		return d
	}
	if m := dbStmt.FindStringSubmatch(q); m != nil {
		d.kind, d.dbs = kindDatabase, []string{m[6]}
		_, d.followed = followed[m[6]]
		d.qualified = true
		return d
	}
	stmt, err := parser.New().ParseOneStmt(q, "", "")
	if err == nil {
		var names []*ast.TableName
		switch s := stmt.(type) {
		case *ast.CreateTableStmt:
			names = append(names, s.Table)
			if s.ReferTable != nil {
				names = append(names, s.ReferTable)
			}
		case *ast.AlterTableStmt:
			names = append(names, s.Table)
			for _, spec := range s.Specs {
				if spec.NewTable != nil {
					names = append(names, spec.NewTable)
				}
			}
		case *ast.DropTableStmt:
			if s.IsView {
				break
			}
			names = append(names, s.Tables...)
		case *ast.RenameTableStmt:
			for _, t := range s.TableToTables {
				names = append(names, t.OldTable, t.NewTable)
			}
		case *ast.TruncateTableStmt:
			names = append(names, s.Table)
		case *ast.CreateIndexStmt:
			names = append(names, s.Table)
		case *ast.DropIndexStmt:
			names = append(names, s.Table)
		}
		if len(names) > 0 {
			d.kind = kindTable
			for _, n := range names {
				db := n.Schema.O
				if db == "" {
					db = schemaName
				} else {
					d.qualified = true
				}
				d.dbs = append(d.dbs, db)
				if _, ok := followed[db]; ok {
					d.followed = true
				}
			}
			return d
		}
	}
	// A statement the parser does not read (MariaDB's own syntax), or a
	// view, routine, trigger or event: followed when it ran in a followed
	// database or names one.
	_, inSchema := followed[schemaName]
	d.qualified = namesFollowed(q, followed)
	d.followed = inSchema || d.qualified
	return d
}

// names says q ran in, or names, one of the followed databases.
func names(q, schemaName string, followed map[string]string) bool {
	_, ok := followed[schemaName]
	return ok || namesFollowed(q, followed)
}

// namesFollowed says q names one of the followed databases itself.
func namesFollowed(q string, followed map[string]string) bool {
	for db := range followed {
		if strings.Contains(q, "`"+db+"`.") || strings.Contains(q, " "+db+".") {
			return true
		}
	}
	return false
}

// ddl applies a followed DDL statement, or stops before it.
func (f *follower) ddl(ctx context.Context, d ddlStmt, end Position) error {
	// By file and offset: the saved row keeps no GTID set for the DDL.
	if f.opts.SkipDDL && f.saved.DDL.File == end.File && f.saved.DDL.Pos == end.Pos {
		f.logf("follow: went on past the DDL at %s, as --from-next or --skip-ddl asks, without applying it: %s", end, oneLine(d.text))
		f.saved.DDL, f.saved.DDLText = Position{}, ""
		return nil
	}
	stop := func(why string) error {
		f.saved.DDL, f.saved.DDLText = end, d.text
		return &stopError{fmt.Errorf("%w at %s: %s\n  %s\n  apply it on the target by hand and run follow again with --from-next, or run it with --skip-ddl to leave it out",
			ErrStoppedAtDDL, end, why, oneLine(d.text))}
	}
	if d.kind == kindDML {
		return stop("a change the source logged as a statement, not as rows (its session ran with binlog_format STATEMENT or MIXED): the follower applies row events only")
	}
	if d.kind == kindOther {
		return stop("the follower applies table and database DDL only, and this statement changes another object of a followed database")
	}
	stmt := f.coll.Rewrite(d.text, func(string, string) {})
	db := f.dbmap[d.schema]
	renamed := false
	var names []string
	for _, s := range d.dbs {
		if t, ok := f.dbmap[s]; ok && t != s {
			renamed = true
			names = append(names, fmt.Sprintf("%s (%s on the target)", s, t))
		}
	}
	if renamed && d.qualified {
		return stop(fmt.Sprintf("it names database %s, and the follower does not rewrite the names inside a statement", strings.Join(names, ", ")))
	}
	if d.kind == kindDatabase {
		// CREATE or DROP DATABASE of a followed database: on the target, by its name there.
		if renamed {
			stmt = strings.Replace(stmt, d.dbs[0], f.dbmap[d.dbs[0]], 1)
		}
		db = ""
	}
	conn, err := f.dst.DB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	defer conn.Close()
	if db != "" {
		if _, err := conn.ExecContext(ctx, "USE "+escape.Ident(db)); err != nil {
			return stop(fmt.Sprintf("the target cannot enter database %s: %v", db, err))
		}
	}
	if _, err := conn.ExecContext(ctx, stmt); err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return stop(fmt.Sprintf("the target refused it: %v", err))
	}
	f.logf("follow: applied DDL at %s: %s", end, oneLine(d.text))
	// Definitions are read again on next use.
	for _, s := range d.dbs {
		for k := range f.tables {
			if strings.HasPrefix(k, s+".") {
				delete(f.tables, k)
			}
		}
	}
	f.mu.Lock()
	f.stats.DDL++
	f.mu.Unlock()
	return nil
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
