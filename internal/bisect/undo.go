package bisect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/vars"
)

// undoFormat is the layout version of the undo file.
const undoFormat = 1

// undoFile is what bisect writes before its first change to the control,
// so that "vars bisect --undo FILE" can put the server back after a crash.
// It holds no password: the control is named by its URL without one, and
// variables whose name says password are left out.
type undoFile struct {
	Format  int       `json:"format"`
	Tool    string    `json:"tool"`
	Control string    `json:"control"`
	Written time.Time `json:"written"`
	PID     int       `json:"pid"`
	// Variables are every global variable of the control before bisect
	// changed anything.
	Variables map[string]string `json:"variables"`
	// Changes are the variables bisect may set.
	Changes []string `json:"changes"`
	// Sandbox is set when the control is a sandbox that bisect may restart
	// with other settings; Settings are the ones to restart it with.
	Sandbox *undoSandbox `json:"sandbox,omitempty"`
	// Restarted is set before bisect first restarts the control: a restart
	// resets every variable set at runtime, so every variable is restored.
	Restarted bool `json:"restarted"`
	// Applied are the variables at the candidate's value right now (for
	// people reading the file; restoring does not depend on it).
	Applied []string `json:"applied"`
}

type undoSandbox struct {
	Home     string   `json:"home"`
	Name     string   `json:"name"`
	Settings []string `json:"settings"`
}

// secret reports whether a variable may hold a credential, which is never
// written to the undo file.
func secret(name string) bool {
	return strings.Contains(name, "password") || strings.Contains(name, "_auth")
}

func newUndo(tool, control string, orig map[string]string, changes []string) *undoFile {
	f := &undoFile{Format: undoFormat, Tool: tool, Control: control, PID: os.Getpid(),
		Variables: map[string]string{}, Changes: append([]string(nil), changes...), Applied: []string{}}
	for k, v := range orig {
		if !secret(k) {
			f.Variables[k] = v
		}
	}
	sort.Strings(f.Changes)
	return f
}

// write saves the file atomically and durably: a crash leaves the old
// version or the new one, never half of one.
func (f *undoFile) write(path string) error {
	f.Written = time.Now().UTC().Truncate(time.Second)
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("write undo file: %w", err)
	}
	if err := outfile.WriteAtomic(path, append(b, '\n')); err != nil {
		return fmt.Errorf("write undo file: %w", err)
	}
	return nil
}

// readUndo reads an undo file; a missing or malformed one is bad input.
func readUndo(path string) (*undoFile, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usage.Errorf("vars bisect --undo %s: no such file", path)
	}
	if err != nil {
		return nil, fmt.Errorf("read undo file: %w", err)
	}
	f := &undoFile{}
	if err := json.Unmarshal(b, f); err != nil {
		return nil, usage.Errorf("vars bisect --undo %s: not an undo file written by vars bisect: %v", path, err)
	}
	if f.Format != undoFormat || f.Control == "" || len(f.Variables) == 0 {
		return nil, usage.Errorf("vars bisect --undo %s: not an undo file written by vars bisect (format %d, control %q, %d variables)", path, f.Format, f.Control, len(f.Variables))
	}
	for _, n := range f.Changes {
		if !nameRE.MatchString(n) {
			return nil, usage.Errorf("vars bisect --undo %s: %q is not a variable name", path, n)
		}
	}
	return f, nil
}

// UndoControl returns the control's URL to restore: the one given on the
// command line, else the one the undo file at path names, without its
// password, which the caller finds as for any target.
func UndoControl(path string, given []string) (string, error) {
	if len(given) == 1 {
		return given[0], nil
	}
	f, err := readUndo(path)
	if err != nil {
		return "", err
	}
	return f.Control, nil
}

// Restored says what a restore did.
type Restored struct {
	Control   string
	Restarted bool     // the sandbox was restarted with its original settings
	Set       []string // variables set back, "name: from -> to"
	Checked   int      // variables re-read and found at their original value
}

// restore puts the control back as f recorded it: the sandbox restarted
// with its original settings when they changed, then every variable bisect
// may have changed (every variable, after a restart) set back where it
// differs, then all of them re-read to verify.
func restore(ctx context.Context, srv *server, f *undoFile) (*Restored, error) {
	out := &Restored{Control: srv.tgt.String()}
	if sb := f.Sandbox; sb != nil {
		inst, err := sandbox.Get(sb.Home, sb.Name)
		if err != nil {
			return out, fmt.Errorf("restore: %w", err)
		}
		if !inst.Running || !slices.Equal(inst.Settings, sb.Settings) {
			rctx, cancel := context.WithTimeout(ctx, restartTimeout)
			_, err := sandbox.Restart(rctx, sb.Home, sb.Name, sb.Settings)
			cancel()
			if err != nil {
				return out, fmt.Errorf("restore: %w", err)
			}
			out.Restarted = true
			if err := srv.reconnect(ctx); err != nil {
				return out, fmt.Errorf("restore: %w", err)
			}
		}
	}
	names := f.Changes
	if f.Restarted || out.Restarted {
		names = nil
		for n := range f.Variables {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	now, err := srv.read(ctx)
	if err != nil {
		return out, fmt.Errorf("restore: %w", err)
	}
	var errs []error
	for _, n := range names {
		got, want, ok := f.restorable(now, n)
		if !ok || vars.Normalize(got) == vars.Normalize(want) {
			continue
		}
		if err := srv.setGlobal(ctx, n, want); err != nil {
			errs = append(errs, err)
			continue
		}
		out.Set = append(out.Set, fmt.Sprintf("%s: %s -> %s", n, got, want))
	}
	now, err = srv.read(ctx)
	if err != nil {
		return out, fmt.Errorf("verify restore: %w", err)
	}
	var wrong []string
	for _, n := range names {
		got, want, ok := f.restorable(now, n)
		if !ok {
			continue
		}
		if vars.Normalize(got) != vars.Normalize(want) {
			wrong = append(wrong, fmt.Sprintf("%s is %s, was %s", n, got, want))
			continue
		}
		out.Checked++
	}
	if len(wrong) > 0 {
		errs = append(errs, fmt.Errorf("verify restore: %s", strings.Join(wrong, "; ")))
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("restore %s: %w", srv.tgt, errors.Join(errs...))
	}
	return out, nil
}

// restorable returns what n reads now and what f recorded for it, and
// false for a variable restore leaves alone: not recorded, not read,
// ignored or secret.
func (f *undoFile) restorable(now map[string]string, n string) (got, want string, ok bool) {
	want, ok = f.Variables[n]
	got, have := now[n]
	return got, want, ok && have && !vars.Ignored(n) && !secret(n)
}

// Undo restores the control an interrupted bisect left changed, from the
// undo file it wrote, and removes the file once every variable reads back
// as it was. tgt, when not nil, is how to reach the control (the file names
// it without a password); it must be the same server.
func Undo(ctx context.Context, path string, tgt *target.Target, progress io.Writer) (*Restored, error) {
	if progress == nil {
		progress = io.Discard
	}
	f, err := readUndo(path)
	if err != nil {
		return nil, err
	}
	if tgt == nil {
		if tgt, err = target.Parse(f.Control); err != nil {
			return nil, usage.Errorf("vars bisect --undo %s: control %q: %v", path, f.Control, err)
		}
	}
	fmt.Fprintf(progress, "restoring %s from %s (written %s by pid %d)\n", f.Control, path, f.Written.Format(time.RFC3339), f.PID)
	if f.Sandbox != nil {
		// The server may be down, or up with other settings: restart it
		// before connecting.
		inst, err := sandbox.Get(f.Sandbox.Home, f.Sandbox.Name)
		if err != nil {
			return nil, fmt.Errorf("restore: %w", err)
		}
		if !inst.Running {
			rctx, cancel := context.WithTimeout(ctx, restartTimeout)
			_, err := sandbox.Restart(rctx, f.Sandbox.Home, f.Sandbox.Name, f.Sandbox.Settings)
			cancel()
			if err != nil {
				return nil, fmt.Errorf("restore: %w", err)
			}
			f.Restarted = true
		}
	}
	srv, err := openServer(ctx, tgt)
	if err != nil {
		return nil, fmt.Errorf("restore: %w (give the control's URL, with its password, after --undo FILE)", err)
	}
	defer srv.Close()
	now, err := srv.read(ctx)
	if err != nil {
		return nil, err
	}
	for _, id := range []string{"hostname", "port"} {
		if f.Variables[id] != "" && now[id] != f.Variables[id] {
			return nil, usage.Errorf("vars bisect --undo %s: the file is for the server with %s %s, but %s has %s %s; give the control's URL after --undo FILE",
				path, id, f.Variables[id], tgt, id, now[id])
		}
	}
	res, err := restore(ctx, srv, f)
	if err != nil {
		return res, err
	}
	if err := os.Remove(path); err != nil {
		return res, fmt.Errorf("restored, but could not remove the undo file: %w", err)
	}
	return res, nil
}
