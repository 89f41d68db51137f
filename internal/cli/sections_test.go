package cli

import (
	"context"
	"strings"
	"testing"
)

// TestHelpInSections: the commands with the most options list them in
// sections, and none is left under Other options.
func TestHelpInSections(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		sections []string
	}{
		{[]string{"slap", "--help"}, []string{"\nConnection:\n", "\nThe test:\n", "\nGenerated SQL", "\nOutput and store:\n"}},
		{[]string{"copy", "--help"}, []string{"\nWhat is copied:\n", "\nWriting and checking:\n", "\nOutput:\n", "\nFollowing the binary log", "\nPasswords"}},
		{[]string{"run", "oltp_point_select", "--help"}, []string{"\nOptions of oltp_point_select:\n", "\nLoad and time:\n", "\nTarget and connection", "\nDiagnostics:\n"}},
		{[]string{"help", "run"}, []string{"\nLoad and time:\n", "\nSplit load"}},
	} {
		code, out, errOut := runCLI(context.Background(), tc.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", tc.args, code, errOut)
		}
		if strings.Contains(out, "Other options:") || strings.Contains(out, "\nOptions:\n") {
			t.Errorf("%v: an option outside the sections:\n%s", tc.args, out)
		}
		for _, s := range tc.sections {
			if !strings.Contains(out, s) {
				t.Errorf("%v: no section %q in\n%s", tc.args, s, out)
			}
		}
	}
}
