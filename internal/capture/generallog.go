package capture

import (
	"context"
	"io"
	"sort"
	"strconv"
	"strings"
)

// generalLine is one entry line of a general log.
type generalLine struct {
	ts      int64 // µs since the epoch; 0 when the line has no time
	hasTime bool
	thread  string
	command string
	arg     string
}

// generalCommands are the commands a general log names (MariaDB's and
// MySQL's spellings), longest first where one begins another; MySQL 5.0
// cut them to 11 characters ("Delayed ins").
var generalCommands = []string{
	"Binlog Dump GTID", "Binlog Dump", "Bulk_execute", "Change user", "Close stmt", "Clone",
	"Connect Out", "Connect", "Create DB", "Daemon", "Debug", "Delayed insert", "Delayed ins",
	"Drop DB", "Error", "Execute", "Fetch", "Field List", "Init DB", "Kill", "Long Data",
	"Ping", "Prepare", "Processlist", "Query", "Quit", "Refresh", "Register Slave", "Register Sl",
	"Reset Connection", "Reset Conne", "Reset stmt", "Set option", "Shutdown", "Sleep",
	"Statistics", "Table Dump", "Time",
}

// parseGeneralLine reads one entry line of a general log, of any server
// since MySQL 5.0:
//
//	TIME\tID COMMAND\tARGUMENT        MySQL 5.1 on, MariaDB (TIME only when it changes, else "\t\t")
//	TIME\tID COMMAND     ARGUMENT     MySQL 5.0 (the command padded to 11, then a space)
//
// where TIME is "YYMMDD HH:MM:SS" or, from MySQL 5.7, an ISO time on every
// line; a log whose tabs became spaces reads the same.
func parseGeneralLine(line string) (generalLine, bool) {
	var g generalLine
	rest := line
	if n := len(rest); n > 0 && rest[0] != '\t' && rest[0] != ' ' {
		// A time first.
		t, after, ok := cutGeneralTime(rest)
		if !ok {
			return g, false
		}
		g.ts, g.hasTime = t, true
		rest = after
		if len(rest) == 0 || (rest[0] != '\t' && rest[0] != ' ') {
			return g, false
		}
	}
	i := 0
	for i < len(rest) && (rest[i] == ' ' || rest[i] == '\t') {
		i++
	}
	j := i
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	if j == i || j-i > 20 || j >= len(rest) || rest[j] != ' ' {
		return g, false
	}
	g.thread = rest[i:j]
	rest = rest[j+1:]
	for len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	cmd := matchCommand(rest)
	if cmd == "" {
		return g, false
	}
	g.command = cmd
	g.arg = strings.TrimLeft(rest[len(cmd):], " \t")
	return g, true
}

// matchCommand returns the command that rest starts with, followed by the
// end of the line, a tab or a space.
func matchCommand(rest string) string {
	if rest == "" || rest[0] < 'B' || rest[0] > 'T' {
		return ""
	}
	for _, c := range generalCommands {
		if len(rest) >= len(c) && rest[0] == c[0] && rest[:len(c)] == c &&
			(len(rest) == len(c) || rest[len(c)] == '\t' || rest[len(c)] == ' ') {
			return c
		}
	}
	return ""
}

// cutGeneralTime reads the time at the start of a general log line.
func cutGeneralTime(s string) (int64, string, bool) {
	if len(s) >= 20 && s[4] == '-' && s[10] == 'T' {
		end := strings.IndexAny(s, " \t")
		if end < 0 {
			return 0, "", false
		}
		ts, ok := parseISOTime(s[:end])
		return ts, s[end:], ok
	}
	// "YYMMDD HH:MM:SS" or "YYMMDD  H:MM:SS".
	if len(s) < 15 || s[6] != ' ' {
		return 0, "", false
	}
	end := 7
	if s[7] == ' ' {
		end = 8
	}
	end += 7
	if end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	if end > len(s) {
		return 0, "", false
	}
	ts, ok := parseMariaTime(s[:end])
	return ts, s[end:], ok
}

// generalState follows a general log's sessions: their default database.
type generalState struct {
	c *Capturer
	// held are SQL-level EXECUTE statements waiting for the Execute line
	// that MariaDB logs after them with the values filled in.
	held map[string]*Record
	db   map[string]string // open sessions' default databases
	cur  *generalLine      // the entry being read (its argument may go on)
	g    generalLine       // where cur points
	more bool              // the argument goes on over lines, in buf
	buf  strings.Builder
	ts   int64
}

// readGeneral reads a general log file. A line that does not start an
// entry continues the statement of the entry before it.
func (c *Capturer) readGeneral(ctx context.Context, r io.Reader) error {
	st := &generalState{c: c, db: map[string]string{}, held: map[string]*Record{}}
	lr := newLineReader(r)
	for {
		if lr.line%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		b, err := lr.next()
		if err == io.EOF {
			if err := st.flush(); err != nil {
				return err
			}
			return st.release("")
		}
		if err != nil {
			return err
		}
		if isServerHeader(b) {
			c.src().Headers++
			if err := st.flush(); err != nil {
				return err
			}
			continue
		}
		line := string(b)
		g, ok := parseGeneralLine(line)
		if !ok {
			switch {
			case looksLikeGeneralEntry(line):
				// A time and a tab start an entry, never a statement's
				// next line: this one is garbled.
				if err := st.flush(); err != nil {
					return err
				}
				c.skip(lr.line, "unreadable general log entry", "(want TIME<tab>ID COMMAND<tab>ARGUMENT)")
			case st.cur != nil:
				if !st.more {
					st.buf.Reset()
					st.buf.WriteString(st.g.arg)
					st.more = true
				}
				st.buf.WriteByte('\n')
				st.buf.WriteString(line)
			case strings.TrimSpace(line) != "":
				c.skip(lr.line, "line not part of a general log entry", "")
			}
			continue
		}
		if err := st.flush(); err != nil {
			return err
		}
		if g.hasTime {
			st.ts = g.ts
		} else {
			g.ts = st.ts
		}
		st.g = g
		st.cur = &st.g
		st.more = false
	}
}

// looksLikeGeneralEntry reports a line that starts like an entry (a time
// and a tab or space) but is not one: garbled rather than a statement's
// next line.
func looksLikeGeneralEntry(line string) bool {
	_, rest, ok := cutGeneralTime(line)
	return ok && rest != "" && (rest[0] == '\t' || rest[0] == ' ')
}

// flush hands on the entry being read.
func (st *generalState) flush() error {
	if st.cur == nil {
		return nil
	}
	g := st.cur
	st.cur = nil
	arg := g.arg
	if st.more {
		arg = st.buf.String()
	}
	return st.entry(g.ts, g.thread, g.command, arg)
}

// entry turns one general log entry into records.
func (st *generalState) entry(ts int64, thread, command, arg string) error {
	c := st.c
	if h := st.held[thread]; h != nil {
		delete(st.held, thread)
		if command == "Execute" {
			// The statement EXECUTE ran, with its values: keep that text.
			// The EXECUTE entry counts as one that is not a statement.
			h.SQL = strings.TrimSpace(arg)
			c.other()
			return c.add(h)
		}
		if err := c.add(h); err != nil {
			return err
		}
	}
	switch command {
	case "Connect":
		// "user@host on db using TCP/IP": only the database is kept; the
		// rest (who connected, from where) stays out of the capture.
		db := ""
		if _, after, ok := strings.Cut(arg, " on "); ok {
			db, _, _ = strings.Cut(after, " using ")
			db = strings.TrimSpace(db)
		}
		st.db[thread] = db
		c.other()
		return nil
	case "Init DB":
		st.db[thread] = strings.TrimSpace(arg)
		c.other()
		return nil
	case "Quit":
		delete(st.db, thread)
		return c.add(&Record{Session: thread, TS: ts, Kind: KindQuit})
	case "Query", "Execute":
		sql := strings.TrimSpace(arg)
		if command == "Execute" {
			// MySQL 5.0 wrote the statement's id first: "[1] SELECT 1".
			sql = cutStmtID(sql)
		}
		if sql == "" {
			return nil
		}
		if db, ok := useDB(sql); ok {
			st.db[thread] = db
		}
		r := &Record{Session: thread, TS: ts, DB: st.db[thread], SQL: sql}
		if command == "Query" && len(sql) > 8 && strings.EqualFold(sql[:8], "execute ") {
			st.held[thread] = r
			return nil
		}
		return c.add(r)
	default:
		// Prepare (its Execute lines carry the values), Close stmt,
		// Ping, Field List, ...
		c.other()
		return nil
	}
}

// cutStmtID drops a leading "[N] " statement id.
func cutStmtID(s string) string {
	if len(s) < 4 || s[0] != '[' {
		return s
	}
	end := strings.IndexByte(s, ']')
	if end < 2 {
		return s
	}
	for _, c := range s[1:end] {
		if c < '0' || c > '9' {
			return s
		}
	}
	return strings.TrimLeft(s[end+1:], " ")
}

// useDB reads "USE db".
func useDB(sql string) (string, bool) {
	if len(sql) < 5 || !strings.EqualFold(sql[:4], "use ") {
		return "", false
	}
	db := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(sql[4:]), ";"))
	if strings.ContainsAny(db, " \t\n") {
		return "", false
	}
	return strings.Trim(db, "`"), true
}

// readGeneralTable reads mysql.general_log rows.
func (c *Capturer) readGeneralTable(ctx context.Context, t TableReader) error {
	st := &generalState{c: c, db: map[string]string{}, held: map[string]*Record{}}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ts, thread, cmd, arg, err := t.Next()
		if err == io.EOF {
			return st.release("")
		}
		if err != nil {
			return err
		}
		if err := st.entry(ts, strconv.FormatInt(thread, 10), cmd, arg); err != nil {
			return err
		}
	}
}

// release hands on the held EXECUTE statements (of thread, or all for "").
func (st *generalState) release(thread string) error {
	// In the order of the sessions' names, so that a capture is the same
	// every time.
	threads := make([]string, 0, len(st.held))
	for t := range st.held {
		if thread == "" || t == thread {
			threads = append(threads, t)
		}
	}
	sort.Strings(threads)
	for _, t := range threads {
		h := st.held[t]
		delete(st.held, t)
		if err := st.c.add(h); err != nil {
			return err
		}
	}
	return nil
}
