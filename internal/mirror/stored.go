package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/usage"
)

// Stored is the document of a mirror's snapshot evidence (store.KindMirror):
// one snapshot period as one candidate's record. Every record of a run
// holds the whole period, all candidates included.
type Stored struct {
	// Run is the run's key, the same in each of its records; the ID users
	// name a run by is its first record's.
	Run       string `json:"run"`
	Control   string `json:"control"`
	Candidate string `json:"candidate"`
	Period
}

// Recorder stores each snapshot period of a run (Record), one record per
// candidate. It is used from one goroutine at a time.
type Recorder struct {
	st      *store.Store
	tool    string
	run     string
	control string
	cands   []string
	first   int64
}

// NewRecorder records opts' run in st; tool is shakedown's version.
func NewRecorder(st *store.Store, opts Options, tool string) *Recorder {
	r := &Recorder{st: st, tool: tool, run: time.Now().UTC().Format(time.RFC3339Nano) + " " + opts.Listen, control: opts.Control.Redacted()}
	for _, c := range opts.Candidates {
		r.cands = append(r.cands, c.Target.Redacted())
	}
	return r
}

// ID is the run's ID (its first record's), 0 before any.
func (r *Recorder) ID() int64 { return r.first }

// Record stores p, one record per candidate: failed where a class has
// differed in the run so far, incomplete where nothing was compared yet.
func (r *Recorder) Record(ctx context.Context, p Period) error {
	for i, name := range r.cands {
		doc, err := json.Marshal(Stored{Run: r.run, Control: r.control, Candidate: p.Total.Candidates[i].Name, Period: p})
		if err != nil {
			return fmt.Errorf("store the mirror's snapshot: %w", err)
		}
		outcome, summary := Canary(p.Total, i)
		e := &store.Evidence{Kind: store.KindMirror, Source: r.control, Target: name, At: p.End, Tool: r.tool,
			Outcome: outcome, Summary: summary, Document: doc}
		if _, err := r.st.AddEvidence(context.WithoutCancel(ctx), e); err != nil {
			return fmt.Errorf("store the mirror's snapshot: %w", err)
		}
		if r.first == 0 {
			r.first = e.ID
		}
	}
	return nil
}

// Canary weighs candidate i of a run's figures so far: its outcome and
// the line readiness shows ("canary: 2 h, 41,000 statements, 0 classes
// differ").
func Canary(total *Summary, i int) (outcome, summary string) {
	c := total.Candidates[i]
	summary = fmt.Sprintf("canary: %s, %s statements, %d classes differ; %s compared on %s, %s dropped",
		span(total.Seconds), thousands(total.Through), c.ClassesDiffering, thousands(c.Compared), c.Name, thousands(c.Dropped))
	if c.Compared > 0 {
		summary += fmt.Sprintf(", latency %.2fx the control's", c.Ratio)
	}
	switch {
	case c.ClassesDiffering > 0:
		return store.OutcomeFail, summary
	case c.Compared == 0:
		return store.OutcomeIncomplete, summary + " (nothing compared yet)"
	}
	return store.OutcomePass, summary
}

// span is a canary's length in the unit that reads best.
func span(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%.0f s", sec)
	case d < time.Hour:
		return fmt.Sprintf("%.0f min", d.Minutes())
	case d < 48*time.Hour:
		return fmt.Sprintf("%.0f h", d.Hours())
	}
	return fmt.Sprintf("%.0f days", d.Hours()/24)
}

// thousands writes n with a comma between thousands.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// ErrNoRun: no stored mirror run has the ID asked for.
var ErrNoRun = errors.New("no stored mirror run with that ID")

// LoadRun reads the stored run whose first record is id, or any of whose
// records is id: its records in order.
func LoadRun(ctx context.Context, st *store.Store, id int64) ([]Stored, error) {
	evs, err := st.EvidenceOfKind(ctx, store.KindMirror)
	if err != nil {
		return nil, err
	}
	docs := make([]Stored, len(evs))
	run := ""
	for i, e := range evs {
		if err := json.Unmarshal(e.Document, &docs[i]); err != nil {
			return nil, fmt.Errorf("read mirror snapshot %d: %w", e.ID, err)
		}
		if e.ID == id {
			run = docs[i].Run
		}
	}
	if run == "" {
		return nil, &usage.Error{Msg: fmt.Sprintf("report --mirror %d: %v: shakedown mirror --store prints its run's ID at the end", id, ErrNoRun)}
	}
	var out []Stored
	for _, d := range docs {
		if d.Run == run {
			out = append(out, d)
		}
	}
	return out, nil
}

// WriteRun writes a stored run for people: its figures so far per
// candidate, each period's figures, and the first sample of each class
// that differed.
func WriteRun(w io.Writer, id int64, recs []Stored) error {
	last := recs[len(recs)-1]
	fmt.Fprintf(w, "mirror run %d: control %s, from %s to %s\n", id, last.Control, clockOf(recs[0].Start), clockOf(last.End))
	for i := range last.Total.Candidates {
		_, line := Canary(last.Total, i)
		fmt.Fprintln(w, line)
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "\nperiod\tcandidate\tfrom\tto\tended\tthrough\tcompared\tdiffering\tdropped\tlatency ratio\tclasses differing")
	seen := map[string]bool{}
	var samples []string
	for _, r := range recs {
		for _, c := range r.Figures.Candidates {
			if c.Name != r.Candidate {
				continue
			}
			ratio := "-"
			if c.Compared > 0 {
				ratio = fmt.Sprintf("%.3fx", c.Ratio)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%d\n", r.N, c.Name, clockOf(r.Start), clockOf(r.End), r.Why,
				r.Figures.Through, c.Compared, c.Differing, c.Dropped, ratio, c.ClassesDiffering)
		}
		for _, cl := range r.Figures.Classes {
			for _, c := range cl.Candidates {
				if c.Name != r.Candidate || c.Sample == nil || seen[c.Name+cl.Digest] {
					continue
				}
				seen[c.Name+cl.Digest] = true
				samples = append(samples, fmt.Sprintf("\nfirst differs in period %d on %s: %s\n%s", r.N, c.Name, c.Sample.Kind, sampleText(c.Sample)))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range samples {
		if _, err := io.WriteString(w, s); err != nil {
			return err
		}
	}
	return nil
}

func clockOf(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }
