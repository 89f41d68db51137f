package dbcopy

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// checkpoint is a JSON-lines file: a header naming the copy, then a line
// per event, written through as it happens so that a killed copy leaves
// every finished range recorded. Safe for concurrent use.
type checkpoint struct {
	mu      sync.Mutex
	f       *os.File
	schema  bool                      // the schema was created
	post    map[string]bool           // table -> indexes, keys added
	planned map[string][]ckRange      // table -> ranges in order
	done    map[string]map[int]ckDone // table -> seq -> finished
}

type ckRange struct {
	Seq    int             `json:"seq"`
	Bounds json.RawMessage `json:"bounds"`
}

type ckDone struct {
	Rows  int64 `json:"rows"`
	Bytes int64 `json:"bytes"`
}

type ckLine struct {
	Copy   string   `json:"copy,omitempty"` // header: source -> target
	Event  string   `json:"event,omitempty"`
	Table  string   `json:"table,omitempty"`
	Range  *ckRange `json:"range,omitempty"`
	Seq    int      `json:"seq,omitempty"`
	Done   *ckDone  `json:"done,omitempty"`
	Tables []string `json:"tables,omitempty"`
}

// openCheckpoint starts path afresh, or with resume reads what it holds;
// id names the copy, and a file of another copy is refused.
func openCheckpoint(path, id string, resume bool) (*checkpoint, error) {
	c := &checkpoint{post: map[string]bool{}, planned: map[string][]ckRange{}, done: map[string]map[int]ckDone{}}
	if !resume {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("checkpoint %s exists: --resume continues that copy; remove the file to start again", path)
		}
		if err != nil {
			return nil, fmt.Errorf("create checkpoint: %w", err)
		}
		c.f = f
		return c, c.write(ckLine{Copy: id})
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint for --resume: %w", err)
	}
	c.f = f
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		var l ckLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			// A line cut by a kill is the last one: what it said did not happen.
			break
		}
		if line == 1 && l.Copy != id {
			f.Close()
			return nil, fmt.Errorf("checkpoint %s is of another copy (%s), not %s", path, l.Copy, id)
		}
		c.apply(l)
	}
	if err := sc.Err(); err != nil {
		f.Close()
		return nil, fmt.Errorf("read checkpoint %s: %w", path, err)
	}
	return c, nil
}

func (c *checkpoint) apply(l ckLine) {
	switch l.Event {
	case "schema":
		c.schema = true
	case "plan":
		c.planned[l.Table] = append(c.planned[l.Table], *l.Range)
	case "done":
		if c.done[l.Table] == nil {
			c.done[l.Table] = map[int]ckDone{}
		}
		c.done[l.Table][l.Seq] = *l.Done
	case "post":
		c.post[l.Table] = true
	}
}

func (c *checkpoint) write(l ckLine) error {
	if c == nil {
		return nil
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return nil
}

func (c *checkpoint) close() error {
	if c == nil {
		return nil
	}
	return c.f.Close()
}

// The recording side; a nil checkpoint records nothing.
func (c *checkpoint) schemaCreated() error { return c.write(ckLine{Event: "schema"}) }
func (c *checkpoint) plan(table string, seq int, bounds json.RawMessage) error {
	return c.write(ckLine{Event: "plan", Table: table, Range: &ckRange{Seq: seq, Bounds: bounds}})
}
func (c *checkpoint) finished(table string, seq int, rows, bytes int64) error {
	return c.write(ckLine{Event: "done", Table: table, Seq: seq, Done: &ckDone{Rows: rows, Bytes: bytes}})
}
func (c *checkpoint) postDone(table string) error {
	return c.write(ckLine{Event: "post", Table: table})
}

// The reading side, for a resumed copy.
func (c *checkpoint) hasSchema() bool { return c != nil && c.schema }
func (c *checkpoint) hasPost(table string) bool {
	return c != nil && c.post[table]
}
func (c *checkpoint) replay(table string) (bounds []json.RawMessage, done map[int]ckDone) {
	if c == nil {
		return nil, nil
	}
	for _, r := range c.planned[table] {
		bounds = append(bounds, r.Bounds)
	}
	return bounds, c.done[table]
}
