package verify

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"unicode/utf8"
)

// ErrCheckpointMismatch means a --resume file was written by a different
// check (other servers, databases, tables or --where).
var ErrCheckpointMismatch = errors.New("checkpoint is for a different check")

// Value is a key value in a checkpoint: text when it is UTF-8, else hex.
type Value struct {
	B    []byte
	Null bool
}

// MarshalJSON writes null, a string, or {"hex": "..."}.
func (v Value) MarshalJSON() ([]byte, error) {
	switch {
	case v.Null:
		return []byte("null"), nil
	case utf8.Valid(v.B):
		return json.Marshal(string(v.B))
	}
	return json.Marshal(map[string]string{"hex": hex.EncodeToString(v.B)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (v *Value) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*v = Value{Null: true}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*v = Value{B: []byte(s)}
		return nil
	}
	var h map[string]string
	if err := json.Unmarshal(b, &h); err != nil {
		return err
	}
	raw, err := hex.DecodeString(h["hex"])
	if err != nil {
		return err
	}
	*v = Value{B: raw}
	return nil
}

func (v Value) display(binary bool) string {
	if p := displayValue(v.B, binary); p != nil && !v.Null {
		return *p
	}
	return "NULL"
}

// Fingerprint identifies a check for --resume.
type Fingerprint struct {
	Source    string   `json:"source"`
	Target    string   `json:"target"`
	Databases []string `json:"databases"`
	Tables    []string `json:"tables"`
	Exclude   []string `json:"exclude"`
	Where     string   `json:"where"`
}

// Checkpoint is a --resume file: JSON lines appended as the check goes.
//
//	{"checkpoint": 1, "check": {...}}                    the check it belongs to
//	{"table": "db.t", "scheme": "int", "key": ["id"]}    how a table is chunked
//	{"table": "db.t", "plan": {"seq": 3, ...}}           a chunk, as planned
//	{"table": "db.t", "done": 3, "rows_source": ...}     a finished chunk and what it found
//
// Plan lines come in key order, so a resumed run replays the same chunks,
// skips the finished ones, and plans on from the last. A line cut short by
// a kill is dropped. Safe for concurrent use.
type Checkpoint struct {
	mu      sync.Mutex
	f       *os.File
	w       *bufio.Writer
	path    string
	tables  map[string]*ckTable
	resumed bool // the file held an earlier run
}

type ckTable struct {
	Scheme  scheme
	Key     []string
	planned []*chunk
	done    map[int]*ckDone
}

type ckLine struct {
	Checkpoint int          `json:"checkpoint,omitempty"`
	Check      *Fingerprint `json:"check,omitempty"`
	Table      string       `json:"table,omitempty"`
	Scheme     scheme       `json:"scheme,omitempty"`
	Key        []string     `json:"key,omitempty"`
	Plan       *chunk       `json:"plan,omitempty"`
	Done       *int         `json:"done,omitempty"`
	RowsSource int64        `json:"rows_source,omitempty"`
	RowsTarget int64        `json:"rows_target,omitempty"`
	Rows       []ckRow      `json:"rows,omitempty"`
}

// ckDone is a finished chunk as recorded.
type ckDone struct {
	RowsSource, RowsTarget int64
	Rows                   []ckRow
}

type ckRow struct {
	Key     []KeyPart `json:"key"`
	Kind    string    `json:"kind"`
	Columns []string  `json:"columns,omitempty"`
	Count   int64     `json:"count"`
	ID      string    `json:"id"`
	Fix     []string  `json:"fix,omitempty"`
}

// OpenCheckpoint opens (or creates) a checkpoint file for the check fp.
// An existing file written for another check is refused with an error
// wrapping ErrCheckpointMismatch. The caller closes it.
func OpenCheckpoint(path string, fp Fingerprint) (*Checkpoint, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint: %w", err)
	}
	c := &Checkpoint{f: f, path: path, tables: map[string]*ckTable{}}
	good, err := c.load(fp)
	if err != nil {
		f.Close()
		return nil, err
	}
	// Drop a torn last line so that appends start on a line of their own.
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("open checkpoint: %w", err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("open checkpoint: %w", err)
	}
	c.w = bufio.NewWriter(f)
	if good == 0 {
		if err := c.append(ckLine{Checkpoint: 1, Check: &fp}); err != nil {
			f.Close()
			return nil, err
		}
	}
	return c, nil
}

// load reads the file and returns the length of its valid part.
func (c *Checkpoint) load(fp Fingerprint) (int64, error) {
	data, err := io.ReadAll(c.f)
	if err != nil {
		return 0, fmt.Errorf("read checkpoint: %w", err)
	}
	var good int64
	first := true
	lineNo := 1
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 {
			break // torn
		}
		var l ckLine
		if err := json.Unmarshal(data[:nl], &l); err != nil {
			if len(bytes.TrimSpace(data[nl+1:])) == 0 {
				break // the last line, cut short by a kill
			}
			return 0, fmt.Errorf("read checkpoint %s: line %d is damaged (%v): remove the file to start over", c.path, lineNo, err)
		}
		lineNo++
		if first {
			if l.Checkpoint != 1 || l.Check == nil {
				return 0, fmt.Errorf("%s is not a shakedown verify checkpoint: name a new file or remove it", c.path)
			}
			if !sameFingerprint(*l.Check, fp) {
				return 0, fmt.Errorf("%w: %s was written for %s -> %s (databases %v, tables %v, where %q): remove it or name another file",
					ErrCheckpointMismatch, c.path, l.Check.Source, l.Check.Target, l.Check.Databases, l.Check.Tables, l.Check.Where)
			}
			first = false
			c.resumed = true
		} else {
			c.apply(&l)
		}
		good += int64(nl + 1)
		data = data[nl+1:]
	}
	return good, nil
}

func sameFingerprint(a, b Fingerprint) bool {
	return a.Source == b.Source && a.Target == b.Target && slices.Equal(a.Databases, b.Databases) &&
		slices.Equal(a.Tables, b.Tables) && slices.Equal(a.Exclude, b.Exclude) && a.Where == b.Where
}

func (c *Checkpoint) apply(l *ckLine) {
	switch {
	case l.Scheme != "":
		c.tables[l.Table] = &ckTable{Scheme: l.Scheme, Key: l.Key, done: map[int]*ckDone{}}
	case l.Plan != nil:
		if t := c.tables[l.Table]; t != nil {
			t.planned = append(t.planned, l.Plan)
		}
	case l.Done != nil:
		if t := c.tables[l.Table]; t != nil {
			t.done[*l.Done] = &ckDone{RowsSource: l.RowsSource, RowsTarget: l.RowsTarget, Rows: l.Rows}
		}
	}
}

func (c *Checkpoint) append(l ckLine) error {
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	b = append(b, '\n')
	if _, err := c.w.Write(b); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	// Written through at once: a kill must not lose a finished chunk.
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return nil
}

// table returns what an earlier run recorded for a table chunked the same
// way, and records the table for this run.
func (c *Checkpoint) table(name string, s scheme, key []string) (planned []*chunk, done map[int]*ckDone, err error) {
	if c == nil {
		return nil, nil, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.tables[name]; t != nil && t.Scheme == s && slices.Equal(t.Key, key) {
		return t.planned, t.done, nil
	}
	c.tables[name] = &ckTable{Scheme: s, Key: key, done: map[int]*ckDone{}}
	return nil, nil, c.append(ckLine{Table: name, Scheme: s, Key: key})
}

// plan records a newly planned chunk.
func (c *Checkpoint) plan(table string, ch *chunk) error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.append(ckLine{Table: table, Plan: ch})
}

// done records a finished chunk and the differences it found.
func (c *Checkpoint) done(table string, seq int, out *chunkOutcome) error {
	if c == nil {
		return nil
	}
	l := ckLine{Table: table, Done: &seq, RowsSource: out.rowsSource, RowsTarget: out.rowsTarget}
	for _, r := range out.diffs {
		l.Rows = append(l.Rows, ckRow{Key: r.Key, Kind: r.Kind, Columns: r.Columns, Count: r.Count, ID: r.id, Fix: r.fix})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.append(l)
}

// outcome turns a recorded chunk back into what checking it found.
func (d *ckDone) outcome() *chunkOutcome {
	out := &chunkOutcome{rowsSource: d.RowsSource, rowsTarget: d.RowsTarget}
	for _, r := range d.Rows {
		out.diffs = append(out.diffs, &RowDiff{Key: r.Key, Kind: r.Kind, Columns: r.Columns, Count: r.Count, id: r.ID, fix: r.Fix})
	}
	return out
}

// Resumed says the file held an earlier run of the same check.
func (c *Checkpoint) Resumed() bool { return c != nil && c.resumed }

// Close flushes and closes the file.
func (c *Checkpoint) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.w.Flush()
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	return err
}
