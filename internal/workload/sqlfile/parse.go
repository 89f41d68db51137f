package sqlfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/sqlsplit"
)

// program is a parsed statement file.
type program struct {
	events []*event
	cum    []int64 // cumulative weights, for picking an event
	stmts  []*stmt // every statement, in file order; index = stats index
	// sources are the distinct column and file value sources.
	sources map[string]*source
}

// event is what one event of the workload runs: one statement, or a group
// of them in order.
type event struct {
	name   string
	weight int64
	stmts  []*stmt
	nvars  int  // named values, drawn once per event
	trx    bool // starts a transaction, so an error is followed by ROLLBACK
}

// stmt is one statement with its placeholders turned into '?'.
type stmt struct {
	idx  int
	name string
	sql  string
	args []arg
	rows bool // expected to return rows (counted as a read)
}

type argKind int

const (
	argUniform argKind = iota
	argZipf
	argInt
	argString
	argSource
	argRef
)

// arg fills one placeholder.
type arg struct {
	kind   argKind
	a, b   int64
	exp    float64 // zipf exponent; 0 means --rand-zipfian-exp
	n      int     // string length
	src    *source
	slot   int // named value: where it is kept within the event; -1 for none
	define bool
}

// source is a list of values read from a column or a file.
type source struct {
	spec   string // "column db.t.c" or "file path"
	table  string // for columns: `db`.`t` quoted
	column string // quoted
	ints   []int64
	strs   []string
	loaded bool
}

func (s *source) n() int {
	if s.ints != nil {
		return len(s.ints)
	}
	return len(s.strs)
}

// setValues stores vals as integers when they all are, else as strings.
func (s *source) setValues(vals []string) {
	ints := make([]int64, 0, len(vals))
	for _, v := range vals {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			ints = nil
			break
		}
		ints = append(ints, n)
	}
	if ints != nil {
		s.ints, s.strs = ints, nil
	} else {
		s.ints, s.strs = nil, vals
	}
	s.loaded = true
}

// parseFile reads and parses the statement file at path.
func parseFile(path, delimiter string) (*program, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--file: %w", err)
	}
	p, err := parse(string(raw), delimiter, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("--file %s: %w", path, err)
	}
	return p, nil
}

// parse parses a statement file's text; dir is where relative paths of
// {{file ...}} placeholders start.
func parse(src, delimiter, dir string) (*program, error) {
	stmts, err := sqlsplit.Split(src, sqlsplit.Options{Delimiter: delimiter, ClientCommands: true, Strict: true})
	if err != nil {
		return nil, err
	}
	if len(stmts) == 0 {
		return nil, fmt.Errorf("holds no statements")
	}
	p := &program{sources: map[string]*source{}}
	var group *event // the current @event group, once one began
	vars := map[string]int{}
	for _, st := range stmts {
		fail := func(format string, args ...any) error {
			return &sqlsplit.SyntaxError{N: st.N, Line: st.Line, Text: sqlsplit.Short(st.Text, 60), Msg: fmt.Sprintf(format, args...)}
		}
		var name string
		var weight int64 = 1
		for _, c := range st.Comments {
			if !strings.HasPrefix(c, "@") {
				continue
			}
			f := strings.Fields(c)
			switch f[0] {
			case "@event":
				group = &event{weight: 1}
				for _, tok := range f[1:] {
					if v, ok := strings.CutPrefix(tok, "weight="); ok {
						w, err := strconv.ParseInt(v, 10, 64)
						if err != nil || w < 1 {
							return nil, fail("@event weight=%s: want a whole number >= 1", v)
						}
						group.weight = w
					} else if group.name == "" {
						group.name = tok
					} else {
						return nil, fail("@event takes a name and weight=N, got %q", tok)
					}
				}
				p.events = append(p.events, group)
				vars = map[string]int{}
			case "@weight":
				if group != nil {
					return nil, fail("@weight inside an @event group: give the group's weight on its line (-- @event NAME weight=N)")
				}
				if len(f) != 2 {
					return nil, fail("@weight takes one number")
				}
				w, err := strconv.ParseInt(f[1], 10, 64)
				if err != nil || w < 1 {
					return nil, fail("@weight %s: want a whole number >= 1", f[1])
				}
				weight = w
			case "@name":
				if len(f) != 2 {
					return nil, fail("@name takes one word")
				}
				name = f[1]
			default:
				return nil, fail("unknown annotation %s (known: @event, @weight, @name)", f[0])
			}
		}
		ev := group
		if ev == nil {
			ev = &event{name: name, weight: weight}
			p.events = append(p.events, ev)
			vars = map[string]int{}
		}
		s, err := parseStatement(st.Text, p, ev, vars)
		if err != nil {
			return nil, fail("%v", err)
		}
		s.idx = len(p.stmts)
		s.name = statementName(st.N, ev, group != nil, name, len(ev.stmts)+1, s.sql)
		ev.stmts = append(ev.stmts, s)
		if isTrxStart(s.sql) {
			ev.trx = true
		}
		p.stmts = append(p.stmts, s)
	}
	var sum int64
	for _, ev := range p.events {
		if len(ev.stmts) == 0 {
			return nil, fmt.Errorf("@event %s has no statements", ev.name)
		}
		sum += ev.weight
		p.cum = append(p.cum, sum)
	}
	for _, src := range p.sources {
		if strings.HasPrefix(src.spec, "file ") {
			if err := src.readFile(dir); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// statementName is how a statement is shown in the table per statement:
// its number in the file, its group and name when it has them, its text.
func statementName(n int, ev *event, grouped bool, name string, k int, sql string) string {
	prefix := "#" + strconv.Itoa(n) + " "
	short := sqlsplit.Short(sql, 70)
	switch {
	case grouped && ev.name != "" && name != "":
		return prefix + ev.name + "." + name + ": " + short
	case grouped && ev.name != "":
		return prefix + ev.name + "." + strconv.Itoa(k) + ": " + short
	case name != "":
		return prefix + name + ": " + short
	}
	return prefix + short
}

func isTrxStart(sql string) bool {
	f := strings.Fields(strings.ToUpper(sql))
	return len(f) > 0 && (f[0] == "BEGIN" || len(f) > 1 && f[0] == "START" && f[1] == "TRANSACTION")
}

// returnsRows guesses from the first word whether a statement returns rows.
func returnsRows(sql string) bool {
	f := strings.Fields(strings.ToUpper(strings.TrimLeft(sql, "( \t\n")))
	if len(f) == 0 {
		return false
	}
	switch f[0] {
	case "SELECT", "SHOW", "WITH", "DESC", "DESCRIBE", "EXPLAIN", "VALUES", "TABLE", "CALL", "CHECKSUM", "ANALYZE":
		return true
	}
	return false
}

// parseStatement turns the {{...}} placeholders of text into '?' and their
// generators. Placeholders stand for whole values: inside quotes they are an
// error, as is a '?' of the statement's own.
func parseStatement(text string, p *program, ev *event, vars map[string]int) (*stmt, error) {
	s := &stmt{}
	var b strings.Builder
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(text) {
				if text[j] == '\\' && c != '`' {
					j += 2
					continue
				}
				if text[j] == c {
					if j+1 < len(text) && text[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			if j >= len(text) {
				j = len(text) - 1
			}
			q := text[i : j+1]
			if strings.Contains(q, "{{") {
				return nil, fmt.Errorf("placeholder inside a quoted string: take the quotes away, values are quoted as needed")
			}
			b.WriteString(q)
			i = j + 1
			continue
		case c == '-' && strings.HasPrefix(text[i:], "--") && (i+2 == len(text) || text[i+2] == ' ' || text[i+2] == '\t' || text[i+2] == '\n') || c == '#':
			end := strings.IndexByte(text[i:], '\n')
			if end < 0 {
				end = len(text) - i
			}
			b.WriteString(text[i : i+end])
			i += end
			continue
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				end = len(text) - i - 4
			}
			b.WriteString(text[i : i+end+4])
			i += end + 4
			continue
		case c == '?':
			return nil, fmt.Errorf("'?' parameter markers are not supported: use a {{...}} placeholder")
		case c == '{' && strings.HasPrefix(text[i:], "{{"):
			end := strings.Index(text[i+2:], "}}")
			if end < 0 {
				return nil, fmt.Errorf("unterminated placeholder {{")
			}
			a, err := parseArg(strings.TrimSpace(text[i+2:i+2+end]), p, ev, vars)
			if err != nil {
				return nil, err
			}
			s.args = append(s.args, a)
			b.WriteByte('?')
			i += end + 4
			continue
		}
		b.WriteByte(c)
		i++
	}
	s.sql = b.String()
	s.rows = returnsRows(s.sql)
	return s, nil
}

var generators = "uniform A B, zipf A B [EXPONENT], int A B, string LENGTH, column [DB.]TABLE.COLUMN, file PATH"

func parseArg(expr string, p *program, ev *event, vars map[string]int) (arg, error) {
	a := arg{slot: -1}
	name := ""
	if n, rest, ok := strings.Cut(expr, "="); ok && isIdent(strings.TrimSpace(n)) {
		name, expr = strings.TrimSpace(n), strings.TrimSpace(rest)
	}
	f := strings.Fields(expr)
	if len(f) == 0 {
		return a, fmt.Errorf("empty placeholder {{}}; generators: %s", generators)
	}
	if name == "" && len(f) == 1 && isIdent(f[0]) && !isGenerator(f[0]) {
		slot, ok := vars[f[0]]
		if !ok {
			return a, fmt.Errorf("{{%s}} names no value drawn earlier in this event (define it with {{%s = uniform 1 100}})", f[0], f[0])
		}
		return arg{kind: argRef, slot: slot}, nil
	}
	ints := func(k int) ([]int64, error) {
		if len(f) < k+1 {
			return nil, fmt.Errorf("{{%s}}: %s takes %d numbers", expr, f[0], k)
		}
		out := make([]int64, k)
		for i := range out {
			n, err := strconv.ParseInt(f[i+1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("{{%s}}: %q is not a whole number", expr, f[i+1])
			}
			out[i] = n
		}
		return out, nil
	}
	switch f[0] {
	case "uniform", "zipf", "int":
		if len(f) > 3 && f[0] != "zipf" || len(f) > 4 {
			return a, fmt.Errorf("{{%s}}: too many words", expr)
		}
		n, err := ints(2)
		if err != nil {
			return a, err
		}
		if n[1] < n[0] {
			return a, fmt.Errorf("{{%s}}: the range is empty (%d > %d)", expr, n[0], n[1])
		}
		a.a, a.b = n[0], n[1]
		a.kind = map[string]argKind{"uniform": argUniform, "zipf": argZipf, "int": argInt}[f[0]]
		if len(f) == 4 {
			e, err := strconv.ParseFloat(f[3], 64)
			if err != nil || !(e > 0) {
				return a, fmt.Errorf("{{%s}}: the exponent must be a number > 0", expr)
			}
			a.exp = e
		}
	case "string":
		if len(f) != 2 {
			return a, fmt.Errorf("{{%s}}: string takes a length", expr)
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 || n > 1<<20 {
			return a, fmt.Errorf("{{%s}}: the length must be between 0 and 1048576", expr)
		}
		a.kind, a.n = argString, n
	case "column":
		if len(f) != 2 {
			return a, fmt.Errorf("{{%s}}: column takes [DB.]TABLE.COLUMN", expr)
		}
		parts := strings.Split(f[1], ".")
		if len(parts) < 2 || len(parts) > 3 {
			return a, fmt.Errorf("{{%s}}: column takes [DB.]TABLE.COLUMN", expr)
		}
		for _, part := range parts {
			if part == "" || strings.ContainsAny(part, "`") {
				return a, fmt.Errorf("{{%s}}: %q is not a name", expr, part)
			}
		}
		spec := "column " + f[1]
		src := p.sources[spec]
		if src == nil {
			q := make([]string, len(parts))
			for i, part := range parts {
				q[i] = "`" + part + "`"
			}
			src = &source{spec: spec, table: strings.Join(q[:len(q)-1], "."), column: q[len(q)-1]}
			p.sources[spec] = src
		}
		a.kind, a.src = argSource, src
	case "file":
		if len(f) < 2 {
			return a, fmt.Errorf("{{%s}}: file takes a path", expr)
		}
		path := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(expr), "file"))
		spec := "file " + path
		src := p.sources[spec]
		if src == nil {
			src = &source{spec: spec}
			p.sources[spec] = src
		}
		a.kind, a.src = argSource, src
	default:
		return a, fmt.Errorf("{{%s}}: unknown generator %q; generators: %s", expr, f[0], generators)
	}
	if name != "" {
		if _, dup := vars[name]; dup {
			return a, fmt.Errorf("{{%s = ...}}: %s is drawn twice in this event", name, name)
		}
		a.slot, a.define = ev.nvars, true
		vars[name] = ev.nvars
		ev.nvars++
	}
	return a, nil
}

func isGenerator(w string) bool {
	switch w {
	case "uniform", "zipf", "int", "string", "column", "file":
		return true
	}
	return false
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// maxValueFile bounds a {{file ...}} source, which is held in memory.
const maxValueFile = 256 << 20

// readFile loads a file source: one value per line, empty lines skipped.
func (s *source) readFile(dir string) error {
	name := strings.TrimPrefix(s.spec, "file ")
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	// A device or pipe (/dev/zero, /dev/stdin) would never end: only a
	// regular file of a bounded size is read.
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("{{file %s}}: %w", name, err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("{{file %s}}: not a regular file", name)
	case fi.Size() > maxValueFile:
		return fmt.Errorf("{{file %s}}: %d bytes, more than the %d a value file may hold", name, fi.Size(), maxValueFile)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("{{file %s}}: %w", name, err)
	}
	var vals []string
	for _, line := range strings.Split(string(raw), "\n") {
		if v := strings.TrimSpace(line); v != "" {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return fmt.Errorf("{{file %s}}: the file holds no values", name)
	}
	s.setValues(vals)
	return nil
}
