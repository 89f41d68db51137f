// Package sqlsplit splits SQL text into statements the way the mysql command
// line client reads a script: a delimiter (";" by default, any string, "\n"
// for mysqlslap's one statement per line) ends a statement only outside
// quoted strings ('...', "...", `...`) and comments (-- to end of line, # to
// end of line, /* ... */). Leading comments are taken off a statement and
// kept beside it, except executable ones (/*! ... */, /*M! ... */, /*+ ... */),
// which are part of the statement. With ClientCommands set, a line
// "DELIMITER xx" changes the delimiter, as in the mysql client.
//
// Text that cannot be split (an unterminated quote or comment, or, with
// Strict, a delimiter that never occurs in text of several lines) is a
// *SyntaxError naming the statement's number, its first line and its text.
package sqlsplit

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Options say how to split.
type Options struct {
	// Delimiter ends a statement; "" means ";".
	Delimiter string
	// ClientCommands honours "DELIMITER xx" lines.
	ClientCommands bool
	// Strict refuses text of several lines in which the delimiter never
	// occurs: it would run as one statement, which is rarely what was meant.
	Strict bool
}

// Statement is one statement of a script.
type Statement struct {
	// N numbers the statements from 1, empty ones not counted.
	N int
	// Line is the line the statement starts on, from 1.
	Line int
	// Text is the statement without its delimiter, leading comments and
	// surrounding white space.
	Text string
	// Comments are the comments before the statement, markers and
	// surrounding white space taken off ("-- @weight 3" gives "@weight 3").
	Comments []string
}

// SyntaxError is text that cannot be split.
type SyntaxError struct {
	N    int    // the statement's number
	Line int    // the line it starts on
	Text string // its beginning
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Text == "" {
		return fmt.Sprintf("statement %d (line %d): %s", e.N, e.Line, e.Msg)
	}
	return fmt.Sprintf("statement %d (line %d): %s: %s", e.N, e.Line, e.Msg, e.Text)
}

// Short returns s on one line, cut to about n characters.
func Short(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xc0 == 0x80 { // do not split a UTF-8 sequence
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// Split returns the statements of src.
func Split(src string, opt Options) ([]Statement, error) {
	delim := opt.Delimiter
	if delim == "" {
		delim = ";"
	}
	sp := splitter{src: src, delim: delim, opt: opt, line: 1, start: -1}
	return sp.run()
}

type splitter struct {
	src   string
	delim string
	opt   Options

	i         int
	line      int
	lineStart bool // nothing but white space since the last newline

	start     int // offset of the statement's first character; -1 before it
	startLine int
	comments  []string
	out       []Statement
	delims    int // delimiters seen
}

func (s *splitter) err(msg string, from int) error {
	line := s.line
	text := ""
	if s.start >= 0 {
		line = s.startLine
		text = Short(s.src[s.start:], 60)
	} else if from >= 0 {
		text = Short(s.src[from:], 60)
	}
	return &SyntaxError{N: len(s.out) + 1, Line: line, Text: text, Msg: msg}
}

// begin marks the statement as started at offset i.
func (s *splitter) begin(i int) {
	if s.start < 0 {
		s.start = i
		s.startLine = s.line
	}
}

func (s *splitter) end(at int) {
	if s.start >= 0 {
		text := strings.TrimSpace(s.src[s.start:at])
		if text != "" {
			s.out = append(s.out, Statement{N: len(s.out) + 1, Line: s.startLine, Text: text, Comments: s.comments})
		}
	}
	s.start = -1
	s.comments = nil
}

func (s *splitter) run() ([]Statement, error) {
	src := s.src
	s.lineStart = true
	for s.i < len(src) {
		i := s.i
		c := src[i]
		if s.lineStart && s.start < 0 && s.opt.ClientCommands && (c == 'd' || c == 'D') {
			if ok, err := s.delimiterCommand(); err != nil {
				return nil, err
			} else if ok {
				continue
			}
		}
		if s.delimAt(i) {
			s.delims++
			s.end(i)
			s.advance(len(s.delim))
			continue
		}
		switch {
		case c == '\'' || c == '"' || c == '`':
			s.begin(i)
			if err := s.quoted(c); err != nil {
				return nil, err
			}
			continue
		case c == '#' || c == '-' && strings.HasPrefix(src[i:], "--") && (i+2 == len(src) || isSpace(src[i+2])):
			end := strings.IndexByte(src[i:], '\n')
			if end < 0 {
				end = len(src) - i
			}
			if s.start < 0 {
				body := strings.TrimPrefix(src[i:i+end], "#")
				body = strings.TrimPrefix(body, "--")
				s.comments = append(s.comments, strings.TrimSpace(body))
			}
			s.advance(end) // the newline itself may be the delimiter
			continue
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, s.err("unterminated /* comment", i)
			}
			body := src[i+2 : i+2+end]
			executable := strings.HasPrefix(body, "!") || strings.HasPrefix(body, "M!") || strings.HasPrefix(body, "+")
			if s.start >= 0 || executable {
				s.begin(i)
			} else {
				s.comments = append(s.comments, strings.TrimSpace(body))
			}
			s.advance(end + 4)
			continue
		case isSpace(c):
		default:
			s.begin(i)
		}
		s.advance(1)
	}
	if s.start >= 0 && s.opt.Strict && s.delims == 0 && s.delim != "\n" && strings.Contains(strings.TrimSpace(src[s.start:]), "\n") {
		lines := strings.Count(strings.TrimSpace(src), "\n") + 1
		return nil, &SyntaxError{N: 1, Line: s.startLine, Text: Short(src[s.start:], 60),
			Msg: fmt.Sprintf("the delimiter %q never occurs, so all %d lines would run as one statement; give the delimiter the text uses (--delimiter)", s.delim, lines)}
	}
	s.end(len(src))
	return s.out, nil
}

// advance moves n bytes on, counting lines.
func (s *splitter) advance(n int) {
	for _, c := range []byte(s.src[s.i : s.i+n]) {
		switch {
		case c == '\n':
			s.line++
			s.lineStart = true
		case !isSpace(c):
			s.lineStart = false
		}
	}
	s.i += n
}

// quoted skips a quoted string, identifier or name starting at s.i.
func (s *splitter) quoted(q byte) error {
	src := s.src
	j := s.i + 1
	for j < len(src) {
		c := src[j]
		switch {
		case c == '\\' && q != '`':
			j += 2
			continue
		case c == q:
			if j+1 < len(src) && src[j+1] == q { // doubled quote
				j += 2
				continue
			}
			s.advance(j + 1 - s.i)
			return nil
		}
		j++
	}
	what := map[byte]string{'\'': "unterminated quoted string (')", '"': `unterminated quoted string (")`, '`': "unterminated quoted name (`)"}[q]
	return s.err(what, s.i)
}

// delimAt reports whether the delimiter starts at byte i. A delimiter with
// bytes above ASCII matches whole characters only: "\xe6" is the first
// byte of "晚", not a delimiter inside it. An ASCII delimiter never occurs
// inside a UTF-8 character, and is matched byte for byte, as in files in
// other character sets.
func (s *splitter) delimAt(i int) bool {
	if !strings.HasPrefix(s.src[i:], s.delim) {
		return false
	}
	if isASCII(s.delim) {
		return true
	}
	end := i + len(s.delim)
	return utf8.RuneStart(s.src[i]) && (end == len(s.src) || utf8.RuneStart(s.src[end]))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// delimiterCommand reads a "DELIMITER xx" line at s.i, if there is one.
func (s *splitter) delimiterCommand() (bool, error) {
	const kw = "delimiter"
	src := s.src[s.i:]
	if len(src) <= len(kw) || !strings.EqualFold(src[:len(kw)], kw) || !isSpace(src[len(kw)]) || src[len(kw)] == '\n' {
		return false, nil
	}
	end := strings.IndexByte(src, '\n')
	if end < 0 {
		end = len(src)
	}
	d := strings.TrimSpace(src[len(kw):end])
	if d == "" {
		return false, s.err("DELIMITER without a delimiter", s.i)
	}
	s.delim = d
	s.delims++
	s.advance(end)
	return true, nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}
