package replay

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/shakedown/shakedown/internal/capture"
	"github.com/shakedown/shakedown/internal/fingerprint"
	"github.com/shakedown/shakedown/internal/usage"
)

// AnnounceWrites reads the capture once and says which statements that may
// write will run on which targets.
func AnnounceWrites(ctx context.Context, w io.Writer, path string, targets []Target) error {
	f, err := os.Open(path)
	if err != nil {
		return usage.Errorf("replay: %v", err)
	}
	defer f.Close()
	rd, err := capture.NewReader(f)
	if err != nil {
		return usage.Errorf("replay: %s: %v", path, err)
	}
	an := fingerprint.NewAnalyzer()
	byVerb := map[string]int64{}
	var total int64
	var rec capture.Record
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		err := rd.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if rec.Kind != "" || rec.SQL == "" {
			continue
		}
		info, _ := an.Analyze(rec.SQL)
		if !info.ReadOnly {
			byVerb[info.Verb]++
			total++
		}
	}
	verbs := make([]string, 0, len(byVerb))
	for v := range byVerb {
		verbs = append(verbs, v)
	}
	sort.Slice(verbs, func(i, j int) bool {
		a, b := byVerb[verbs[i]], byVerb[verbs[j]]
		return a > b || a == b && verbs[i] < verbs[j]
	})
	parts := make([]string, len(verbs))
	for i, v := range verbs {
		name := v
		if name == "" {
			name = "unparsed"
		}
		parts[i] = fmt.Sprintf("%s %d", name, byVerb[v])
	}
	fmt.Fprintf(w, "replay: --allow-writes: %d statements that may write will run on EVERY target", total)
	if total > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprintln(w, ":")
	for i, t := range targets {
		role := "candidate"
		if i == 0 {
			role = "control"
		}
		fmt.Fprintf(w, "  %-9s %s  %s\n", role, t.Name, t.Target.Redacted())
	}
	return nil
}
