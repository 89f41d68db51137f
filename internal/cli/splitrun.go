package cli

import "strings"

// publicCommand is a command line for the store: without the options
// that may carry a password, nor those that differ between runners.
func publicCommand(args []string) string {
	var out []string
	skip := map[string]bool{"segment": true, "segment-index-env": true, "start-at": true}
	pub := publicArgs(args)
	for i := 0; i < len(pub); i++ {
		a := pub[i]
		name := strings.SplitN(strings.TrimLeft(a, "-"), "=", 2)[0]
		if strings.HasPrefix(a, "--") && skip[name] {
			if !strings.Contains(a, "=") {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}
