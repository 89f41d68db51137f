package vars

// Differ reports whether any variable differs among the servers: what
// makes vars diff exit with 3.
func Differ(diffs []Difference) bool {
	for _, d := range diffs {
		if !d.Equal {
			return true
		}
	}
	return false
}
