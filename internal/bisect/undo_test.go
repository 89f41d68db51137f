package bisect

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/usage"
)

func TestUndoFileRoundTrip(t *testing.T) {
	orig := map[string]string{"sync_binlog": "1", "report_password": "hush", "table_open_cache": "4000", "port": "3306"}
	f := newUndo("shakedown test", "mysql://u@127.0.0.1:3306/db", orig, []string{"table_open_cache", "sync_binlog"})
	f.Sandbox = &undoSandbox{Home: "/h", Name: "durable", Settings: []string{"sync_binlog=1"}}
	path := filepath.Join(t.TempDir(), "undo.json")
	if err := f.write(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "hush") || strings.Contains(string(b), "report_password") {
		t.Errorf("undo file holds a password variable:\n%s", b)
	}
	got, err := readUndo(path)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if want := []string{"sync_binlog", "table_open_cache"}; !reflect.DeepEqual(got.Changes, want) {
		t.Errorf("changes: got %v, want %v", got.Changes, want)
	}
	if got.Variables["table_open_cache"] != "4000" || got.Sandbox == nil || got.Sandbox.Name != "durable" {
		t.Errorf("got %+v, want the variables and the sandbox back", got)
	}
}

func TestReadUndoBadInput(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{"missing", "", "no such file"},
		{"not JSON", "{", "not an undo file written by vars bisect"},
		{"other JSON", `{"format": 7}`, "not an undo file written by vars bisect (format 7"},
		{"no variables", `{"format": 1, "control": "mysql://u@h:1/d"}`, "0 variables"},
		{"bad name", `{"format": 1, "control": "mysql://u@h:1/d", "variables": {"a": "1"}, "changes": ["a; DROP"]}`, `"a; DROP" is not a variable name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "undo.json")
			if tt.name != "missing" {
				if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := readUndo(path)
			if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want a usage error containing %q", err, tt.want)
			}
		})
	}
}

// FuzzReadUndo feeds the undo file reader arbitrary files: it must not
// panic, and what it accepts names only plain variables.
func FuzzReadUndo(f *testing.F) {
	f.Add([]byte(`{"format": 1, "control": "mysql://u@h:1/d", "variables": {"sync_binlog": "1"}, "changes": ["sync_binlog"]}`))
	f.Add([]byte(`{"format": 1, "control": "x", "variables": {"a": "1"}, "sandbox": {"home": "/h", "name": "n", "settings": ["a=1"]}}`))
	f.Add([]byte(`[]`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "undo.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		u, err := readUndo(path)
		if err != nil {
			return
		}
		for _, n := range u.Changes {
			if !nameRE.MatchString(n) {
				t.Errorf("accepted change %q", n)
			}
		}
	})
}

func TestLiteral(t *testing.T) {
	tests := []struct{ in, want string }{
		{"1", "1"}, {"-3", "-3"}, {"10.000000", "10.000000"}, {"18446744073709551615", "18446744073709551615"},
		{"ON", "'ON'"}, {"", "''"}, {"pool-of-threads", "'pool-of-threads'"},
		{"STRICT_TRANS_TABLES,NO_ZERO_DATE", "'STRICT_TRANS_TABLES,NO_ZERO_DATE'"},
		{`it's \ odd`, `'it\'s \\ odd'`}, {"1e5", "'1e5'"}, {"inf", "'inf'"},
	}
	for _, tt := range tests {
		if got := literal(tt.in); got != tt.want {
			t.Errorf("literal(%q): got %s, want %s", tt.in, got, tt.want)
		}
	}
}
