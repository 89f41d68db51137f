// Package suggest finds the word a user probably meant: "did you mean" for
// commands, workloads, options and plan keys, so that every place that
// rejects a name offers the same kind of help.
package suggest

import "strings"

// Closest returns the known word closest to s when it is close enough to be
// a typo (at most two edits, or s is a prefix or spelling variant of it),
// else "".
func Closest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := Distance(s, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" {
		return best
	}
	// A long prefix ("oltp_read" for "oltp_read_write") is a typo too.
	if len(s) >= 4 {
		var hits []string
		for _, k := range known {
			if strings.HasPrefix(k, s) {
				hits = append(hits, k)
			}
		}
		if len(hits) == 1 {
			return hits[0]
		}
	}
	return ""
}

// Distance is the Levenshtein distance between a and b.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// DidYouMean is ` (did you mean "X"?)` with X the closest known word, or ""
// when none is close: the tail of a message that rejects s.
func DidYouMean(s string, known []string) string {
	if c := Closest(s, known); c != "" {
		return ` (did you mean "` + c + `"?)`
	}
	return ""
}
