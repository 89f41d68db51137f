package capture

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"time"
)

// slowEntry is one slow log entry being read.
type slowEntry struct {
	line     int64 // where it starts
	session  string
	db       string
	timeUS   int64 // from "# Time:" when it has microseconds
	setTS    int64 // from SET timestamp=
	query    float64
	hasQuery bool
	sent     int64
	examined int64
	hasRows  bool
	errno    int
	body     strings.Builder
	inBody   bool
	bad      bool
}

// readSlow reads a slow log, MySQL's or MariaDB's (long_query_time=0 logs
// every statement).
func (c *Capturer) readSlow(ctx context.Context, r io.Reader) error {
	lr := newLineReader(r)
	var e *slowEntry
	lastDB := "" // MySQL writes "use db;" only when it changes
	flush := func() error {
		if e == nil {
			return nil
		}
		cur := e
		e = nil
		if cur.bad {
			return nil
		}
		return c.slowEmit(cur, &lastDB)
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
		switch {
		case isServerHeader(line):
			if err := flush(); err != nil {
				return err
			}
		case bytes.HasPrefix(line, []byte("# Time:")) || bytes.HasPrefix(line, []byte("# User@Host:")):
			if e != nil && (e.inBody || bytes.HasPrefix(line, []byte("# Time:")) || e.session != "" || e.hasQuery) {
				if err := flush(); err != nil {
					return err
				}
			}
			if e == nil {
				e = &slowEntry{line: lr.line}
			}
			c.slowHeader(e, line, lr.line)
		case e != nil && !e.inBody && bytes.HasPrefix(line, []byte("# ")):
			c.slowHeader(e, line, lr.line)
		case e == nil:
			if len(bytes.TrimSpace(line)) > 0 {
				c.bad(lr.line, "not part of a slow log entry (no # Time: or # User@Host: header before it)")
			}
		default:
			if !e.inBody && len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			e.inBody = true
			if e.body.Len() == 0 && e.slowPreamble(line) {
				continue
			}
			if e.body.Len() > 0 {
				e.body.WriteByte('\n')
			}
			e.body.Write(line)
		}
	}
}

// isServerHeader reports the lines a server writes when it opens the log.
func isServerHeader(line []byte) bool {
	return bytes.Contains(line, []byte(", Version: ")) && bytes.Contains(line, []byte("started with:")) ||
		bytes.HasPrefix(line, []byte("Tcp port: ")) ||
		bytes.HasPrefix(line, []byte("Time")) && bytes.Contains(line, []byte("Id Command")) && bytes.Contains(line, []byte("Argument"))
}

// slowHeader reads one "# Key: value  Key: value" line.
func (c *Capturer) slowHeader(e *slowEntry, line []byte, n int64) {
	s := string(line[2:])
	if t, ok := strings.CutPrefix(s, "Time:"); ok {
		t = strings.TrimSpace(t)
		if ts, ok := parseISOTime(t); ok {
			e.timeUS = ts
		} else if _, ok := parseMariaTime(t); !ok {
			c.bad(n, "unreadable time %q", t)
			e.bad = true
		}
		return
	}
	fields := strings.Fields(s)
	for i := 0; i+1 < len(fields); i++ {
		k := fields[i]
		if !strings.HasSuffix(k, ":") {
			continue
		}
		v := fields[i+1]
		var err error
		switch k {
		case "Id:", "Thread_id:":
			_, err = strconv.ParseUint(v, 10, 64)
			e.session = v
		case "Schema:":
			if !strings.HasSuffix(v, ":") {
				e.db = v
			}
		case "Query_time:":
			e.query, err = strconv.ParseFloat(v, 64)
			e.hasQuery = true
		case "Rows_sent:":
			e.sent, err = strconv.ParseInt(v, 10, 64)
			e.hasRows = true
		case "Rows_examined:":
			e.examined, err = strconv.ParseInt(v, 10, 64)
		case "Errno:":
			e.errno, err = strconv.Atoi(v)
		default:
			continue
		}
		if err != nil {
			c.bad(n, "unreadable %s %q", strings.TrimSuffix(k, ":"), v)
			e.bad = true
			return
		}
		i++
	}
}

// slowPreamble reads the "use db;" and "SET timestamp=N;" lines that come
// before the statement; it reports whether line was one.
func (e *slowEntry) slowPreamble(line []byte) bool {
	s := string(line)
	if len(s) > 4 && strings.EqualFold(s[:4], "use ") && strings.HasSuffix(s, ";") && !strings.ContainsAny(s[4:len(s)-1], " \t") {
		e.db = strings.Trim(s[4:len(s)-1], "`")
		return true
	}
	if len(s) > 4 && strings.EqualFold(s[:4], "SET ") && strings.HasSuffix(s, ";") && strings.Contains(s, "timestamp=") {
		for _, kv := range strings.Split(s[4:len(s)-1], ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return false
			}
			switch strings.TrimSpace(k) {
			case "timestamp":
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return false
				}
				e.setTS = int64(f * 1e6)
			case "last_insert_id", "insert_id":
			default:
				return false
			}
		}
		return true
	}
	return false
}

func (c *Capturer) slowEmit(e *slowEntry, lastDB *string) error {
	sql := strings.TrimSpace(e.body.String())
	if sql == "" {
		c.bad(e.line, "entry without a statement (truncated?)")
		return nil
	}
	if cmd, ok := strings.CutPrefix(sql, "# administrator command:"); ok {
		if strings.EqualFold(strings.Trim(strings.TrimSpace(cmd), ";"), "Quit") {
			return c.add(&Record{Session: e.session, Kind: KindQuit})
		}
		c.Stats.Ignored++
		return nil
	}
	sql = strings.TrimSpace(strings.TrimSuffix(sql, ";"))
	if sql == "" {
		c.bad(e.line, "entry without a statement (truncated?)")
		return nil
	}
	if e.db != "" {
		*lastDB = e.db
	}
	r := &Record{Session: e.session, DB: *lastDB, SQL: sql, Error: e.errno}
	if r.Session == "" {
		r.Session = "0"
	}
	switch {
	case e.timeUS != 0:
		r.TS = e.timeUS - int64(e.query*1e6)
		if e.setTS != 0 && r.TS/1e6 < e.setTS/1e6 {
			r.TS = e.setTS
		}
	case e.setTS != 0:
		r.TS = e.setTS
	}
	if e.hasQuery {
		r.DurationUS = i64(int64(e.query*1e6 + 0.5))
	}
	if e.hasRows {
		r.RowsSent, r.RowsExamined = i64(e.sent), i64(e.examined)
	}
	return c.add(r)
}

// parseISOTime reads MySQL's "2023-11-22T12:00:00.123456Z" (or with an
// offset) as µs since the epoch.
func parseISOTime(s string) (int64, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return t.UnixMicro(), true
}

// parseMariaTime reads MariaDB's "231122 12:00:00" (hour may be padded with
// a space), in the server's local time zone, which the log does not name:
// UTC is assumed, and only differences between times are used.
func parseMariaTime(s string) (int64, bool) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, false
	}
	if len(f[1]) == 7 {
		f[1] = "0" + f[1]
	}
	t, err := time.Parse("060102 15:04:05", f[0]+" "+f[1])
	if err != nil {
		return 0, false
	}
	return t.UnixMicro(), true
}
