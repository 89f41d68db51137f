package suggest

import "testing"

func TestClosest(t *testing.T) {
	commands := []string{"analyze", "cleanup", "demo", "prepare", "report", "run", "sandbox", "slap", "sweep", "vars", "verify", "version", "watch"}
	workloads := []string{"oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_point_select"}
	cases := []struct {
		name  string
		s     string
		known []string
		want  string
	}{
		{"transposed letters", "rnu", commands, "run"},
		{"missing letter", "sandbx", commands, "sandbox"},
		{"workload missing its last letter", "oltp_read_writ", workloads, "oltp_read_write"},
		{"unique long prefix", "oltp_point", workloads, "oltp_point_select"},
		{"ambiguous prefix", "oltp_read", workloads, ""},
		{"nothing close", "frobnicate", commands, ""},
		{"exact", "watch", commands, "watch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Closest(tc.s, tc.known); got != tc.want {
				t.Errorf("Closest(%q): got %q, want %q", tc.s, got, tc.want)
			}
		})
	}
}

func TestDistance(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"thread", "threads", 1},
	}
	for _, tc := range cases {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q): got %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
