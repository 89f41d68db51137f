package capture

import (
	"bytes"
	"context"
	"io"
	"math"
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
	admin    string // the "# administrator command:" it holds
	hasAdmin bool
	uses     int  // "use db;" lines before the statement
	hasSetTS bool // a SET timestamp line was read: the statement follows
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

// slowKeyOf tells what a line that starts with "#" is.
func slowKeyOf(line []byte) slowKey {
	if len(line) < 3 || line[1] != ' ' {
		return keyOther
	}
	switch s := line[2:]; s[0] {
	case 'T':
		if bytes.HasPrefix(s, []byte("Time:")) {
			return keyTime
		}
		if bytes.HasPrefix(s, []byte("Thread_id:")) {
			return keyThread
		}
	case 'U':
		if bytes.HasPrefix(s, []byte("User@Host:")) {
			return keyUser
		}
	case 'Q':
		if bytes.HasPrefix(s, []byte("Query_time:")) {
			return keyQuery
		}
	case 'S':
		if bytes.HasPrefix(s, []byte("Schema:")) {
			return keyThread
		}
	case 'a':
		if bytes.HasPrefix(s, []byte("administrator command:")) {
			return keyAdmin
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
			if open && e.inBody && k == keyOther {
				// A comment line inside the statement.
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
				if k == keyOther {
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

// isServerHeader reports the lines a server writes when it opens the log.
func isServerHeader(line []byte) bool {
	return bytes.Contains(line, []byte(", Version: ")) && bytes.Contains(line, []byte("started with:")) ||
		bytes.HasPrefix(line, []byte("Tcp port: ")) ||
		bytes.HasPrefix(line, []byte("Time")) && bytes.Contains(line, []byte("Id Command")) && bytes.Contains(line, []byte("Argument"))
}

// slowHeaderLine reads one header line, which an older server may have
// written as several on one line ("# Time: ... # User@Host: ...").
func (c *Capturer) slowHeaderLine(e *slowEntry, line []byte, n int64) {
	s := line[1:]
	for {
		// A "# " before a known key starts the next header on this line.
		cut := -1
		if bytes.Contains(s, []byte(" # ")) {
			for _, key := range [...]string{" # User@Host:", " # Query_time:", " # Thread_id:", " # Schema:"} {
				if i := bytes.Index(s, []byte(key)); i >= 0 && (cut < 0 || i < cut) {
					cut = i
				}
			}
		}
		if cut < 0 {
			c.slowHeader(e, s, n)
			return
		}
		c.slowHeader(e, s[:cut], n)
		s = s[cut+2:]
	}
}

// nextField returns the first field of s (split at spaces and tabs) and
// the rest.
func nextField(s []byte) (field, rest []byte) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	j := i
	for j < len(s) && s[j] != ' ' && s[j] != '\t' {
		j++
	}
	return s[i:j], s[j:]
}

// slowHeader reads one header: " Time: ..." or " Key: value  Key: value".
// A value that cannot be read is dropped, and said so; the entry is kept.
func (c *Capturer) slowHeader(e *slowEntry, s []byte, n int64) {
	s = bytes.TrimLeft(s, " ")
	if t, ok := bytes.CutPrefix(s, []byte("Time:")); ok {
		e.hasTime = true
		ts := string(bytes.TrimSpace(t))
		if us, ok := parseISOTime(ts); ok {
			e.timeUS = us
		} else if _, ok := parseMariaTime(ts); !ok {
			c.lose(n, "unreadable Time "+strconv.Quote(ts)+": time dropped, statement kept")
		}
		return
	}
	if bytes.HasPrefix(s, []byte("User@Host:")) {
		e.hasUser = true
		// "User@Host: user[user] @ host [ip]": only its Id: is read.
		i := bytes.Index(s, []byte(" Id:"))
		if i < 0 {
			return
		}
		s = s[i:]
	}
	k, rest := nextField(s)
	for len(k) > 0 {
		if k[len(k)-1] != ':' {
			k, rest = nextField(rest)
			continue
		}
		v, after := nextField(rest)
		if len(v) == 0 || v[len(v)-1] == ':' {
			// An empty value ("Schema:  Last_errno: 0").
			k, rest = v, after
			continue
		}
		ok := true
		switch string(k) {
		case "Id:", "Thread_id:":
			if _, ok = parseDigits(v); ok {
				e.session = string(v)
			}
		case "Schema:":
			e.db = string(v)
		case "Query_time:":
			e.queryUS, ok = parseSecondsUS(v)
			e.hasQuery = ok
		case "Rows_sent:":
			e.sent, ok = parseDigits(v)
			e.hasSent = ok
		case "Rows_examined:":
			e.examined, ok = parseDigits(v)
			e.hasExam = ok
		case "Errno:", "Last_errno:":
			var en int64
			en, ok = parseDigits(v)
			if ok && en <= 1<<31-1 {
				e.errno = int(en)
			} else {
				ok = false
			}
		case "Start:":
			e.startUS, ok = parseISOTime(string(v))
		default:
			k, rest = v, after
			continue
		}
		if !ok {
			c.lose(n, "unreadable "+string(k[:len(k)-1])+" "+strconv.Quote(string(v))+": value dropped, statement kept")
		}
		k, rest = nextField(after)
	}
}

// parseDigits reads a non-negative decimal integer that fits an int64.
func parseDigits(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		if len(v) > 18 {
			n, err := strconv.ParseInt(string(v), 10, 64)
			return n, err == nil && n >= 0
		}
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseSecondsUS reads a duration in seconds ("0.000123") as microseconds; an
// overflowed figure (a negative time printed unsigned) is no duration.
func parseSecondsUS(v []byte) (int64, bool) {
	// The usual "S.ffffff", read without strconv.
	if dot := bytes.IndexByte(v, '.'); dot > 0 && dot <= 8 && len(v)-dot-1 <= 6 && len(v)-dot-1 > 0 {
		whole, ok1 := parseDigits(v[:dot])
		frac, ok2 := parseDigits(v[dot+1:])
		if ok1 && ok2 {
			for i := len(v) - dot - 1; i < 6; i++ {
				frac *= 10
			}
			return whole*1e6 + frac, true
		}
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > maxQueryTime {
		return 0, false
	}
	return int64(f*1e6 + 0.5), true
}

// maxQueryTime bounds a believable Query_time, in seconds (a year).
const maxQueryTime = 366 * 24 * 3600

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
	if sql == "" && e.uses > 0 && !e.hasSetTS {
		// "use db;" alone: a USE statement, with no SET timestamp line
		// (which every server writes) to tell it from the preamble.
		sql = "use `" + strings.ReplaceAll(e.db, "`", "``") + "`"
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
	r := &Record{Session: session, DB: *lastDB, SQL: sql, Error: e.errno}
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

// parseISOTime reads MySQL's "2023-11-22T12:00:00.123456Z" (or with an
// offset) as µs since the epoch.
func parseISOTime(s string) (int64, bool) {
	if len(s) < 20 || s[4] != '-' || s[10] != 'T' {
		return 0, false
	}
	if us, ok := parseUTCTime(s); ok {
		return us, true
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return t.UnixMicro(), true
}

// parseUTCTime reads the usual "2023-11-22T12:00:00.123456Z" without the
// generality (and the cost) of time.Parse; ok is false for anything else.
func parseUTCTime(s string) (int64, bool) {
	if s[len(s)-1] != 'Z' || s[7] != '-' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	num := func(a, b int) int {
		n := 0
		for i := a; i < b; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, mo, d, h, mi, sec := num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 {
		return 0, false
	}
	us := 0
	switch frac := s[19 : len(s)-1]; {
	case frac == "":
	case frac[0] == '.' && len(frac) >= 2 && len(frac) <= 7:
		if us = num(20, len(s)-1); us < 0 {
			return 0, false
		}
		for i := len(frac) - 1; i < 6; i++ {
			us *= 10
		}
	default:
		return 0, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, 0, time.UTC)
	if t.Day() != d {
		return 0, false // 31 February
	}
	return t.Unix()*1e6 + int64(us), true
}

// parseMariaTime reads MariaDB's and older MySQL's "231122 12:00:00" (hour
// may be padded with a space), in the server's local time zone, which the
// log does not name: UTC is assumed, and only differences between times are
// used.
func parseMariaTime(s string) (int64, bool) {
	f := strings.Fields(s)
	if len(f) != 2 || len(f[0]) != 6 {
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
