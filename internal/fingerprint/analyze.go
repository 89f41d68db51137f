package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // literal values for the parser
)

// Info is what is known of a statement: its fingerprint and what it does.
// Statements of one fingerprint share one Info; treat it as read-only.
type Info struct {
	// Fingerprint is the normalised statement; Digest a short hash of it.
	Fingerprint string
	Digest      string
	// Parsed is false when the parser could not read the statement and the
	// lexer made the fingerprint.
	Parsed bool
	// Verb is the statement's kind in capitals: SELECT, INSERT, SET, ...
	Verb string
	// ReadOnly statements cannot change data or other sessions: SELECT
	// without locking clauses or INTO, SHOW, DESCRIBE, EXPLAIN, SET of
	// session variables, USE. Write says why a statement is not.
	ReadOnly bool
	Write    string
	// Session is true for statements that change session state (SET, USE):
	// they are repeated on a new connection.
	Session bool
	// Ordered is true when ORDER BY defines the order of the result; Limit
	// when the result is cut by LIMIT. OrderKeys name the ORDER BY items
	// as result columns: a lowercased column name, or "#N" for position N;
	// "" where an item is an expression.
	Ordered   bool
	Limit     bool
	OrderKeys []string
	// NonDeterministic says why the statement's result cannot be expected to
	// repeat ("NOW()", "LIMIT without ORDER BY", ...), or is "".
	NonDeterministic string
}

// Analyzer fingerprints and classifies statements, caching by the lexer's
// fingerprint so that the parser reads each kind of statement once. The
// lexer reads executable comments and keeps optimizer hints, so that two
// statements share an entry only when they differ in literals, spacing,
// case or plain comments. It is not safe for concurrent use.
type Analyzer struct {
	p     *parser.Parser
	cache map[string]*Info
	sc    scratch
	// Parsed and Fallback count the distinct statements (cache misses) the
	// parser read and those it could not.
	Parsed, Fallback int64
}

// maxCache bounds the cache; past it the cache starts again, so memory
// depends on the variety of statements, never on their number.
const maxCache = 50000

// NewAnalyzer returns an Analyzer.
func NewAnalyzer() *Analyzer {
	return &Analyzer{p: parser.New(), cache: map[string]*Info{}}
}

// Info returns what is known of sql: Analyze without the literals, and
// without an allocation when a statement of its fingerprint was seen.
func (a *Analyzer) Info(sql string) *Info {
	if fp := a.sc.fingerprint(sql, nil); len(fp) > 0 {
		if info, ok := a.cache[string(fp)]; ok {
			return info
		}
	}
	info, _ := a.Analyze(sql)
	return info
}

// Analyze returns what is known of sql and its literals.
func (a *Analyzer) Analyze(sql string) (*Info, Lexed) {
	lx := Lex(sql)
	if lx.Fingerprint == "" {
		// Nothing but plain comments: no key tells two of these apart, so
		// each is read on its own (the parser finds no statement in it).
		a.Fallback++
		info := fallbackInfo(lx, false)
		info.Fingerprint = strings.Join(strings.Fields(sql), " ")
		info.Digest = digest(info.Fingerprint)
		return info, lx
	}
	if info, ok := a.cache[lx.Fingerprint]; ok {
		return info, lx
	}
	info := a.parse(sql, lx)
	if len(a.cache) >= maxCache {
		clear(a.cache)
	}
	a.cache[lx.Fingerprint] = info
	return info, lx
}

func (a *Analyzer) parse(sql string, lx Lexed) (info *Info) {
	stmts, err := a.safeParse(sql)
	if err != nil || len(stmts) != 1 {
		a.Fallback++
		return fallbackInfo(lx, err == nil && len(stmts) > 1)
	}
	a.Parsed++
	fp := parser.Normalize(sql, "ON")
	info = &Info{Fingerprint: fp, Digest: digest(fp), Parsed: true}
	classify(stmts[0], info)
	return info
}

func (a *Analyzer) safeParse(sql string) (stmts []ast.StmtNode, err error) {
	defer func() {
		if r := recover(); r != nil {
			// A parser bug must not end a capture: the lexer takes over.
			a.p = parser.New()
			stmts, err = nil, fmt.Errorf("parser panic: %v", r)
		}
	}()
	stmts, _, err = a.p.Parse(sql, "", "")
	return stmts, err
}

func digest(fp string) string {
	h := sha256.Sum256([]byte(fp))
	return hex.EncodeToString(h[:8])
}

// fallbackInfo is what the lexer can say: never read-only, since only the
// parser can show that a statement cannot write.
func fallbackInfo(lx Lexed, multi bool) *Info {
	sh := lx.shape()
	info := &Info{
		Fingerprint:      lx.Fingerprint,
		Digest:           digest(lx.Fingerprint),
		Verb:             strings.ToUpper(sh.verb),
		Write:            "not parsed (may write)",
		Ordered:          sh.ordered,
		Limit:            sh.limit,
		NonDeterministic: sh.nondet,
	}
	if multi {
		info.Write = "several statements in one"
	}
	if info.NonDeterministic == "" && sh.limit && !sh.ordered {
		info.NonDeterministic = "LIMIT without ORDER BY"
	}
	return info
}

// classify fills what stmt does into info.
func classify(stmt ast.StmtNode, info *Info) {
	info.Verb = verbOf(stmt)
	switch s := stmt.(type) {
	case *ast.SelectStmt:
		info.ReadOnly, info.Write = selectReadOnly(s)
		info.Ordered, info.Limit = s.OrderBy != nil, s.Limit != nil
		if s.OrderBy != nil {
			info.OrderKeys = orderKeys(s.OrderBy)
		}
	case *ast.SetOprStmt:
		info.ReadOnly = true
		if s.SelectList != nil {
			for _, sel := range s.SelectList.Selects {
				if ss, ok := sel.(*ast.SelectStmt); ok {
					if ro, why := selectReadOnly(ss); !ro {
						info.ReadOnly, info.Write = false, why
					}
				}
			}
		}
		info.Ordered, info.Limit = s.OrderBy != nil, s.Limit != nil
		if s.OrderBy != nil {
			info.OrderKeys = orderKeys(s.OrderBy)
		}
	case *ast.ShowStmt:
		info.ReadOnly = true
		if !stableShow[s.Tp] {
			info.NonDeterministic = "SHOW of server state"
		}
	case *ast.ExplainStmt:
		info.ReadOnly = true
		if sh, ok := s.Stmt.(*ast.ShowStmt); ok {
			info.Verb = "DESCRIBE"
			if !stableShow[sh.Tp] {
				info.NonDeterministic = "SHOW of server state"
			}
			break
		}
		info.NonDeterministic = "EXPLAIN: each server plans its own way"
		if s.Analyze {
			inner := &Info{}
			classify(s.Stmt, inner)
			if !inner.ReadOnly {
				info.ReadOnly, info.Write = false, "EXPLAIN ANALYZE runs "+inner.Verb
			}
		}
	case *ast.UseStmt:
		info.ReadOnly, info.Session = true, true
	case *ast.SetStmt:
		info.ReadOnly, info.Session = true, true
		for _, v := range s.Variables {
			if v.IsGlobal {
				info.ReadOnly, info.Session, info.Write = false, false, "SET GLOBAL"
				break
			}
		}
	default:
		info.Write = info.Verb
	}
	if info.ReadOnly {
		v := &detVisitor{}
		stmt.Accept(v)
		if v.write != "" {
			info.ReadOnly, info.Write = false, v.write
		}
		if info.NonDeterministic == "" {
			info.NonDeterministic = v.nondet
		}
	}
}

func selectReadOnly(s *ast.SelectStmt) (bool, string) {
	if s.LockInfo != nil && s.LockInfo.LockType != ast.SelectLockNone {
		return false, "SELECT " + strings.ToUpper(s.LockInfo.LockType.String())
	}
	if s.SelectIntoOpt != nil {
		return false, "SELECT ... INTO"
	}
	return true, ""
}

func orderKeys(ob *ast.OrderByClause) []string {
	keys := make([]string, len(ob.Items))
	for i, it := range ob.Items {
		switch e := it.Expr.(type) {
		case *ast.ColumnNameExpr:
			keys[i] = e.Name.Name.L
		case *ast.PositionExpr:
			keys[i] = fmt.Sprintf("#%d", e.N)
		}
	}
	return keys
}

// verbOf names a statement's kind: *ast.InsertStmt is INSERT.
func verbOf(stmt ast.StmtNode) string {
	name := fmt.Sprintf("%T", stmt)
	name = strings.TrimPrefix(name, "*ast.")
	name = strings.TrimSuffix(name, "Stmt")
	if name == "SetOpr" {
		return "SELECT"
	}
	// CreateUser is CREATE USER.
	var b strings.Builder
	for i, r := range name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

// stableShow are SHOW statements whose output is the schema, the same on two
// servers that hold the same schema; the others show server state.
var stableShow = map[ast.ShowStmtType]bool{
	ast.ShowTables:          true,
	ast.ShowColumns:         true,
	ast.ShowCreateTable:     true,
	ast.ShowIndex:           true,
	ast.ShowCreateView:      true,
	ast.ShowCreateDatabase:  true,
	ast.ShowCreateProcedure: true,
}

// nondetFuncs are functions whose results cannot repeat from one run (or
// one server) to the next; nondetBare those also written without
// parentheses.
var nondetFuncs = map[string]bool{
	"now": true, "sysdate": true, "current_timestamp": true, "curdate": true, "current_date": true,
	"curtime": true, "current_time": true, "localtime": true, "localtimestamp": true,
	"utc_date": true, "utc_time": true, "utc_timestamp": true, "unix_timestamp": true,
	"rand": true, "uuid": true, "uuid_short": true, "sys_guid": true, "connection_id": true,
	"last_insert_id": true, "found_rows": true, "row_count": true, "version": true,
	"benchmark": true, "random_bytes": true,
}

var nondetBare = map[string]bool{
	"current_timestamp": true, "current_date": true, "current_time": true,
	"localtime": true, "localtimestamp": true, "utc_date": true, "utc_time": true, "utc_timestamp": true,
}

// writeFuncs change state outside the statement: locks and sequences.
var writeFuncs = map[string]bool{
	"get_lock": true, "release_lock": true, "release_all_locks": true,
	"nextval": true, "setval": true, "master_pos_wait": true,
}

// serverVars are system variables that differ between two servers by
// nature: a query reading them gives different results on each.
var serverVars = map[string]bool{
	"version": true, "version_comment": true, "version_compile_os": true, "version_compile_machine": true,
	"hostname": true, "port": true, "socket": true, "server_id": true, "server_uuid": true,
	"pid_file": true, "datadir": true, "basedir": true, "tmpdir": true, "log_error": true,
	"general_log_file": true, "slow_query_log_file": true, "timestamp": true, "pseudo_thread_id": true,
	"identity": true, "last_insert_id": true, "warning_count": true, "error_count": true,
}

// detVisitor walks a statement for non-deterministic parts and functions
// that write.
type detVisitor struct {
	nondet string
	write  string
}

func (v *detVisitor) Enter(n ast.Node) (ast.Node, bool) {
	switch e := n.(type) {
	case *ast.FuncCallExpr:
		name := e.FnName.L
		if writeFuncs[name] && v.write == "" {
			v.write = strings.ToUpper(name) + "()"
		}
		if nondetFuncs[name] && v.nondet == "" {
			if name != "unix_timestamp" || len(e.Args) == 0 {
				v.nondet = strings.ToUpper(name) + "()"
			}
		}
	case *ast.VariableExpr:
		if e.IsSystem && serverVars[strings.ToLower(e.Name)] && v.nondet == "" {
			v.nondet = "@@" + strings.ToLower(e.Name) + " differs between servers"
		}
	case *ast.AggregateFuncExpr:
		if strings.EqualFold(e.F, "group_concat") && e.Order == nil && v.nondet == "" {
			v.nondet = "GROUP_CONCAT without ORDER BY"
		}
	case *ast.SelectStmt:
		if e.Limit != nil && e.OrderBy == nil && v.nondet == "" {
			v.nondet = "LIMIT without ORDER BY"
		}
	case *ast.SetOprStmt:
		if e.Limit != nil && e.OrderBy == nil && v.nondet == "" {
			v.nondet = "LIMIT without ORDER BY"
		}
	}
	return n, false
}

func (v *detVisitor) Leave(n ast.Node) (ast.Node, bool) { return n, true }
