package report

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/shakedown/shakedown/internal/store"
)

// Say writes what the comparison with the baseline found, for a person
// (standard error): figures that moved only with the machine are said and
// are no regression; slower reports whether anything came out slower.
func (j *BaselineJudgement) Say(w io.Writer) (slower bool) {
	name := j.Baseline.Name
	if len(j.Moved) > 0 {
		fmt.Fprintf(w, "inconclusive against baseline %s: the machine changed, not the server: %s\n", name, strings.Join(j.Moved, "; "))
	}
	if len(j.Slower) == 0 {
		fmt.Fprintf(w, "nothing is slower than baseline %s\n", name)
		return false
	}
	fmt.Fprintf(w, "slower than baseline %s: %s\n", name, strings.Join(j.Slower, "; "))
	return true
}

// JudgeSweep judges a finished sweep against the baseline name, and
// writes its summary against the baseline to out. The store is read even
// when ctx is cancelled: an interrupted sweep is judged too.
func JudgeSweep(ctx context.Context, out io.Writer, st *store.Store, name string, sweepID int64) (*BaselineJudgement, error) {
	rec := context.WithoutCancel(ctx)
	b, err := LookupBaseline(rec, st, name, "sweep --baseline")
	if err != nil {
		return nil, err
	}
	runs, err := st.Runs(rec, sweepID)
	if err != nil {
		return nil, err
	}
	j, err := JudgeBaseline(rec, st, b, runs)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "\nAgainst baseline %s (%s of %s):\n\n", b.Name, b.Source, b.Target)
	return j, WriteSummary(out, j.Report)
}
