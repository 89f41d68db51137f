package host

// Differ reports whether any difference counts (Difference.Counts): what
// makes host diff exit with 3.
func Differ(diffs []Difference) bool {
	for _, d := range diffs {
		if d.Counts() {
			return true
		}
	}
	return false
}
