package capture

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/fingerprint"
)

// Formats are the source formats read, as --format names them.
var Formats = []string{"slow", "general", "pcap", "tcpdump-text"}

// ErrUnknownFormat means a source's format could not be recognised.
var ErrUnknownFormat = errors.New("unknown log format")

// Detect guesses the format of a source from its first bytes.
func Detect(head []byte) (string, error) {
	if len(head) >= 4 {
		switch m := string(head[:4]); m {
		case "\xd4\xc3\xb2\xa1", "\xa1\xb2\xc3\xd4", "\x4d\x3c\xb2\xa1", "\xa1\xb2\x3c\x4d", "\x0a\x0d\x0d\x0a":
			return "pcap", nil
		}
	}
	text := string(head)
	switch {
	case looksTcpdumpText(text):
		return "tcpdump-text", nil
	case strings.Contains(text, "# Query_time:") || strings.Contains(text, "# User@Host:"):
		return "slow", nil
	case serverHeadersOnly(text) > 0:
		// The slow and the general log start with the same header; a log
		// of only headers is more often a slow log with nothing slow
		// (yet), and either reader reads them.
		return "slow", nil
	case strings.Contains(text, "Id Command") && strings.Contains(text, "Argument"),
		generalLineRE(text):
		return "general", nil
	}
	return "", fmt.Errorf("%w: read formats are %s (the slow log, the general log, a pcap from tcpdump -w, or tcpdump -x text); name one with --format", ErrUnknownFormat, strings.Join(Formats, ", "))
}

// serverHeadersOnly counts the server header lines of text when it holds
// nothing else but blank lines (0 otherwise).
func serverHeadersOnly(text string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSuffix(line, "\r")
		switch {
		case strings.TrimSpace(line) == "":
		case isServerHeader([]byte(line)):
			n++
		default:
			return 0
		}
	}
	return n
}

// generalLineRE reports whether text holds a line shaped like a general log
// entry: an id, a command and a tab.
func generalLineRE(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if _, ok := parseGeneralLine(line); ok {
			return true
		}
	}
	return false
}

// Problem is an input line that could not be read.
type Problem struct {
	Source string
	Line   int64
	Msg    string
	// Kept is true when only a value was lost and the statement kept.
	Kept bool
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s", p.Source, p.Line, p.Msg)
}

// Stats count what a capture read.
type Stats struct {
	Statements int64
	Sessions   int64
	// Bad counts unreadable lines or entries, skipped; Problems lists the
	// first ones.
	Bad      int64
	Problems []Problem
	// Redacted counts statements whose passwords were replaced.
	Redacted int64
	// Parsed and Fallback count the distinct statements the parser read and
	// those the lexer fingerprinted instead.
	Parsed, Fallback int64
	// Ignored counts entries that are not statements (Connect, Prepare,
	// administrator commands, ...).
	Ignored int64
	// Packets counts what packet captures held and what of it was skipped.
	Packets PacketStats
	// ValuesLost counts values that could not be read in entries kept.
	ValuesLost int64
	// Sources are each source's figures, in the order read.
	Sources []SourceStats
}

// maxProblems bounds the problems kept for the report; all are counted.
const maxProblems = 20

// Capturer numbers, cleans and fingerprints the records that sources
// produce and hands them on. It is not safe for concurrent use.
type Capturer struct {
	emit     func(*Record) error
	an       *fingerprint.Analyzer
	seq      map[string]int64
	prefix   string
	source   string
	Stats    Stats
	OnRecord func(*Record, *fingerprint.Info) // optional, e.g. for a summary
	// OnProblem, if set, is told of each problem as it is found.
	OnProblem func(Problem)
}

// NewCapturer returns a Capturer handing records to emit.
func NewCapturer(emit func(*Record) error) *Capturer {
	return &Capturer{emit: emit, an: fingerprint.NewAnalyzer(), seq: map[string]int64{}}
}

// startSource names the source whose records follow; with several sources,
// prefix keeps their sessions apart ("2:17").
func (c *Capturer) startSource(name, prefix string) {
	c.source, c.prefix = name, prefix
	c.Stats.Sources = append(c.Stats.Sources, SourceStats{Name: name})
}

// other counts an entry that is not a statement; Run adds them to the
// source's figures when it ends.
func (c *Capturer) other() {
	c.Stats.Ignored++
}

// add hands on one record from the current source.
func (c *Capturer) add(r *Record) error {
	r.Session = c.prefix + r.Session
	if r.Kind == KindQuit {
		c.src().Other++ // the source's other entries are added when it ends
		if _, open := c.seq[r.Session]; !open {
			return nil
		}
		delete(c.seq, r.Session)
		r.Seq = 0
		return c.emit(r)
	}
	if strings.TrimSpace(r.SQL) == "" {
		c.other()
		return nil
	}
	n, open := c.seq[r.Session]
	if !open {
		c.Stats.Sessions++
	}
	n++
	c.seq[r.Session] = n
	r.Seq = n
	if red, ok := fingerprint.Redact(r.SQL); ok {
		r.SQL = red
		c.Stats.Redacted++
	}
	info := c.an.Info(r.SQL)
	r.Fingerprint, r.Digest = info.Fingerprint, info.Digest
	c.Stats.Statements++
	c.src().Statements++
	c.Stats.Parsed, c.Stats.Fallback = c.an.Parsed, c.an.Fallback
	if c.OnRecord != nil {
		c.OnRecord(r, info)
	}
	return c.emit(r)
}

// Source is one input of a capture.
type Source struct {
	// Name is the file name or the redacted URL, for messages.
	Name   string
	Format string
	// FormatWhy says how the format was known, for the summary.
	FormatWhy string
	// R reads a file source; nil for the general_log table.
	R io.Reader
	// Port is the server's port in a pcap.
	Port int
	// Table reads mysql.general_log rows; set for a table source.
	Table TableReader
	// Replay reads an earlier capture file (Format "capture").
	Replay *Reader
}

// TableReader yields general_log rows: event time (µs since the epoch),
// thread id, command and argument. It returns io.EOF at the end.
type TableReader interface {
	Next() (ts int64, thread int64, command, argument string, err error)
}

// Run reads every source in turn.
func (c *Capturer) Run(ctx context.Context, sources []Source) error {
	for i, s := range sources {
		prefix := ""
		if len(sources) > 1 {
			prefix = strconv.Itoa(i+1) + ":"
		}
		c.startSource(s.Name, prefix)
		c.src().Format, c.src().FormatWhy = s.Format, s.FormatWhy
		ignored := c.Stats.Ignored
		var err error
		switch s.Format {
		case "slow":
			err = c.readSlow(ctx, s.R)
		case "general":
			if s.Table != nil {
				err = c.readGeneralTable(ctx, s.Table)
			} else {
				err = c.readGeneral(ctx, s.R)
			}
		case "pcap":
			err = c.readPcap(ctx, s.R, s.Port)
		case "tcpdump-text":
			err = c.readTcpdumpText(ctx, s.R, s.Port)
		case "capture":
			err = c.readCapture(ctx, s.Replay)
		default:
			err = fmt.Errorf("%w %q: read formats are %s", ErrUnknownFormat, s.Format, strings.Join(Formats, ", "))
		}
		c.src().Other += c.Stats.Ignored - ignored
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	return nil
}

// lineReader reads lines of any length, counting them.
type lineReader struct {
	br   *bufio.Reader
	line int64
	buf  []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 1<<20)}
}

// next returns the next line without its newline; the bytes are valid
// until the next call. It returns io.EOF after the last line.
func (l *lineReader) next() ([]byte, error) {
	if part, err := l.br.ReadSlice('\n'); err == nil {
		// The whole line is in the reader's buffer: no copy.
		l.line++
		b := part[:len(part)-1]
		if len(b) > 0 && b[len(b)-1] == '\r' {
			b = b[:len(b)-1]
		}
		return b, nil
	} else {
		l.buf = append(l.buf[:0], part...)
		if err != bufio.ErrBufferFull {
			if err == io.EOF && len(l.buf) > 0 {
				l.line++
				return l.buf, nil
			}
			return nil, err
		}
	}
	for {
		part, err := l.br.ReadSlice('\n')
		l.buf = append(l.buf, part...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(l.buf) > 0 {
			l.line++
			return l.buf, nil
		}
		if err != nil {
			return nil, err
		}
		l.line++
		b := bytes.TrimSuffix(l.buf, []byte{'\n'})
		return bytes.TrimSuffix(b, []byte{'\r'}), nil
	}
}

// readCapture reads an earlier capture file's records again.
func (c *Capturer) readCapture(ctx context.Context, rd *Reader) error {
	for {
		if rd.Line()%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		r := &Record{}
		err := rd.Next(r)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			c.bad(rd.Line(), "%v", err)
			continue
		}
		if err := c.add(r); err != nil {
			return err
		}
	}
}
