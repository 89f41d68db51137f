package monitor

import (
	"fmt"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/result"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// TableKeys are the columns watch prints, orzdba style; the host ones only
// when the server runs on this host.
var (
	TableKeys = []string{
		"qps", "tps", "sel", "ins", "upd", "del",
		"threads_running", "threads_connected", "threads_created",
		"rows_read",
		"bp_read_requests", "bp_hit", "bp_pages_dirty", "bp_pages_flushed",
		"log_fsyncs", "log_written",
		"bytes_received", "bytes_sent",
		"history_list_length", "checkpoint_age",
	}
	TableHostKeys = []string{"cpu_user", "cpu_sys", "cpu_iowait", "cpu_steal", "cpu_idle", "server_cpu"}

	// tablePriority is the order in which columns earn a place in a table
	// narrower than all of them: what a DBA looks at first.
	tablePriority = []string{
		"qps", "tps", "threads_running", "threads_connected", "server_cpu", "cpu_user", "cpu_sys",
		"bp_hit", "rows_read", "log_fsyncs", "sel", "ins", "upd", "del", "history_list_length",
		"cpu_idle", "bp_read_requests", "threads_created", "bp_pages_dirty", "bp_pages_flushed",
		"log_written", "bytes_received", "bytes_sent", "checkpoint_age", "cpu_iowait", "cpu_steal",
	}
)

// Table prints samples as one line each under grouped headings, repeated
// every so many lines. A figure that needs attention carries a '*', and the
// first time a reason (or a failing source) shows, a note line says it.
type Table struct {
	w     *outfile.Sticky
	cols  []Column
	lines int
	// Every is how many lines go between headings (0: only the first).
	Every int
	seen  map[string]bool
	// Interval, when set, labels each line by the end of its interval
	// with the precision the interval needs (tenths below a second).
	Interval time.Duration
	width    int // notes wrap at this width; 0: they do not
}

// NewTable returns a table of TableKeys, plus TableHostKeys with host set.
func NewTable(w io.Writer, host bool) *Table { return NewTableWidth(w, host, 0) }

// NewTableWidth is NewTable fitted to width characters: the most useful
// columns that fit (tablePriority), in their usual order. width 0 means
// every column.
func NewTableWidth(w io.Writer, host bool, width int) *Table {
	keys := TableKeys
	if host {
		keys = append(append([]string(nil), TableKeys...), TableHostKeys...)
	}
	if width > 0 {
		keys = fitColumns(keys, width)
	}
	t := &Table{w: &outfile.Sticky{W: w}, Every: 20, seen: map[string]bool{}, width: width}
	for _, k := range keys {
		if c, ok := LookupColumn(k); ok {
			t.cols = append(t.cols, c)
		}
	}
	return t
}

// labelWidth is the time label and the space after it.
const labelWidth = 9

// lineWidth is the width of a table line of these columns.
func lineWidth(keys []string) int {
	n, group := labelWidth, ""
	for _, k := range keys {
		c, _ := LookupColumn(k)
		if c.Group != group {
			n++ // the '|' before a group
			group = c.Group
		}
		n += cellWidth + 1
	}
	return n
}

// fitColumns keeps, of keys, the columns that fit in width, taken in
// tablePriority order, and returns them in the order of keys.
func fitColumns(keys []string, width int) []string {
	chosen := map[string]bool{}
	ordered := func() []string {
		var out []string
		for _, k := range keys {
			if chosen[k] {
				out = append(out, k)
			}
		}
		return out
	}
	for _, k := range tablePriority {
		if !slices.Contains(keys, k) {
			continue
		}
		chosen[k] = true
		if lineWidth(ordered()) > width {
			delete(chosen, k)
		}
	}
	return ordered()
}

// cellWidth is the width of one figure; a mark character follows it.
const cellWidth = 6

// Legend is printed once before the first heading.
const Legend = "rates are per second over the real time between two reads; * marks a figure that needs attention"

// groupLabel shortens the groups whose name is wider than their columns.
func groupLabel(g string) string {
	switch g {
	case "process cpu%":
		return "proc"
	case "innodb io":
		return "redo"
	}
	return g
}

// WriteHeader prints the two heading lines.
func (t *Table) WriteHeader() {
	var g, h strings.Builder
	g.WriteString(strings.Repeat(" ", 9))
	h.WriteString(fmt.Sprintf("%-9s", "time"))
	for i := 0; i < len(t.cols); {
		j := i
		for j < len(t.cols) && t.cols[j].Group == t.cols[i].Group {
			j++
		}
		width := (j-i)*(cellWidth+1) + 1
		label := "-" + groupLabel(t.cols[i].Group) + "-"
		if len(label) > width-1 {
			label = label[:width-1]
		}
		g.WriteString(" " + label + strings.Repeat("-", width-1-len(label)))
		h.WriteString("|")
		for _, c := range t.cols[i:j] {
			h.WriteString(fmt.Sprintf("%*s ", cellWidth, c.Head))
		}
		i = j
	}
	fmt.Fprintln(t.w, strings.TrimRight(g.String(), " "))
	fmt.Fprintln(t.w, strings.TrimRight(h.String(), " "))
}

// Write prints one sample, with the headings first when due and notes for
// reasons and failures not seen before. It returns the first write error.
func (t *Table) Write(s result.Sample) error { return t.WriteAt(s, time.Time{}) }

// WriteAt is Write with the line labelled by label, the end of the
// sample's own interval as scheduled, rather than by when the reading
// came back: under load two readings can come back within one second,
// and their labels would repeat and skip.
func (t *Table) WriteAt(s result.Sample, label time.Time) error {
	if t.lines == 0 {
		t.note("", Legend)
	}
	if t.lines == 0 || (t.Every > 0 && t.lines%t.Every == 0) {
		t.WriteHeader()
	}
	t.lines++
	var b strings.Builder
	switch {
	case !label.IsZero() && t.Interval > 0 && t.Interval < time.Second:
		b.WriteString(label.Format("04:05.0") + "  ")
	case !label.IsZero():
		b.WriteString(label.Format("15:04:05") + " ")
	case s.Wall.IsZero():
		b.WriteString(fmt.Sprintf("%8.1fs", s.AtS))
	default:
		b.WriteString(s.Wall.Format("15:04:05") + " ")
	}
	group := ""
	for _, c := range t.cols {
		if c.Group != group {
			b.WriteString("|")
			group = c.Group
		}
		v, ok := s.Values[c.Key]
		cell := "-"
		if ok {
			cell = formatCell(v, c)
		}
		mark := " "
		if _, bad := s.Attention[c.Key]; bad {
			mark = "*"
		}
		b.WriteString(fmt.Sprintf("%*s%s", cellWidth, cell, mark))
	}
	fmt.Fprintln(t.w, strings.TrimRight(b.String(), " "))
	t.notes(s)
	return t.w.Err
}

func (t *Table) notes(s result.Sample) {
	keys := make([]string, 0, len(s.Attention))
	for k := range s.Attention {
		keys = append(keys, k)
	}
	sortKeys(keys)
	for _, k := range keys {
		why := s.Attention[k]
		if t.seen[k+"\x00"+why] {
			continue
		}
		t.seen[k+"\x00"+why] = true
		if !t.shows(k) {
			// No cell carries the mark: say what it is about instead.
			t.note("  * ", fmt.Sprintf("%s (seen in %s, which watch --wide shows)", why, describe(k)))
			continue
		}
		c, _ := LookupColumn(k)
		t.note("  * ", fmt.Sprintf("%s %s: %s", c.Group, c.Head, why))
	}
	names := make([]string, 0, len(s.Failed))
	for n := range s.Failed {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		msg := s.Failed[n]
		if t.seen["failed\x00"+n+msg] {
			continue
		}
		t.seen["failed\x00"+n+msg] = true
		t.note("  ! ", n+": "+msg)
	}
}

// note writes a note line after prefix, wrapped at the table's width
// with the lines after the first indented under the text.
func (t *Table) note(prefix, text string) {
	if t.width <= len(prefix)+20 || len(prefix)+len(text) <= t.width {
		fmt.Fprintln(t.w, prefix+text)
		return
	}
	line, words := prefix, 0 // words on this line
	for _, word := range strings.Fields(text) {
		if words > 0 && len(line)+1+len(word) > t.width {
			fmt.Fprintln(t.w, line)
			line, words = strings.Repeat(" ", len(prefix)), 0
		}
		if words > 0 {
			line += " "
		}
		line += word
		words++
	}
	fmt.Fprintln(t.w, line)
}

// shows reports whether the table has a column for key.
func (t *Table) shows(key string) bool {
	for _, c := range t.cols {
		if c.Key == key {
			return true
		}
	}
	return false
}

// describe names a figure as the wide table heads it ("host cpu% idle").
func describe(key string) string {
	if c, ok := LookupColumn(key); ok {
		return c.Group + " " + c.Head
	}
	return key
}

// formatCell fits a figure in cellWidth: bytes in KB or MB as the heading
// says, percentages with decimals while they fit, large counts with a k, m
// or g suffix.
func formatCell(v float64, c Column) string {
	switch {
	case strings.HasSuffix(c.Head, "KB"):
		v /= 1024
	case strings.HasSuffix(c.Head, "MB"):
		v /= 1 << 20
	}
	if c.Unit == "%" {
		for _, d := range []int{2, 1, 0} {
			if s := strconv.FormatFloat(v, 'f', d, 64); len(s) <= cellWidth {
				return s
			}
		}
	}
	r := math.Round(v)
	if s := strconv.FormatFloat(r, 'f', 0, 64); len(s) <= cellWidth {
		return s
	}
	for _, u := range []struct {
		div    float64
		suffix string
	}{{1e3, "k"}, {1e6, "m"}, {1e9, "g"}, {1e12, "t"}} {
		x := v / u.div
		for _, d := range []int{1, 0} {
			if s := strconv.FormatFloat(x, 'f', d, 64) + u.suffix; len(s) <= cellWidth {
				return s
			}
		}
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// WatchRecord is one line of watch --json.
type WatchRecord struct {
	Time time.Time `json:"time"`
	result.Sample
}

// Record returns s as a watch --json line.
func Record(s result.Sample) WatchRecord { return WatchRecord{Time: s.Wall, Sample: s} }
