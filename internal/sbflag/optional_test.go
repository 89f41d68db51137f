package sbflag

import (
	"slices"
	"strings"
	"testing"
)

// TestJoinOptional: a bare optional option takes the next argument when
// its test claims it, and only then; the values of other options are
// passed over, and "--" ends the options.
func TestJoinOptional(t *testing.T) {
	isTrigger := func(s string) bool { return strings.Contains(s, ">") }
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"a value after a space", []string{"--stall", "x>1 for 2s", "y"}, []string{"--stall=x>1 for 2s", "y"}},
		{"underscore spelling", []string{"--stall_it", "x>1"}, []string{"--stall_it=x>1"}},
		{"not its value", []string{"--stall", "mysql://h/db"}, []string{"--stall", "mysql://h/db"}},
		{"after '='", []string{"--stall=x>1", "x>2"}, []string{"--stall=x>1", "x>2"}},
		{"last", []string{"y", "--stall"}, []string{"y", "--stall"}},
		{"another option's value", []string{"--name", "--stall", "x>1"}, []string{"--name", "--stall", "x>1"}},
		{"a short option's value", []string{"-n", "--stall", "x>1"}, []string{"-n", "--stall", "x>1"}},
		{"a boolean before it", []string{"--on", "--stall", "x>1"}, []string{"--on", "--stall=x>1"}},
		{"after --", []string{"--", "--stall", "x>1"}, []string{"--", "--stall", "x>1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := NewFlagSet("t")
			var spec, name string
			var on bool
			OptionalVar(fs, &spec, "stall", "default", "", isTrigger)
			OptionalVar(fs, &spec, "stall-it", "default", "", isTrigger)
			fs.StringVarP(&name, "name", "n", "", "")
			BoolVar(fs, &on, "on", false, "")
			if got := JoinOptional(fs, tc.args); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestOptionalVar: alone, the option has its alone value; with one, that.
func TestOptionalVar(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--stall"}, "default"},
		{[]string{"--stall", "x>1"}, "x>1"},
		{[]string{"--stall=x>1"}, "x>1"},
		{nil, ""},
	} {
		fs := NewFlagSet("t")
		var spec string
		OptionalVar(fs, &spec, "stall", "default", "", func(s string) bool { return strings.Contains(s, ">") })
		if err := fs.Parse(JoinOptional(fs, tc.args)); err != nil || spec != tc.want || fs.NArg() != 0 {
			t.Errorf("%q: got %q, %d arguments left, %v; want %q, none", tc.args, spec, fs.NArg(), err, tc.want)
		}
	}
}
