package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Version is the version of the JSON document.
const Version = 1

// Kinds of fact.
const (
	Setting  = "setting"
	Counter  = "counter"
	Identity = "identity"
)

// Fact is one row: a value, or the reason it is unknown.
type Fact struct {
	Name   string `json:"name"`
	Group  string `json:"group"`
	Kind   string `json:"kind"`
	Value  string `json:"value,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Known reports whether the fact has a value.
func (f Fact) Known() bool { return f.Reason == "" }

// Subject names what a fact set is about.
type Subject struct {
	PID     int    `json:"pid,omitempty"`
	Sandbox string `json:"sandbox,omitempty"`
	Target  string `json:"target,omitempty"`
	DataDir string `json:"datadir,omitempty"`
	Remote  bool   `json:"remote,omitempty"`
}

// Facts is one host's facts: the JSON document.
type Facts struct {
	Version     int       `json:"version"`
	Host        string    `json:"host"`
	CollectedAt time.Time `json:"collected_at"`
	Subject     Subject   `json:"subject"`
	Facts       []Fact    `json:"facts"`
}

// Get returns the fact called name.
func (f *Facts) Get(name string) (Fact, bool) {
	for _, x := range f.Facts {
		if x.Name == name {
			return x, true
		}
	}
	return Fact{}, false
}

// Options says what to collect.
type Options struct {
	// Root is prefixed to every /proc and /sys path: "" on a live host, a
	// directory holding a copied tree in tests.
	Root string
	// PID is the server process; 0 leaves the process and cgroup rows
	// unknown.
	PID int
	// DataDir is the server's data directory; "" leaves the disk rows
	// unknown.
	DataDir string
	// Remote, when set, names the host the server runs on: no /proc or
	// /sys row describes it, so each says so.
	Remote string
	// SQL, when set, gives the rows only a server can give (@@back_log...).
	SQL Querier
	// Hostname is recorded as the host's name.
	Hostname string
	// Now is the collection time.
	Now time.Time
}

// env is what a source reads through.
type env struct {
	opts Options
	r    reader
}

// source is one group of rows. A source never fails: what it cannot read
// becomes rows that say why.
type source struct {
	name    string
	collect func(ctx context.Context, e *env) []Fact
}

// sources in the order their rows are listed.
var sources = []source{
	{"system", systemFacts},
	{"numa", numaFacts},
	{"process", processFacts},
	{"cgroup", cgroupFacts},
	{"memory", memoryFacts},
	{"disk", diskFacts},
	{"net", netFacts},
	{"fs", fsFacts},
	{"sql", sqlFacts},
}

// Collect reads every source. It does not fail: unreadable rows carry
// their reason.
func Collect(ctx context.Context, opts Options) *Facts {
	e := &env{opts: opts, r: reader{root: opts.Root}}
	if opts.Remote != "" {
		e.r.remote = fmt.Sprintf("not local: the server runs on %s; run shakedown host facts --json FILE there and pass FILE to host diff", opts.Remote)
	}
	out := &Facts{Version: Version, Host: opts.Hostname, CollectedAt: opts.Now.UTC(),
		Subject: Subject{PID: opts.PID, DataDir: opts.DataDir, Remote: opts.Remote != ""}}
	for _, s := range sources {
		out.Facts = append(out.Facts, s.collect(ctx, e)...)
	}
	return out
}

// reader reads /proc and /sys files below root, turning failures into
// reasons a reader can act on.
type reader struct {
	root   string
	remote string // set: every read fails with this reason
}

// read returns a file's trimmed text, or "" and why it could not be read.
func (r reader) read(path string) (string, string) {
	if r.remote != "" {
		return "", r.remote
	}
	b, err := os.ReadFile(filepath.Join(r.root, path))
	if err != nil {
		return "", why(path, err)
	}
	return strings.TrimSpace(string(b)), ""
}

// list returns the names in a directory, or why it could not be read.
func (r reader) list(dir string) ([]string, string) {
	if r.remote != "" {
		return nil, r.remote
	}
	ents, err := os.ReadDir(filepath.Join(r.root, dir))
	if err != nil {
		return nil, why(dir, err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names, ""
}

// exists reports whether a path is there.
func (r reader) exists(path string) bool {
	if r.remote != "" {
		return false
	}
	_, err := os.Stat(filepath.Join(r.root, path))
	return err == nil
}

// why turns a read error into a reason.
func why(path string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "absent on this kernel: no " + path
	case errors.Is(err, fs.ErrPermission):
		return "permission denied reading " + path
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("cannot read %s: %v", path, pe.Err)
	}
	return fmt.Sprintf("cannot read %s: %v", path, err)
}

// fileFact is a row read from one file.
func (e *env) fileFact(name, group, kind, path string) Fact {
	v, reason := e.r.read(path)
	return mk(name, group, kind, v, reason)
}

// mk is a row with a value or a reason.
func mk(name, group, kind, value, reason string) Fact {
	if reason != "" {
		return Fact{Name: name, Group: group, Kind: kind, Reason: reason}
	}
	if value == "" {
		return Fact{Name: name, Group: group, Kind: kind, Reason: "empty"}
	}
	return Fact{Name: name, Group: group, Kind: kind, Value: value}
}

// unknown is a row whose value cannot be had.
func unknown(name, group, kind, reason string) Fact {
	return Fact{Name: name, Group: group, Kind: kind, Reason: reason}
}

// unknowns is a row for each of names whose values cannot be had, all for
// one reason.
func unknowns(names []string, group, kind, reason string) []Fact {
	out := make([]Fact, 0, len(names))
	for _, n := range names {
		out = append(out, unknown(n, group, kind, reason))
	}
	return out
}
