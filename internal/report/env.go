package report

import (
	"sort"
	"strings"

	"github.com/shakedown/shakedown/internal/store"
)

// connections says, per target, how its runs connected: the client path
// and TLS their result documents recorded ("wire, TLS"), several joined
// with "; " when runs differed. Targets whose runs recorded nothing are
// left out.
func connections(runs []store.Run) map[string]string {
	seen := map[string]map[string]bool{}
	for _, run := range runs {
		if run.Result == nil {
			continue
		}
		c := run.Result.Target.Connection()
		if c == "" {
			continue
		}
		if seen[run.Target] == nil {
			seen[run.Target] = map[string]bool{}
		}
		seen[run.Target][c] = true
	}
	if len(seen) == 0 {
		return nil
	}
	out := map[string]string{}
	for t, cs := range seen {
		list := make([]string, 0, len(cs))
		for c := range cs {
			list = append(list, c)
		}
		sort.Strings(list)
		out[t] = strings.Join(list, "; ")
	}
	return out
}

// connection is the environment table's cell for target: "-" when its
// results did not record it.
func (r *Report) connection(target string) string {
	if c := r.Connections[target]; c != "" {
		return c
	}
	return "-"
}
