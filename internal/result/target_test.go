package result

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestTargetConnection(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name     string
		target   Target
		want     string
		wantJSON string // a fragment the JSON must hold; "" when the fields must be absent
	}{
		{"not recorded", Target{Name: "a"}, "", ""},
		{"wire with TLS", Target{Client: ClientWire, TLS: &yes}, "wire, TLS", `"client":"wire","tls":true`},
		{"database/sql without TLS", Target{Client: ClientSQL, TLS: &no}, "database/sql, no TLS", `"client":"database/sql","tls":false`},
		{"client only", Target{Client: ClientWire}, "wire", `"client":"wire"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.target.Connection(); got != tc.want {
				t.Errorf("Connection: got %q, want %q", got, tc.want)
			}
			b, err := json.Marshal(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantJSON == "" {
				if strings.Contains(string(b), "client") || strings.Contains(string(b), "tls") {
					t.Errorf("JSON: got %s, want no client or tls field", b)
				}
			} else if !strings.Contains(string(b), tc.wantJSON) {
				t.Errorf("JSON: got %s, want it to hold %s", b, tc.wantJSON)
			}
		})
	}
	var tg Target
	tg.SetConnection(ClientWire, true)
	if got := tg.Connection(); got != "wire, TLS" {
		t.Errorf("after SetConnection: got %q, want %q", got, "wire, TLS")
	}
}
