package capture

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/shakedown/shakedown/internal/fingerprint"
	"github.com/shakedown/shakedown/internal/sqlsplit"
)

// FPStats are one fingerprint's figures in a capture.
type FPStats struct {
	Fingerprint string
	Digest      string
	Verb        string
	Parsed      bool
	ReadOnly    bool
	Count       int64
	Timed       int64 // statements with a duration
	TotalUS     int64
	MaxUS       int64
	RowsSent    int64
	RowsExam    int64
	Errors      int64
	Example     string
}

// Summary gathers per-fingerprint figures, as pt-query-digest's profile
// shows them. Memory grows with the number of fingerprints only, up to
// maxFingerprints; the rest are counted together.
type Summary struct {
	byFP  map[string]*FPStats
	other FPStats
}

const maxFingerprints = 100000

// NewSummary returns an empty Summary.
func NewSummary() *Summary { return &Summary{byFP: map[string]*FPStats{}} }

// Add counts one statement.
func (s *Summary) Add(r *Record, info *fingerprint.Info) {
	st := s.byFP[r.Digest]
	if st == nil {
		if len(s.byFP) >= maxFingerprints {
			st = &s.other
			st.Fingerprint = "(other fingerprints)"
		} else {
			st = &FPStats{Fingerprint: info.Fingerprint, Digest: info.Digest, Verb: info.Verb, Parsed: info.Parsed, ReadOnly: info.ReadOnly, Example: sqlsplit.Short(r.SQL, 300)}
			s.byFP[r.Digest] = st
		}
	}
	st.Count++
	if r.DurationUS != nil {
		st.Timed++
		st.TotalUS += *r.DurationUS
		st.MaxUS = max(st.MaxUS, *r.DurationUS)
	}
	if r.RowsSent != nil {
		st.RowsSent += *r.RowsSent
	}
	if r.RowsExamined != nil {
		st.RowsExam += *r.RowsExamined
	}
	if r.Error != 0 {
		st.Errors++
	}
}

// Fingerprints returns every fingerprint, most frequent first.
func (s *Summary) Fingerprints() []*FPStats {
	out := make([]*FPStats, 0, len(s.byFP)+1)
	for _, st := range s.byFP {
		out = append(out, st)
	}
	if s.other.Count > 0 {
		out = append(out, &s.other)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Digest < out[j].Digest
	})
	return out
}

// WriteSummary prints the top fingerprints by total time and by count.
func WriteSummary(w io.Writer, s *Summary, st *Stats, top int) error {
	fps := s.Fingerprints()
	var total, totalUS int64
	for _, f := range fps {
		total += f.Count
		totalUS += f.TotalUS
	}
	fmt.Fprintf(w, "%d statements in %d sessions, %d fingerprints (%d read by the parser, %d by the lexer alone)\n",
		st.Statements, st.Sessions, len(fps), st.Parsed, st.Fallback)
	for i := range st.Sources {
		fmt.Fprintln(w, SourceLine(&st.Sources[i]))
	}
	if st.Redacted > 0 {
		fmt.Fprintf(w, "%d statements had passwords, replaced by %s\n", st.Redacted, fingerprint.Redacted)
	}
	byTime := append([]*FPStats(nil), fps...)
	sort.SliceStable(byTime, func(i, j int) bool { return byTime[i].TotalUS > byTime[j].TotalUS })
	if totalUS > 0 {
		fmt.Fprintf(w, "\nTop fingerprints by total time (%.3f s in all)\n", float64(totalUS)/1e6)
		writeProfile(w, byTime, top, total, totalUS)
	}
	fmt.Fprintf(w, "\nTop fingerprints by count\n")
	return writeProfile(w, fps, top, total, totalUS)
}

func writeProfile(w io.Writer, fps []*FPStats, top int, total, totalUS int64) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\tcount\tshare\ttotal s\ttime share\tavg ms\tmax ms\trows sent\trows exam\terrors\t\tdigest  fingerprint")
	for i, f := range fps {
		if i >= top {
			break
		}
		avg, tshare := "-", "-"
		tot, mx := "-", "-"
		if f.Timed > 0 {
			avg = fmt.Sprintf("%.3f", float64(f.TotalUS)/float64(f.Timed)/1e3)
			tot = fmt.Sprintf("%.3f", float64(f.TotalUS)/1e6)
			mx = fmt.Sprintf("%.3f", float64(f.MaxUS)/1e3)
		}
		if totalUS > 0 {
			tshare = fmt.Sprintf("%.1f%%", 100*float64(f.TotalUS)/float64(totalUS))
		}
		fmt.Fprintf(tw, "%d\t%d\t%.1f%%\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t\t%s  %s\n", i+1, f.Count, 100*float64(f.Count)/float64(max(total, 1)),
			tot, tshare, avg, mx, f.RowsSent, f.RowsExam, f.Errors, f.Digest, sqlsplit.Short(f.Fingerprint, 100))
	}
	return tw.Flush()
}

// SourceLine says what one source held: its format and how it was known,
// its entries, and which were skipped and why.
func SourceLine(s *SourceStats) string {
	var b strings.Builder
	fmt.Fprintf(&b, "source %s: %s", s.Name, s.Format)
	if s.FormatWhy != "" {
		fmt.Fprintf(&b, " (%s)", s.FormatWhy)
	}
	fmt.Fprintf(&b, "; %d entries: %d statements, %d not statements, %d skipped", s.Entries(), s.Statements, s.Other, s.SkippedCount())
	if t := s.SkipText(); t != "" {
		fmt.Fprintf(&b, " (%s)", t)
	}
	if s.ValuesLost > 0 {
		fmt.Fprintf(&b, "; %d unreadable values dropped, their statements kept", s.ValuesLost)
	}
	return b.String()
}
