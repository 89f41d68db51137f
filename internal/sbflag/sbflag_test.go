package sbflag

import "testing"

func TestBoolSpellings(t *testing.T) {
	cases := []struct {
		args []string
		want bool
	}{
		{[]string{"--skip_trx=on"}, true},
		{[]string{"--skip-trx=off"}, false},
		{[]string{"--skip-trx"}, true},
		{[]string{"--skip-trx=yes"}, true},
		{[]string{"--skip-trx=0"}, false},
		{nil, false},
	}
	for _, tc := range cases {
		fs := NewFlagSet("t")
		var v bool
		BoolVar(fs, &v, "skip-trx", false, "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if v != tc.want {
			t.Errorf("%v: got %v, want %v", tc.args, v, tc.want)
		}
	}
	fs := NewFlagSet("t")
	var v bool
	BoolVar(fs, &v, "skip-trx", false, "")
	if err := fs.Parse([]string{"--skip-trx=maybe"}); err == nil {
		t.Error("--skip-trx=maybe: got nil error, want one")
	}
}

func TestLists(t *testing.T) {
	fs := NewFlagSet("t")
	var s Strings
	var n Ints
	fs.Var(&s, "host", "")
	fs.Var(&n, "concurrency", "")
	if err := fs.Parse([]string{"--host=a,b", "--host", "c", "--concurrency=1,4,16"}); err != nil {
		t.Fatal(err)
	}
	if s.String() != "a,b,c" || n.String() != "1,4,16" {
		t.Errorf("got %s and %s, want a,b,c and 1,4,16", s.String(), n.String())
	}
	if err := n.Set("x"); err == nil {
		t.Error("Ints.Set(x): got nil error, want one")
	}
}
