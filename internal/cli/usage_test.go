package cli

import (
	"regexp"
	"strings"
	"testing"
)

// TestUsage checks shakedown help's list of commands: every command in
// exactly one group of commandGroups, listed once, under its group's
// title, the groups in their order.
func TestUsage(t *testing.T) {
	cmds := commands()
	groupOf := map[string]string{}
	var titles []string
	for _, g := range commandGroups() {
		titles = append(titles, g.Title)
		for _, n := range g.Commands {
			if first, dup := groupOf[n]; dup {
				t.Errorf("command %s: got it in groups %q and %q, want it in one", n, first, g.Title)
			}
			groupOf[n] = g.Title
		}
	}
	for _, n := range commandNames(cmds) {
		if _, ok := groupOf[n]; !ok {
			t.Errorf("command %s: got it in no group of commandGroups, want it placed under its job", n)
		}
	}

	var b strings.Builder
	printUsage(&b, cmds)
	// The headings, and under which one each command is listed.
	var headings []string
	under := map[string][]string{}
	lineRE := regexp.MustCompile(`^  ([a-z]+) +\S`)
	for _, l := range strings.Split(b.String(), "\n") {
		if m := lineRE.FindStringSubmatch(l); m != nil && len(headings) > 0 {
			under[m[1]] = append(under[m[1]], headings[len(headings)-1])
		} else if strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " ") {
			headings = append(headings, l)
		}
	}
	for _, n := range commandNames(cmds) {
		got := under[n]
		if len(got) != 1 || !strings.HasPrefix(got[0], groupOf[n]+" ") && got[0] != groupOf[n]+":" {
			t.Errorf("shakedown help lists %s under %q, want it once, under %q", n, got, groupOf[n])
		}
	}
	for i, title := range titles {
		if i >= len(headings) || !strings.HasPrefix(headings[i], title) {
			t.Errorf("shakedown help: got headings %q, want %q in this order", headings, titles)
			break
		}
	}
}
