package cli

import (
	"fmt"
	"io"
	"slices"
)

// A commandGroup is one job under which shakedown help lists commands: its
// title, what the job is, and its commands in the order they are listed.
type commandGroup struct {
	Title, About string
	Commands     []string
}

// commandGroups are the jobs shakedown help lists the commands under, in
// order; the README's tables of commands follow them. Every command belongs
// to exactly one (TestUsage checks it).
func commandGroups() []commandGroup {
	return []commandGroup{
		{"Load", "the same work on each server, measured",
			[]string{"prepare", "run", "cleanup", "sysbench", "slap", "sweep", "capacity"}},
		{"Compare", "results, baselines and configurations",
			[]string{"report", "baseline", "vars"}},
		{"Diagnose", "the server and its host",
			[]string{"watch", "host"}},
		{"Migrate", "prove the move before making it",
			[]string{"check", "copy", "follow", "cutover", "verify", "analyze", "capture", "replay", "mirror", "readiness", "rehearse"}},
		{"Local servers", "throwaway servers to try it all on",
			[]string{"sandbox", "demo"}},
		{"Other", "",
			[]string{"version"}},
	}
}

// writeCommands writes shakedown help's list of commands: names, each with
// its summary, under the title of its group. A name that no group lists is
// listed with the last group, so that none is ever left out; a group's
// command that is not among names is left out.
func writeCommands(w io.Writer, names []string, summary func(name string) string) {
	given := map[string]bool{}
	for _, n := range names {
		given[n] = true
	}
	groups := commandGroups()
	for _, g := range groups {
		for _, n := range g.Commands {
			delete(given, n)
		}
	}
	for i, g := range groups {
		if g.About != "" {
			fmt.Fprintf(w, "\n%s (%s):\n", g.Title, g.About)
		} else {
			fmt.Fprintf(w, "\n%s:\n", g.Title)
		}
		list := g.Commands
		if i == len(groups)-1 {
			for _, n := range names {
				if given[n] {
					list = append(list, n)
				}
			}
		}
		for _, n := range list {
			if slices.Contains(names, n) {
				fmt.Fprintf(w, "  %-9s %s\n", n, summary(n))
			}
		}
	}
}
