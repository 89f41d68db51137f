// Package version says which shakedown this is: the release number, written
// here and nowhere else, and the commit it was built from. The commit comes
// from what the Go toolchain records in the binary (vcs.revision), so
// "make build" and "go install ./cmd/shakedown" in a checkout print the same.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Number is the release number, printed in headers and stored in results.
const Number = "0.1.0"

// commit may be set at link time (-ldflags "-X
// github.com/shakedown/shakedown/internal/version.commit=abc123", with
// "-dirty" after it for a tree with changes) where the toolchain records no
// commit: a git worktree, or -buildvcs=false.
var commit string

// Commit is the commit the binary was built from (12 hex digits), whether
// the work tree had changes not committed, and "" when unknown.
func Commit() (rev string, modified bool) {
	if info, ok := debug.ReadBuildInfo(); ok {
		if rev, modified = fromSettings(info.Settings); rev != "" {
			return rev, modified
		}
	}
	rev, dirty := strings.CutSuffix(commit, "-dirty")
	return shorten(rev), dirty
}

func fromSettings(settings []debug.BuildSetting) (rev string, modified bool) {
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = shorten(s.Value)
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return rev, modified
}

func shorten(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// String is the full version line: "0.1.0 (commit 8cb492c5e1a0, go1.26.8
// linux/amd64)", with ", modified" after a commit built with changes.
func String() string {
	rev, modified := Commit()
	where := fmt.Sprintf("%s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	switch {
	case rev == "":
		return fmt.Sprintf("%s (commit unknown, %s)", Number, where)
	case modified:
		return fmt.Sprintf("%s (commit %s, modified, %s)", Number, rev, where)
	}
	return fmt.Sprintf("%s (commit %s, %s)", Number, rev, where)
}
