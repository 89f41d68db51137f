package check

import "testing"

func TestZoneName(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		same bool
	}{
		{"SYSTEM (UTC)", "SYSTEM (Etc/UTC)", true},
		{"SYSTEM (UTC)", "+00:00", true},
		{"SYSTEM (Etc/Universal)", "UTC", true},
		{"SYSTEM (UTC)", "SYSTEM (CET)", false},
		{"Europe/Paris", "SYSTEM (UTC)", false},
	} {
		if got := zoneName(tt.a) == zoneName(tt.b); got != tt.same {
			t.Errorf("%q and %q: got same %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}
