package hostsource

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
)

func TestParseDiffArg(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version":7}`), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(string) string { return "" }
	cases := []struct {
		name    string
		arg     string
		want    Source
		wantErr string
	}{
		{"local", "local", Source{}, ""},
		{"pid", "pid:42", Source{PID: 42}, ""},
		{"sandbox", "sandbox:durable", Source{Sandbox: "durable"}, ""},
		{"target", "mysql://u@127.0.0.1:1/", Source{URL: "mysql://u@127.0.0.1:1/"}, ""},
		{"bad pid", "pid:0", Source{}, "pid:PID needs a process id"},
		{"no sandbox name", "sandbox:", Source{}, "sandbox:NAME needs a name"},
		{"no such file, password kept out", "u:secret@nowhere", Source{}, `"...@nowhere" is no file`},
		{"old facts file", bad, Source{}, "host facts version 7, want 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var creds target.Credentials
			got, f, err := ParseDiffArg(getenv, &creds, tc.arg)
			if tc.wantErr != "" {
				if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want a usage error containing %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("got %q, want no password in it", err)
				}
				return
			}
			if err != nil || f != nil || got != tc.want {
				t.Errorf("got %+v, %v, %v; want %+v, no facts, no error", got, f, err, tc.want)
			}
		})
	}
}

func TestSourceCheck(t *testing.T) {
	cases := []struct {
		name string
		src  Source
		want string
	}{
		{"this machine", Source{}, ""},
		{"pid and datadir", Source{PID: 7, DataDir: "/d"}, ""},
		{"negative pid", Source{PID: -3}, "--pid must be a process id, got -3"},
		{"pid and sandbox", Source{PID: 1, Sandbox: "a"}, "--pid or --sandbox, not both"},
		{"sandbox and target", Source{Sandbox: "a", URL: "mysql://u@h/"}, "--sandbox or a TARGET, not both"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.src.Check()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case tc.want != "" && (err == nil || !usage.Is(err) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want a usage error containing %q", err, tc.want)
			}
		})
	}
}
