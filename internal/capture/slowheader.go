package capture

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"
)

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
		case "Id:", "Thread_id:", "Conn_ID:":
			if _, ok = parseDigits(v); ok {
				e.session = string(v)
			}
		case "Schema:", "DB:":
			e.db = string(v)
		case "Is_internal:":
			e.internal = string(v) == "true"
		case "Query_time:":
			e.queryUS, ok = parseSecondsUS(v)
			e.hasQuery = ok
		case "Rows_sent:", "Result_rows:":
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
