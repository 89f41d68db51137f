package capture

import (
	"fmt"
	"regexp"
	"strings"
)

// SourceStats are one source's figures, so that a source that yields fewer
// statements than it holds entries says which it skipped and why.
type SourceStats struct {
	Name   string
	Format string
	// FormatWhy says how the format was known: "--format", or what in the
	// source's first bytes gave it away.
	FormatWhy string
	// Statements are the entries handed on as statements; Other those that
	// are not statements (Connect, Quit, Prepare, administrator commands).
	Statements, Other int64
	// Skipped are the entries (or lines outside any entry) that could not
	// be read, by reason, in order of first appearance.
	Skipped []Skip
	// ValuesLost counts header values that could not be read (a time, a
	// duration): the value is dropped, the statement kept.
	ValuesLost int64
	// Headers counts the server's header lines (written each time it
	// opened the log), which are not entries.
	Headers int64
}

// Skip is one reason for skipping entries, with the first lines it hit.
type Skip struct {
	Reason string
	Count  int64
	Lines  []int64 // the first maxSkipLines, 0 where a source has no lines
}

const maxSkipLines = 5

// Entries is every entry the source held: read, not a statement, skipped.
func (s *SourceStats) Entries() int64 {
	n := s.Statements + s.Other
	for _, k := range s.Skipped {
		n += k.Count
	}
	return n
}

// SkippedCount is the number of skipped entries.
func (s *SourceStats) SkippedCount() int64 {
	var n int64
	for _, k := range s.Skipped {
		n += k.Count
	}
	return n
}

// SkipText says what was skipped: "2 entry without a statement (lines 5,
// 9), 1 unreadable ... (line 11)".
func (s *SourceStats) SkipText() string {
	parts := make([]string, 0, len(s.Skipped))
	for _, k := range s.Skipped {
		p := fmt.Sprintf("%d %s", k.Count, k.Reason)
		var ls []string
		for _, l := range k.Lines {
			if l > 0 {
				ls = append(ls, fmt.Sprint(l))
			}
		}
		switch {
		case len(ls) == 1:
			p += " (line " + ls[0] + ")"
		case len(ls) > 1:
			more := ""
			if k.Count > int64(len(ls)) {
				more = ", ..."
			}
			p += " (lines " + strings.Join(ls, ", ") + more + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

// Empty says why a source gave no statement, or "" if it gave some.
func (s *SourceStats) Empty() string {
	if s.Statements > 0 {
		return ""
	}
	if s.Entries() == 0 && s.Headers > 0 {
		// A slow and a general log begin with the same lines: a log
		// holding only them is neither told apart nor broken.
		return fmt.Sprintf("no statement read: no entries, only %d server header lines (which a slow or general log starts with each time the server opens it): nothing was logged", s.Headers)
	}
	msg := fmt.Sprintf("no statement read (format %s", s.Format)
	if s.FormatWhy != "" {
		msg += ", " + s.FormatWhy
	}
	msg += fmt.Sprintf("; %d entries", s.Entries())
	if s.Other > 0 {
		msg += fmt.Sprintf(", %d of them not statements", s.Other)
	}
	msg += ")"
	if t := s.SkipText(); t != "" {
		msg += ": skipped " + t
	}
	return msg
}

// src is the current source's figures.
func (c *Capturer) src() *SourceStats {
	if len(c.Stats.Sources) == 0 {
		c.Stats.Sources = append(c.Stats.Sources, SourceStats{Name: c.source})
	}
	return &c.Stats.Sources[len(c.Stats.Sources)-1]
}

// skip records an entry (or a line outside any entry) that could not be
// read: reason groups them, detail is said once, for this line.
func (c *Capturer) skip(line int64, reason, detail string) {
	msg := reason
	if detail != "" {
		msg += " " + detail
	}
	c.skipMsg(line, reason, msg)
}

func (c *Capturer) skipMsg(line int64, reason, msg string) {
	c.skipCount(line, reason)
	c.problem(Problem{Source: c.source, Line: line, Msg: msg})
}

// skipCount counts a skipped entry without a message of its own: a packet
// capture's skips are said on its packet line.
func (c *Capturer) skipCount(line int64, reason string) {
	c.Stats.Bad++
	s := c.src()
	i := 0
	for i < len(s.Skipped) && s.Skipped[i].Reason != reason {
		i++
	}
	if i == len(s.Skipped) {
		s.Skipped = append(s.Skipped, Skip{Reason: reason})
	}
	k := &s.Skipped[i]
	k.Count++
	if len(k.Lines) < maxSkipLines {
		k.Lines = append(k.Lines, line)
	}
}

// lose records a value that could not be read; its statement is kept.
func (c *Capturer) lose(line int64, msg string) {
	c.Stats.ValuesLost++
	c.src().ValuesLost++
	c.problem(Problem{Source: c.source, Line: line, Msg: msg, Kept: true})
}

func (c *Capturer) problem(p Problem) {
	if len(c.Stats.Problems) < maxProblems {
		c.Stats.Problems = append(c.Stats.Problems, p)
	}
	if c.OnProblem != nil {
		c.OnProblem(p)
	}
}

// verbRE finds the verbs of a format string, to group messages by reason.
var verbRE = regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)

// bad records an unreadable entry described by a format; the format, its
// values left out, is the reason it is counted under.
func (c *Capturer) bad(line int64, format string, args ...any) {
	if len(args) == 0 {
		c.skipMsg(line, format, format)
		return
	}
	reason := strings.TrimSuffix(verbRE.ReplaceAllString(format, "…"), ": …")
	c.skipMsg(line, reason, fmt.Sprintf(format, args...))
}

// DetectWhy is Detect, and says what in head gave the format away.
func DetectWhy(head []byte) (format, why string, err error) {
	format, err = Detect(head)
	if err != nil {
		return "", "", err
	}
	why = "its first bytes"
	switch format {
	case "pcap":
		why = "a pcap file header"
	case "slow":
		if n, key := firstLineWith(head, "# Query_time:", "# User@Host:"); n > 0 {
			why = fmt.Sprintf("%q on line %d", key, n)
		} else if n := serverHeadersOnly(string(head)); n > 0 {
			why = fmt.Sprintf("only server headers, %d lines and no entry: read as a slow log, whose header a general log shares", n)
		}
	case "general":
		for i, line := range strings.Split(string(head), "\n") {
			if strings.HasPrefix(line, "Time") && strings.Contains(line, "Id Command") {
				why = fmt.Sprintf("the general log's column header on line %d", i+1)
				break
			}
			if _, ok := parseGeneralLine(line); ok {
				why = fmt.Sprintf("an entry (TIME ID COMMAND ARGUMENT) on line %d", i+1)
				break
			}
		}
	}
	return format, why, nil
}

// firstLineWith returns the first line of head that starts with one of keys.
func firstLineWith(head []byte, keys ...string) (int, string) {
	for i, line := range strings.Split(string(head), "\n") {
		for _, k := range keys {
			if strings.HasPrefix(line, k) {
				return i + 1, k
			}
		}
	}
	return 0, ""
}
