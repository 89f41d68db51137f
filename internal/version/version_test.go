package version

import (
	"regexp"
	"runtime/debug"
	"testing"
)

func TestFromSettings(t *testing.T) {
	cases := []struct {
		name         string
		settings     []debug.BuildSetting
		wantRev      string
		wantModified bool
	}{
		{"clean checkout", []debug.BuildSetting{{Key: "vcs.revision", Value: "8cb492c5e1a0f00dbeefcafe"}, {Key: "vcs.modified", Value: "false"}}, "8cb492c5e1a0", false},
		{"changes not committed", []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}, "abc", true},
		{"no vcs", []debug.BuildSetting{{Key: "GOOS", Value: "linux"}}, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rev, mod := fromSettings(tc.settings)
			if rev != tc.wantRev || mod != tc.wantModified {
				t.Errorf("got %q %v, want %q %v", rev, mod, tc.wantRev, tc.wantModified)
			}
		})
	}
}

func TestStringStartsWithNumber(t *testing.T) {
	re := regexp.MustCompile(`^\d+\.\d+\.\d+ \(commit [^,]+, .*go`)
	if s := String(); !re.MatchString(s) {
		t.Errorf("got %q, want %s", s, re)
	}
}
