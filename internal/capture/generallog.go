package capture

import (
	"context"
	"io"
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
// MySQL's spellings).
var generalCommands = map[string]bool{
	"Connect": true, "Query": true, "Init DB": true, "Prepare": true, "Execute": true,
	"Close stmt": true, "Reset stmt": true, "Quit": true, "Field List": true,
	"Statistics": true, "Ping": true, "Change user": true, "Long Data": true, "Fetch": true,
	"Shutdown": true, "Refresh": true, "Processlist": true, "Kill": true, "Debug": true,
	"Set option": true, "Binlog Dump": true, "Daemon": true, "Register Slave": true,
	"Connect Out": true, "Sleep": true, "Create DB": true, "Drop DB": true, "Time": true,
	"Delayed insert": true, "Table Dump": true, "Error": true, "Bulk_execute": true,
	"Binlog Dump GTID": true, "Reset Connection": true, "Clone": true,
}

// parseGeneralLine reads "TIME\tID COMMAND\tARG" (MariaDB prints the time
// only when it changes, else two tabs; MySQL prints ISO times).
func parseGeneralLine(line string) (generalLine, bool) {
	var g generalLine
	rest := line
	switch {
	case strings.HasPrefix(rest, "\t\t"):
		rest = rest[2:]
	default:
		tab := strings.IndexByte(rest, '\t')
		if tab < 0 {
			return g, false
		}
		t := rest[:tab]
		if ts, ok := parseISOTime(t); ok {
			g.ts = ts
		} else if ts, ok := parseMariaTime(t); ok {
			g.ts = ts
		} else {
			return g, false
		}
		g.hasTime = true
		rest = rest[tab+1:]
	}
	rest = strings.TrimLeft(rest, " \t")
	sp := strings.IndexByte(rest, ' ')
	if sp <= 0 {
		return g, false
	}
	if _, err := strconv.ParseUint(rest[:sp], 10, 64); err != nil {
		return g, false
	}
	g.thread = rest[:sp]
	rest = rest[sp+1:]
	cmd, arg, ok := strings.Cut(rest, "\t")
	if !ok {
		cmd, arg = strings.TrimRight(rest, " "), ""
	}
	if !generalCommands[cmd] {
		return g, false
	}
	g.command, g.arg = cmd, arg
	return g, true
}

// generalState follows a general log's sessions: their default database.
type generalState struct {
	c *Capturer
	// held are SQL-level EXECUTE statements waiting for the Execute line
	// that MariaDB logs after them with the values filled in.
	held map[string]*Record
	db   map[string]string // open sessions' default databases
	cur  *generalLine      // the entry being read (its argument may go on)
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
		line := string(b)
		if isServerHeader(b) {
			if err := st.flush(); err != nil {
				return err
			}
			continue
		}
		g, ok := parseGeneralLine(line)
		if !ok && looksLikeGeneralEntry(line) {
			// A time and a tab start an entry, never a statement's next
			// line: this one is garbled.
			if err := st.flush(); err != nil {
				return err
			}
			c.bad(lr.line, "unreadable general log entry (want TIME<tab>ID COMMAND<tab>ARGUMENT)")
			continue
		}
		if !ok {
			if st.cur != nil {
				st.buf.WriteByte('\n')
				st.buf.WriteString(line)
				continue
			}
			if strings.TrimSpace(line) != "" {
				if looksLikeGeneralEntry(line) {
					c.bad(lr.line, "unreadable general log entry (want TIME<tab>ID COMMAND<tab>ARGUMENT)")
				} else {
					c.bad(lr.line, "not part of a general log entry")
				}
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
		st.cur = &g
		st.buf.Reset()
		st.buf.WriteString(g.arg)
	}
}

// looksLikeGeneralEntry reports a line that starts like an entry (a time
// and a tab) but is not one: garbled rather than a statement's next line.
func looksLikeGeneralEntry(line string) bool {
	tab := strings.IndexByte(line, '\t')
	if tab <= 0 {
		return false
	}
	_, ok := parseMariaTime(line[:tab])
	_, ok2 := parseISOTime(line[:tab])
	return ok || ok2
}

// flush hands on the entry being read.
func (st *generalState) flush() error {
	if st.cur == nil {
		return nil
	}
	g := st.cur
	st.cur = nil
	return st.entry(g.ts, g.thread, g.command, st.buf.String())
}

// entry turns one general log entry into records.
func (st *generalState) entry(ts int64, thread, command, arg string) error {
	c := st.c
	if h := st.held[thread]; h != nil {
		delete(st.held, thread)
		if command == "Execute" {
			// The statement EXECUTE ran, with its values: keep that text.
			h.SQL = strings.TrimSpace(arg)
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
		c.Stats.Ignored++
		return nil
	case "Init DB":
		st.db[thread] = strings.TrimSpace(arg)
		c.Stats.Ignored++
		return nil
	case "Quit":
		delete(st.db, thread)
		return c.add(&Record{Session: thread, TS: ts, Kind: KindQuit})
	case "Query", "Execute":
		sql := strings.TrimSpace(arg)
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
		c.Stats.Ignored++
		return nil
	}
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
	for t, h := range st.held {
		if thread == "" || t == thread {
			delete(st.held, t)
			if err := st.c.add(h); err != nil {
				return err
			}
		}
	}
	return nil
}
