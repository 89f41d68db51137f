package check

import (
	"bytes"
	"strings"
	"testing"
)

// TestSkippedAccountsSayWhy: the text report says why accounts were left
// out: the servers' own, left out by default, or --skip-accounts. Before,
// it named --skip-accounts when the option was not given.
func TestSkippedAccountsSayWhy(t *testing.T) {
	tests := []struct {
		name    string
		skipped []string
		want    string
	}{
		{"the default list", []string{"'mariadb.sys'@'localhost'", "'root'@'::1'", "'ROOT'@'localhost'"},
			"accounts not compared (the servers' own accounts; --skip-accounts sets which are left out): 'mariadb.sys'@'localhost', 'root'@'::1', 'ROOT'@'localhost'\n"},
		{"one the option named", []string{"'app'@'%'", "'root'@'localhost'"},
			"accounts not compared (--skip-accounts): 'app'@'%', 'root'@'localhost'\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteText(&b, &Report{AccountsSkipped: tc.skipped}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tc.want) {
				t.Errorf("got\n%s\nwant it to say %q", b.String(), tc.want)
			}
		})
	}
}
