package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/splitload"
	"github.com/shakedown/shakedown/internal/store"
)

// StoredRun is the run's row in the store, its status by result.StatusOf;
// args is the command line after the command, stored without what may
// carry a password.
func (j *Job) StoredRun(res *result.Result, runErr error, started time.Time, args []string) *store.Run {
	status, why := result.StatusOf(res, runErr, errors.Is(runErr, ErrInterrupted))
	return store.NewRun(res, status, why, j.Workload(), j.Threads(), strings.Join(PublicArgs(args), " "), started, time.Since(started).Seconds())
}

// Ending is the run's status by result.StatusOf (interrupted: whether
// it was stopped before its end) and the error a command that ran it ends
// with: nil for an ok run alone, so that the exit code follows the status
// the run is stored with.
func Ending(res *result.Result, runErr error, interrupted bool) (string, error) {
	status, why := result.StatusOf(res, runErr, interrupted)
	switch {
	case status == result.StatusOK:
		return status, nil
	case errors.Is(runErr, ErrInterrupted) || status == result.StatusInterrupted && runErr == nil:
		return status, errors.New("interrupted: the results above cover what ran before the stop")
	case runErr != nil:
		return status, runErr
	}
	// It ran its course, but what it measured does not stand.
	return status, fmt.Errorf("run failed: %w", why)
}

// PublicArgs drops the options that may carry a password, and names a
// store on a server without the password its URL may hold.
func PublicArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.ReplaceAll(strings.SplitN(strings.TrimLeft(a, "-"), "=", 2)[0], "_", "-")
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
			continue
		}
		switch name {
		case "target", "mysql-password":
			if !strings.Contains(a, "=") {
				i++ // the value is the next argument
			}
			continue
		case "store":
			if flag, v, ok := strings.Cut(a, "="); ok {
				a = flag + "=" + store.Display(v)
			} else if i+1 < len(args) {
				i++
				out = append(out, a, store.Display(args[i]))
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// PublicCommand is a command line for the store: without the options
// that may carry a password, nor those that differ between the runners of
// a split load.
func PublicCommand(args []string) string {
	var out []string
	skip := map[string]bool{"segment": true, "segment-index-env": true, "start-at": true}
	pub := PublicArgs(args)
	for i := 0; i < len(pub); i++ {
		a := pub[i]
		name := strings.SplitN(strings.TrimLeft(a, "-"), "=", 2)[0]
		if strings.HasPrefix(a, "--") && skip[name] {
			if !strings.Contains(a, "=") {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}

// Keep records the run in st as a run of its own, or, when sr is not
// nil, as this runner's part of a split load; it says on out where the
// result went. A runner's part the store would not take is kept in the
// runner's own file, and the error (from splitload.Runner.Save) says so.
func (j *Job) Keep(ctx context.Context, out io.Writer, st *store.Store, sr *splitload.Runner, ivs []result.IntervalHDR,
	res *result.Result, runErr error, started time.Time, args []string) error {
	run := j.StoredRun(res, runErr, started, args)
	if sr != nil {
		run.Command = PublicCommand(append([]string{"run"}, args...))
		run.Part = sr.Part(ivs)
		if err := sr.Save(ctx, run); err != nil {
			return err
		}
		fmt.Fprintf(out, "Result stored in %s as segment %s; shakedown report --store %s --runs all merges the runners\n", st.Path(), sr.Label(), st.Path())
		return nil
	}
	id, err := st.AddRun(ctx, run)
	switch {
	case err != nil:
		return fmt.Errorf("--store %s: %w", st.Path(), err)
	case len(res.Stalls) > 0:
		fmt.Fprintf(out, "Result stored in %s as run %d (%s); shakedown report --stall %d prints its stall captures in full\n", st.Path(), id, run.Status, id)
	case runErr == nil && run.Status != store.RunOK:
		// It ran its course, but reports will leave it out: say why.
		fmt.Fprintf(out, "Result stored in %s as %s: %s\n", st.Path(), run.Status, run.Error)
	default:
		fmt.Fprintf(out, "Result stored in %s\n", st.Path())
	}
	return nil
}
