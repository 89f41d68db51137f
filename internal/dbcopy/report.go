package dbcopy

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// String is the progress line: rows and bytes so far, their rates, and an
// ETA from the source's row estimates (which are estimates: the ETA is
// too).
func (p Progress) String() string {
	secs := p.Elapsed.Seconds()
	if secs <= 0 {
		secs = 1e-9
	}
	rate := float64(p.Rows) / secs
	s := fmt.Sprintf("copy: %s rows, %.0f rows/s, %.1f MB/s", thousands(p.Rows), rate, float64(p.Bytes)/1e6/secs)
	if p.EstRows > p.Rows && rate > 0 {
		eta := time.Duration(float64(p.EstRows-p.Rows) / rate * float64(time.Second)).Round(time.Second)
		s += fmt.Sprintf(", ~%d%%, ETA %s", p.Rows*100/p.EstRows, eta)
	}
	tbl := p.Table + " " + thousands(p.TableRows)
	if p.TableEst > 0 {
		tbl += "/~" + thousands(p.TableEst)
	}
	return s + " (" + tbl + ")"
}

// WriteText writes the result as a summary: a line per table with its
// rate, then the totals, the consistency point and the verify's outcome.
func WriteText(w io.Writer, r *Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "table\trows\tMB\tchunks\tseconds\trows/s\tGB/h\t")
	for _, t := range r.Tables {
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%d\t%.2f\t%.0f\t%.2f\t\n", t.Table, thousands(t.Rows), float64(t.Bytes)/1e6, t.Chunks, t.Seconds, t.RowsPerS, t.GBPerHour)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	for _, t := range r.Tables {
		if t.Where != "" {
			fmt.Fprintf(&b, "subset %s: WHERE %s\n", t.Table, t.Where)
		}
	}
	secs := r.DataSeconds
	if secs <= 0 {
		secs = 1e-9
	}
	fmt.Fprintf(&b, "copied %s rows (%.1f MB) of %d tables, %d views, %d routines, %d triggers in %.1fs (rows %.1fs: %.0f rows/s, %.2f GB/h) with %s\n",
		thousands(r.Rows), float64(r.Bytes)/1e6, len(r.Tables), r.Views, r.Routines, r.Triggers, r.Seconds,
		r.DataSeconds, float64(r.Rows)/secs, float64(r.Bytes)/1e9/(secs/3600), r.Loader)
	if r.FullEstimate > 0 {
		fmt.Fprintf(&b, "the whole tables (~%s rows by the source's estimates) would take about %s at this rate\n",
			thousands(r.FullRowsEst), time.Duration(r.FullEstimate*float64(time.Second)).Round(time.Second))
	}
	if r.Schema == SchemaExisting {
		b.WriteString("schema: existing: the rows went into the target's own tables, unchanged\n")
	}
	fmt.Fprintf(&b, "consistency: %s", r.Consistency)
	if r.LockSeconds > 0 {
		fmt.Fprintf(&b, " (held %.3fs)", r.LockSeconds)
	}
	b.WriteString("\n")
	switch {
	case r.BinlogFile != "":
		fmt.Fprintf(&b, "source position: %s:%d gtid %q\n", r.BinlogFile, r.BinlogPos, r.GTID)
	case r.GTID != "":
		fmt.Fprintf(&b, "source position: gtid %q (binary log off)\n", r.GTID)
	case r.LockSeconds > 0:
		b.WriteString("source position: none (the source's binary log is off)\n")
	}
	if r.Resumed {
		b.WriteString("resumed: ranges finished before the resume come from the first run's snapshot\n")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if v := r.Verify; v != nil {
		if v.Equal {
			fmt.Fprintf(&b, "verify: %d tables equal (%.1fs)\n", v.Tables, v.Seconds)
		} else {
			fmt.Fprintf(&b, "verify: DIFFERENCES in %s: %d rows, %d schema differences (%.1fs)\n",
				strings.Join(v.Differing, ", "), v.DifferingRows, v.SchemaDifferences, v.Seconds)
		}
	} else {
		b.WriteString("verify: not run\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ParseWhere reads --where's 'db.table: condition'.
func ParseWhere(v string) (table, cond string, err error) {
	table, cond, ok := strings.Cut(v, ":")
	table, cond = strings.TrimSpace(table), strings.TrimSpace(cond)
	if !ok || table == "" || cond == "" || strings.ContainsAny(table, " `") {
		return "", "", fmt.Errorf("want 'db.table: condition' or 'table: condition', got %q", v)
	}
	if strings.Contains(cond, ";") {
		return "", "", fmt.Errorf("%q: the condition is one expression, without ';'", v)
	}
	return table, cond, nil
}

// ParseSample reads --sample: a percentage (10%) or a fraction (0.1).
func ParseSample(v string) (float64, error) {
	pct := strings.HasSuffix(v, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err == nil && pct {
		f /= 100
	}
	if err != nil || f <= 0 || f > 1 {
		return 0, fmt.Errorf("want a share of rows such as 10%% or 0.1, got %q", v)
	}
	return f, nil
}
