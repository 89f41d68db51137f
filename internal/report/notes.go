package report

import "fmt"

// dataLines are the sweep's notes, each with the step it came before.
func (r *Report) dataLines() []string {
	var out []string
	for _, n := range r.Notes {
		when := "at the end"
		if n.Step > 0 {
			when = fmt.Sprintf("before step %d", n.Step)
		}
		out = append(out, when+": "+n.Text)
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
