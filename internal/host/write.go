package host

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteJSON writes the facts as the versioned document (see the package
// doc).
func WriteJSON(w io.Writer, f *Facts) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

// ReadJSON reads a document WriteJSON wrote; name is the file's name, for
// errors.
func ReadJSON(r io.Reader, name string) (*Facts, error) {
	var f Facts
	dec := json.NewDecoder(r)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: not a host facts file: %w", name, err)
	}
	if f.Version != Version {
		return nil, fmt.Errorf("%s: host facts version %d, want %d (write it with this shakedown's host facts --json)", name, f.Version, Version)
	}
	if len(f.Facts) == 0 {
		return nil, fmt.Errorf("%s: host facts file holds no facts", name)
	}
	for i, x := range f.Facts {
		if x.Name == "" || (x.Value == "" && x.Reason == "") {
			return nil, fmt.Errorf("%s: fact %d has no name, or neither value nor reason", name, i+1)
		}
	}
	return &f, nil
}

// Describe names a fact set in a line: its host and subject.
func Describe(f *Facts) string {
	parts := []string{"host " + f.Host}
	s := f.Subject
	if s.Sandbox != "" {
		parts = append(parts, "sandbox "+s.Sandbox)
	}
	if s.Target != "" {
		parts = append(parts, s.Target)
	}
	if s.Remote {
		parts = append(parts, "remote server")
	}
	if s.PID > 0 {
		parts = append(parts, fmt.Sprintf("pid %d", s.PID))
	}
	if s.DataDir != "" {
		parts = append(parts, "datadir "+s.DataDir)
	}
	return strings.Join(parts, ", ")
}

// WriteText prints the facts grouped, one per line, each unknown one with
// its reason, and a closing count.
func WriteText(w io.Writer, f *Facts) error {
	ew := &errWriter{w: w}
	ew.printf("%s (collected %s)\n", Describe(f), f.CollectedAt.Format("2006-01-02 15:04:05 UTC"))
	width := 0
	for _, x := range f.Facts {
		width = max(width, len(x.Name))
	}
	group, unknowns := "", 0
	for _, x := range f.Facts {
		if x.Group != group {
			ew.printf("\n%s:\n", x.Group)
			group = x.Group
		}
		v := x.Value
		if !x.Known() {
			v = "unknown: " + x.Reason
			unknowns++
		}
		if x.Kind == Counter {
			v += "  (counter)"
		}
		ew.printf("  %-*s  %s\n", width, x.Name, v)
	}
	ew.printf("\n%d facts, %d read, %d unknown (each says why).\n", len(f.Facts), len(f.Facts)-unknowns, unknowns)
	return ew.err
}

// WriteDiffJSON writes the comparison.
func WriteDiffJSON(w io.Writer, sets []*Facts, diffs []Difference) error {
	doc := struct {
		Version     int          `json:"version"`
		Hosts       []string     `json:"hosts"`
		Differences []Difference `json:"differences"`
	}{Version, make([]string, len(sets)), diffs}
	for i, s := range sets {
		doc.Hosts[i] = Describe(s)
	}
	if doc.Differences == nil {
		doc.Differences = []Difference{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// WriteDiffText prints the comparison as vars diff does: the hosts
// numbered, then the settings that differ, each explained, then the
// counters that differ (evidence, not differences), then the facts some
// host could not read, and a closing count.
func WriteDiffText(w io.Writer, sets []*Facts, diffs []Difference) error {
	ew := &errWriter{w: w}
	for i, s := range sets {
		ew.printf("[%d] %s\n", i+1, Describe(s))
	}
	ew.printf("\n")
	var settings, counters, unknown, equal []Difference
	for _, d := range diffs {
		switch {
		case d.Equal:
			equal = append(equal, d)
		case d.Unknown:
			unknown = append(unknown, d)
		case d.Kind == Counter:
			counters = append(counters, d)
		default:
			settings = append(settings, d)
		}
	}
	n := len(sets)
	if len(settings) == 0 {
		ew.printf("No setting differs in %d hosts' facts.\n", n)
	} else {
		ew.printf("Settings that differ:\n")
		table(ew, n, settings, func(d Difference) {
			x := d.Explanation
			if x == nil {
				return
			}
			ew.printf("    what: %s\n    affects: %s\n", x.What, x.Affects)
			if x.Recommend != "" {
				label := "references"
				if x.Disputed {
					label = "references disagree (reported, not judged)"
				}
				ew.printf("    %s: %s\n", label, x.Recommend)
			}
		})
	}
	if len(counters) > 0 {
		ew.printf("\nCounters (they grow while a server runs: evidence, not differences):\n")
		table(ew, n, counters, nil)
	}
	if len(unknown) > 0 {
		ew.printf("\nUnknown on some hosts (not compared):\n")
		// A reason many rows share (a remote server, no process named) is
		// said once, not under each row.
		type hostReason struct {
			host   int
			reason string
		}
		count := map[hostReason]int{}
		var shared []hostReason
		for _, d := range unknown {
			for i, r := range d.Reasons {
				if r == "" {
					continue
				}
				k := hostReason{i, r}
				if count[k]++; count[k] == sharedReason {
					shared = append(shared, k)
				}
			}
		}
		for _, k := range shared {
			ew.printf("  [%d] %d facts: %s\n", k.host+1, count[k], k.reason)
		}
		table(ew, n, unknown, func(d Difference) {
			for i, r := range d.Reasons {
				if r != "" && count[hostReason{i, r}] < sharedReason {
					ew.printf("    [%d] %s\n", i+1, r)
				}
			}
		})
	}
	if len(equal) > 0 {
		ew.printf("\nSame on every host:\n")
		table(ew, n, equal, nil)
	}
	explained := 0
	for _, d := range settings {
		if d.Explanation != nil {
			explained++
		}
	}
	ew.printf("\n%d settings differ, %d of them explained (*); %d counters differ; %d facts unknown on some host.\n",
		len(settings), explained, len(counters), len(unknown))
	return ew.err
}

// sharedReason is how many rows of one host must share a reason for it to
// be said once for all of them.
const sharedReason = 3

// maxShown is how much of a long value the diff table shows.
const maxShown = 40

// table prints one line per fact with each host's value, then what more
// says of it.
func table(ew *errWriter, hosts int, diffs []Difference, more func(Difference)) {
	width := len("fact")
	for _, d := range diffs {
		width = max(width, len(d.Name))
	}
	colw := make([]int, hosts)
	shown := make([][]string, len(diffs))
	for i := range colw {
		colw[i] = len(fmt.Sprintf("[%d]", i+1))
	}
	for i, d := range diffs {
		shown[i] = make([]string, hosts)
		for j, v := range d.Values {
			if d.Reasons != nil && d.Reasons[j] != "" {
				v = "(unknown)"
			}
			if len(v) > maxShown {
				v = v[:maxShown-3] + "..."
			}
			shown[i][j] = v
			colw[j] = max(colw[j], len(v))
		}
	}
	line := func(name string, vals []string, mark string) {
		var b strings.Builder
		fmt.Fprintf(&b, "  %-*s", width, name)
		for j, v := range vals {
			fmt.Fprintf(&b, "  %-*s", colw[j], v)
		}
		ew.printf("%s%s\n", strings.TrimRight(b.String(), " "), mark)
	}
	hdr := make([]string, hosts)
	for i := range hdr {
		hdr[i] = fmt.Sprintf("[%d]", i+1)
	}
	line("fact", hdr, "")
	for i, d := range diffs {
		mark := ""
		if d.Counts() && d.Explanation != nil {
			mark = "  *"
		}
		line(d.Name, shown[i], mark)
		if more != nil {
			more(d)
		}
	}
}

// errWriter keeps the first write error so that printing code stays flat.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
