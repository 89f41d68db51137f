package capture

import (
	"bytes"
	"context"
	"io"
	"math"
	"strconv"
	"strings"
)

// slowEntry is one slow log entry being read.
type slowEntry struct {
	line     int64 // where it starts
	session  string
	db       string
	timeUS   int64 // from "# Time:" when it has microseconds
	startUS  int64 // from MySQL's "Start:" (log_slow_extra)
	setTS    int64 // from SET timestamp=
	queryUS  int64
	hasQuery bool
	hasTime  bool
	hasUser  bool
	sent     int64
	examined int64
	hasSent  bool
	hasExam  bool
	errno    int
	internal bool   // TiDB's "# Is_internal: true": the server's own statement
	admin    string // the "# administrator command:" it holds
	hasAdmin bool
	uses     int    // "use db;" lines before the statement
	useLine  []byte // the last of them, as written
	hasSetTS bool   // a SET timestamp line was read: the statement follows
	inBody   bool
	body     []byte // the statement's lines
}

// slowKey is the kind of a "# " line of a slow log.
type slowKey uint8

const (
	keyOther  slowKey = iota // another header line ("# Bytes_sent: ...", "# explain: ...", "#")
	keyTime                  // # Time:
	keyUser                  // # User@Host:
	keyQuery                 // # Query_time:
	keyThread                // # Thread_id: or # Schema: (Percona's and MariaDB's line after User@Host)
	keyAdmin                 // # administrator command:
)

// slowKeys are the header lines slowKeyOf tells apart, by how they begin.
var slowKeys = [...]struct {
	prefix string
	key    slowKey
}{
	{"Time:", keyTime},
	{"Thread_id:", keyThread},
	{"User@Host:", keyUser},
	{"Query_time:", keyQuery},
	{"Schema:", keyThread},
	{"administrator command:", keyAdmin},
}

// slowKeyOf tells what a line that starts with "#" is.
func slowKeyOf(line []byte) slowKey {
	if len(line) < 3 || line[1] != ' ' {
		return keyOther
	}
	s := line[2:]
	for _, k := range slowKeys {
		if len(s) >= len(k.prefix) && string(s[:len(k.prefix)]) == k.prefix {
			return k.key
		}
	}
	return keyOther
}

// readSlow reads a slow log: MySQL's from 5.1 to 8.4, Percona Server's and
// MariaDB's, with or without their optional lines (long_query_time=0 logs
// every statement). An entry starts at "# Time:", "# User@Host:" or
// "# Query_time:", whichever comes first: MySQL leaves "# Time:" out when
// the second has not changed, and some tools write no "# User@Host:".
func (c *Capturer) readSlow(ctx context.Context, r io.Reader) error {
	lr := newLineReader(r)
	e := &slowEntry{}
	open := false
	lastDB := "" // MySQL writes "use db;" only when it changes
	flush := func() error {
		if !open {
			return nil
		}
		open = false
		return c.slowEmit(e, &lastDB)
	}
	start := func() {
		body := e.body[:0]
		*e = slowEntry{line: lr.line, body: body}
		open = true
	}
	for {
		if lr.line%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		line, err := lr.next()
		if err == io.EOF {
			return flush()
		}
		if err != nil {
			return err
		}
		if len(line) > 0 && line[0] == '#' {
			k := slowKeyOf(line)
			if open && e.inBody && k == keyOther && !(slowHeaderish(line) && bytes.HasSuffix(bytes.TrimRight(e.body, " \t\r"), []byte(";"))) {
				// A comment line inside the statement. After a ";", a
				// "# Key: value" line is the next entry's header instead:
				// some servers and tools start an entry at a header of
				// their own ("# User: ...").
				e.body = append(append(e.body, '\n'), line...)
				continue
			}
			// Whether this header line starts a new entry.
			var next bool
			switch k {
			case keyTime:
				next = e.inBody || e.hasTime || e.hasUser || e.hasQuery || e.hasAdmin
			case keyUser:
				next = e.inBody || e.hasUser || e.hasQuery || e.hasAdmin
			case keyQuery:
				next = e.inBody || e.hasQuery || e.hasAdmin
			case keyThread:
				next = e.inBody || e.hasAdmin
			case keyOther:
				next = e.inBody // a "# Key: value" after a statement's ";"
			case keyAdmin:
				// It comes after SET timestamp, in place of a statement.
				next = len(e.body) > 0 || e.hasAdmin
			}
			if open && next {
				if err := flush(); err != nil {
					return err
				}
			}
			if !open {
				if k == keyOther && !slowHeaderish(line) {
					c.skip(lr.line, "line not part of a slow log entry", "(no # Time:, # User@Host: or # Query_time: before it)")
					continue
				}
				start()
			}
			if k == keyAdmin {
				e.hasAdmin = true
				e.admin = strings.TrimSpace(string(line[len("# administrator command:"):]))
				continue
			}
			c.slowHeaderLine(e, line, lr.line)
			continue
		}
		if isServerHeader(line) {
			c.src().Headers++
			if err := flush(); err != nil {
				return err
			}
			continue
		}
		if !open {
			if len(bytes.TrimSpace(line)) > 0 {
				c.skip(lr.line, "line not part of a slow log entry", "(no # Time:, # User@Host: or # Query_time: before it)")
			}
			continue
		}
		if len(e.body) == 0 && len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		e.inBody = true
		if len(e.body) == 0 && e.slowPreamble(line) {
			continue
		}
		if len(e.body) > 0 {
			e.body = append(e.body, '\n')
		}
		e.body = append(e.body, line...)
	}
}

// slowHeaderish reports a "# Key: value" line whose key slowKeyOf does not
// know ("# User: u[u] @ [ip]", "# Bytes_sent: 10"): inside an entry's
// headers it is one more header; right after a statement's ";" it starts
// the next entry, as it does for pt-query-digest. Servers' keys start with
// a capital; "# note: ..." in a procedure's body stays a comment.
func slowHeaderish(line []byte) bool {
	if len(line) < 4 || line[1] != ' ' || line[2] < 'A' || line[2] > 'Z' {
		return false
	}
	for i, b := range line[2:] {
		switch {
		case b == ':':
			return i > 0
		case b == '_' || b == '@' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || i > 0 && b >= '0' && b <= '9':
		default:
			return false
		}
	}
	return false
}

// isServerHeader reports the lines a server writes when it opens the log,
// the same for the slow and the general log: its path and version, where
// it listens ("Tcp port: 3306  Unix socket: ..." on Unix, "TCP Port: 3306,
// Named Pipe: MySQL" on Windows), and the column header.
func isServerHeader(line []byte) bool {
	return bytes.Contains(line, []byte(", Version: ")) && bytes.Contains(line, []byte("started with:")) ||
		bytes.HasPrefix(line, []byte("Tcp port: ")) ||
		bytes.HasPrefix(line, []byte("TCP Port: ")) && bytes.Contains(line, []byte(", Named Pipe: ")) ||
		bytes.HasPrefix(line, []byte("Time")) && bytes.Contains(line, []byte("Id Command")) && bytes.Contains(line, []byte("Argument"))
}

// slowPreamble reads the "use db;" and "SET timestamp=N;" lines that come
// before the statement; it reports whether line was one. After SET
// timestamp comes the statement, even when it is a USE itself.
func (e *slowEntry) slowPreamble(line []byte) bool {
	if e.hasSetTS {
		return false
	}
	if db, ok := slowUse(line); ok {
		e.db = db
		e.uses++
		e.useLine = append(e.useLine[:0], line...)
		return true
	}
	s := line
	if len(s) > 4 && bytes.EqualFold(s[:4], []byte("SET ")) && bytes.HasSuffix(s, []byte(";")) && bytes.Contains(s, []byte("timestamp=")) {
		for _, kv := range strings.Split(string(s[4:len(s)-1]), ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return false
			}
			switch strings.TrimSpace(k) {
			case "timestamp":
				f, err := strconv.ParseFloat(v, 64)
				if err != nil || math.IsNaN(f) || f < 0 || f > 1e11 {
					return false
				}
				e.setTS = int64(f * 1e6)
			case "last_insert_id", "insert_id":
			default:
				return false
			}
		}
		e.hasSetTS = true
		return true
	}
	return false
}

// slowUse reads a "use db;" line.
func slowUse(line []byte) (string, bool) {
	if len(line) < 6 || !bytes.EqualFold(line[:4], []byte("use ")) || line[len(line)-1] != ';' {
		return "", false
	}
	db := bytes.TrimSpace(line[4 : len(line)-1])
	if len(db) == 0 || (db[0] != '`' && bytes.ContainsAny(db, " \t")) {
		return "", false
	}
	if db[0] == '`' {
		db = bytes.ReplaceAll(bytes.Trim(db, "`"), []byte("``"), []byte("`"))
	}
	return string(db), true
}

func (c *Capturer) slowEmit(e *slowEntry, lastDB *string) error {
	body := bytes.TrimSpace(e.body)
	body = bytes.TrimSpace(bytes.TrimSuffix(body, []byte(";")))
	sql := string(body)
	if sql == "" && e.uses > 0 && !e.hasSetTS && !e.hasAdmin {
		// "use db;" alone: a USE statement, with no SET timestamp line
		// (which every server writes) to tell it from the preamble; the
		// last one is the statement, as written. Before an administrator
		// command it is that command's preamble.
		sql = string(bytes.TrimSpace(bytes.TrimSuffix(e.useLine, []byte(";"))))
	}
	if e.db != "" {
		*lastDB = e.db
	}
	session := e.session
	if session == "" {
		session = "0"
	}
	if e.hasAdmin {
		if strings.EqualFold(strings.TrimSpace(strings.TrimSuffix(e.admin, ";")), "Quit") {
			if err := c.add(&Record{Session: session, Kind: KindQuit}); err != nil {
				return err
			}
		} else {
			c.other()
		}
		if sql == "" {
			return nil
		}
	}
	if sql == "" {
		c.skip(e.line, "entry without a statement", "(truncated?)")
		return nil
	}
	if e.internal {
		// TiDB's own work (statistics, DDL jobs, GC): not the
		// application's.
		c.other()
		return nil
	}
	r := &Record{Session: session, DB: *lastDB, SQL: sql, Error: e.errno}
	if text, params, ok := tidbArguments(sql); ok {
		r.SQL, r.Params, r.Prepared = text, params, true
	}
	switch {
	case e.startUS != 0:
		r.TS = e.startUS
	case e.timeUS != 0:
		r.TS = e.timeUS
		if e.hasQuery {
			r.TS -= e.queryUS
		}
		if e.setTS != 0 && r.TS/1e6 < e.setTS/1e6 {
			r.TS = e.setTS
		}
	case e.setTS != 0:
		r.TS = e.setTS
	}
	if e.hasQuery {
		r.DurationUS = i64(e.queryUS)
	}
	if e.hasSent {
		r.RowsSent = i64(e.sent)
	}
	if e.hasExam {
		r.RowsExamined = i64(e.examined)
	}
	return c.add(r)
}
