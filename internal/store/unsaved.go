package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/result"
)

// UnsavedFormat names the document a runner of a split load writes when
// it loses its store: what it measured, to be added later (report
// --import).
const UnsavedFormat = "shakedown-unsaved-parts"

// Unsaved is that document: the load, the runner and its steps.
type Unsaved struct {
	Format  string        `json:"format"`
	Version int           `json:"version"`
	Store   string        `json:"store"` // where it belongs, without password
	Split   UnsavedSplit  `json:"split"`
	Runner  UnsavedRunner `json:"runner"`
	Runs    []UnsavedRun  `json:"runs"`
}

// UnsavedSplit is the load, enough to find it in the store again.
type UnsavedSplit struct {
	Key         string    `json:"key"`
	Kind        string    `json:"kind"`
	Sequence    string    `json:"sequence"`
	Runners     int       `json:"runners"`
	StartAt     time.Time `json:"start_at,omitzero"`
	Description string    `json:"description"`
}

// UnsavedRunner is the runner that measured the steps.
type UnsavedRunner struct {
	Index         int       `json:"index"`
	Segment       string    `json:"segment"`
	Label         string    `json:"label"`
	Host          string    `json:"host"`
	RegisteredAt  time.Time `json:"registered_at"`
	ClockOffsetUS int64     `json:"clock_offset_us"`
}

// UnsavedRun is one step the runner measured.
type UnsavedRun struct {
	Step      int                  `json:"step"`
	Target    string               `json:"target"`
	Role      string               `json:"role,omitempty"`
	Workload  string               `json:"workload"`
	Threads   int                  `json:"threads"`
	Repeat    int                  `json:"repeat"`
	Command   string               `json:"command"`
	Status    string               `json:"status"`
	Error     string               `json:"error,omitempty"`
	Degraded  bool                 `json:"degraded,omitempty"`
	StartedAt time.Time            `json:"started_at"`
	WallS     float64              `json:"wall_s"`
	Result    *result.Result       `json:"result,omitempty"`
	Intervals []result.IntervalHDR `json:"intervals"`
}

// NewUnsaved starts the document of a runner of sp.
func NewUnsaved(where string, sp *Split, r *Runner) *Unsaved {
	return &Unsaved{Format: UnsavedFormat, Version: 1, Store: where,
		Split: UnsavedSplit{Key: sp.Key, Kind: sp.Kind, Sequence: sp.Sequence, Runners: sp.Runners, StartAt: sp.StartAt, Description: sp.Description},
		Runner: UnsavedRunner{Index: r.Index, Segment: r.Segment, Label: r.Label, Host: r.Host, RegisteredAt: r.RegisteredAt,
			ClockOffsetUS: r.ClockOffset.Microseconds()}}
}

// Add appends a step the store did not take.
func (u *Unsaved) Add(r *Run) {
	ur := UnsavedRun{Step: r.Step, Target: r.Target, Role: r.Role, Workload: r.Workload, Threads: r.Threads, Repeat: r.Repeat,
		Command: r.Command, Status: r.Status, Error: r.Error, Degraded: r.Degraded, StartedAt: r.StartedAt, WallS: r.WallS, Result: r.Result}
	if r.Part != nil {
		ur.Intervals = r.Part.Intervals
	}
	u.Runs = append(u.Runs, ur)
}

// Write writes the document to path, whole or not at all: a new file
// takes the place of the old one only once it is complete.
func (u *Unsaved) Write(path string) error {
	b, err := json.MarshalIndent(u, "", " ")
	if err != nil {
		return err
	}
	return outfile.WriteAtomic(path, append(b, '\n'))
}

// ErrUnsaved is the error of a runner whose store was lost: how many
// steps are kept in path, and how to add them.
func ErrUnsaved(u *Unsaved, path string) error {
	return fmt.Errorf("%d step(s) not stored in %s: they are in %s; add them with: shakedown report --store %s --import %s",
		len(u.Runs), u.Store, path, u.Store, path)
}

// UnsavedPath is where the runner of a split load with this key and
// index keeps what its store did not take: in dir, named after both.
func UnsavedPath(dir, key string, index int) string {
	return filepath.Join(dir, fmt.Sprintf("unsaved-%s-segment-%d.json", key[:min(len(key), 12)], index+1))
}

// ErrNotUnsaved means a file is not such a document.
var ErrNotUnsaved = errors.New("not a runner's unsaved results")

// ReadUnsaved reads the document.
func ReadUnsaved(r io.Reader) (*Unsaved, error) {
	var u Unsaved
	if err := json.NewDecoder(r).Decode(&u); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotUnsaved, err)
	}
	switch {
	case u.Format != UnsavedFormat:
		return nil, fmt.Errorf("%w: format %q, want %q", ErrNotUnsaved, u.Format, UnsavedFormat)
	case u.Version != 1:
		return nil, fmt.Errorf("%w: version %d, this shakedown reads 1", ErrNotUnsaved, u.Version)
	case u.Split.Key == "" || u.Split.Runners < 1 || u.Runner.Index < 0 || u.Runner.Index >= u.Split.Runners:
		return nil, fmt.Errorf("%w: no load or runner in it", ErrNotUnsaved)
	}
	for i, r := range u.Runs {
		if r.Result == nil && r.Status == RunOK {
			return nil, fmt.Errorf("%w: step %d is ok but has no result", ErrNotUnsaved, i+1)
		}
	}
	return &u, nil
}

// Import adds what a runner could not write: the load is found by its key
// (a split run is recorded again if it is not there), the runner
// registered if it is not, and each step added as the runner would have.
// A step the segment already reported is refused (ErrReported), and
// nothing after it is added. It returns how many steps were added.
func (s *Store) Import(ctx context.Context, u *Unsaved) (int, error) {
	sp := &Split{Key: u.Split.Key, Kind: u.Split.Kind, Sequence: u.Split.Sequence, Runners: u.Split.Runners, StartAt: u.Split.StartAt,
		Description: u.Split.Description}
	if u.Split.Kind == SplitSweep {
		got, err := s.SplitByKey(ctx, sp.Key)
		if err != nil {
			return 0, fmt.Errorf("the sweep these steps belong to is not in this store (it is in %s): %w", u.Store, err)
		}
		sp = got
	} else if err := s.JoinSplit(ctx, sp, nil, nil); err != nil {
		return 0, err
	}
	reg := &Runner{SplitID: sp.ID, Index: u.Runner.Index, Segment: u.Runner.Segment, Label: u.Runner.Label, Host: u.Runner.Host,
		RegisteredAt: u.Runner.RegisteredAt, ClockOffset: time.Duration(u.Runner.ClockOffsetUS) * time.Microsecond}
	if err := s.Register(ctx, reg); err != nil && !errors.Is(err, ErrSegmentTaken) {
		return 0, err
	}
	n := 0
	status := RunOK
	for _, ur := range u.Runs {
		var sweep int64
		if sp.Kind == SplitSweep {
			sweep = sp.SweepID
		}
		r := &Run{SweepID: sweep, Step: ur.Step, Target: ur.Target, Role: ur.Role, Workload: ur.Workload, Threads: ur.Threads,
			Repeat: ur.Repeat, Command: ur.Command, Status: ur.Status, Error: ur.Error, Degraded: ur.Degraded, StartedAt: ur.StartedAt,
			WallS: ur.WallS, Result: ur.Result, Part: &Part{SplitID: sp.ID, Index: u.Runner.Index, Intervals: ur.Intervals}}
		if _, err := s.AddRun(ctx, r); err != nil {
			return n, err
		}
		if ur.Status != RunOK {
			status = ur.Status
		}
		n++
	}
	if err := s.RunnerFinished(ctx, sp.ID, u.Runner.Index, status, time.Now()); err != nil {
		return n, err
	}
	return n, nil
}
