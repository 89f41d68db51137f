// Package capture turns what a production server can give (its slow log,
// its general log, a pcap of its traffic) into a capture file: one JSON
// object a line, each statement with its session, its order within the
// session, timestamp, default database, text, duration, rows and error
// where the source has them. Everything streams: memory depends on the
// number of open sessions and the variety of statements, never on the size
// of the input. Passwords never reach a capture file.
package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// FileVersion is the version of the capture file format; a reader refuses
// a file of a later version.
const FileVersion = 1

// Header is the first line of a capture file.
type Header struct {
	// Capture is the format version; its key marks the file as ours.
	Capture int `json:"shakedown_capture"`
	// Created is when the file was made; capture leaves it out (zero), so
	// that the same input always gives the same file, byte for byte.
	Created time.Time `json:"created,omitzero"`
	Sources []string  `json:"sources"`
}

// Record is one line of a capture file after the header: a statement, or
// the end of a session (Kind "quit").
type Record struct {
	Session string `json:"session"`
	Seq     int64  `json:"seq"`
	// TS is the start time in microseconds since the Unix epoch (0: unknown).
	TS   int64  `json:"ts,omitempty"`
	Kind string `json:"kind,omitempty"`
	DB   string `json:"db,omitempty"`
	SQL  string `json:"sql,omitempty"`
	// Prepared statements were executed with COM_STMT_EXECUTE: SQL holds
	// '?' and Params the values (numbers, strings, null, or {"hex": "..."}
	// for bytes that are not UTF-8).
	Prepared     bool   `json:"prepared,omitempty"`
	Params       []any  `json:"params,omitempty"`
	DurationUS   *int64 `json:"duration_us,omitempty"`
	RowsSent     *int64 `json:"rows_sent,omitempty"`
	RowsExamined *int64 `json:"rows_examined,omitempty"`
	Error        int    `json:"error,omitempty"`
	Fingerprint  string `json:"fingerprint,omitempty"`
	Digest       string `json:"digest,omitempty"`
}

// KindQuit marks the end of a session.
const KindQuit = "quit"

// Writer writes a capture file. It is not safe for concurrent use.
type Writer struct {
	bw  *bufio.Writer
	enc *json.Encoder
	buf []byte
}

// NewWriter writes the header to w and returns a Writer; Flush at the end.
func NewWriter(w io.Writer, sources []string, now time.Time) (*Writer, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Header{Capture: FileVersion, Created: now.UTC(), Sources: sources}); err != nil {
		return nil, fmt.Errorf("write capture header: %w", err)
	}
	return &Writer{bw: bw, enc: enc}, nil
}

// Write appends one record.
func (w *Writer) Write(r *Record) error {
	if b, ok := appendRecord(w.buf[:0], r); ok {
		w.buf = b
		if _, err := w.bw.Write(b); err != nil {
			return fmt.Errorf("write capture: %w", err)
		}
		return nil
	}
	if err := w.enc.Encode(r); err != nil {
		return fmt.Errorf("write capture: %w", err)
	}
	return nil
}

// Flush writes what is buffered.
func (w *Writer) Flush() error { return w.bw.Flush() }

// ErrNotCapture means a file is not a capture file.
var ErrNotCapture = errors.New("not a shakedown capture file")

// Reader reads a capture file record by record.
type Reader struct {
	sc     *bufio.Scanner
	Header Header
	line   int64
}

// maxLine bounds one record (a statement of up to 64 MiB, as
// max_allowed_packet allows).
const maxLine = 96 << 20

// NewReader reads the header of a capture file.
func NewReader(r io.Reader) (*Reader, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256<<10), maxLine)
	rd := &Reader{sc: sc}
	if !sc.Scan() {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("read capture: %w", err)
		}
		return nil, fmt.Errorf("%w: it is empty", ErrNotCapture)
	}
	rd.line = 1
	if err := json.Unmarshal(sc.Bytes(), &rd.Header); err != nil || rd.Header.Capture == 0 {
		return nil, fmt.Errorf("%w: its first line is not a capture header (make one with shakedown capture)", ErrNotCapture)
	}
	if rd.Header.Capture > FileVersion {
		return nil, fmt.Errorf("capture file version %d is newer than this shakedown reads (%d): upgrade shakedown", rd.Header.Capture, FileVersion)
	}
	return rd, nil
}

// Next reads the next record into r; it returns io.EOF at the end.
func (rd *Reader) Next(r *Record) error {
	if !rd.sc.Scan() {
		if err := rd.sc.Err(); err != nil {
			return fmt.Errorf("read capture line %d: %w", rd.line+1, err)
		}
		return io.EOF
	}
	rd.line++
	*r = Record{}
	if parseRecord(rd.sc.Bytes(), r) {
		return nil
	}
	*r = Record{}
	dec := json.NewDecoder(bytes.NewReader(rd.sc.Bytes()))
	dec.UseNumber()
	if err := dec.Decode(r); err != nil {
		return fmt.Errorf("capture line %d: %w", rd.line, err)
	}
	return nil
}

// Line is the number of the line last read.
func (rd *Reader) Line() int64 { return rd.line }

func i64(v int64) *int64 { return &v }
