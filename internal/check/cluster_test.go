package check

import (
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
)

// TestClusterLimits: on a Galera target, a table that one whole-table
// statement could not change within the write-set limits is named, and so
// are the explicit table locks the source takes; on MariaDB neither is.
func TestClusterLimits(t *testing.T) {
	galera := &schema.Side{Server: target.Server{Version: "10.11.6-MariaDB", Flavour: flavour.Galera}}
	maria := &schema.Side{Server: target.Server{Version: "10.11.6-MariaDB", Flavour: flavour.MariaDB}}
	src := func() *snapshot {
		return &snapshot{role: "source", info: map[string]*tableInfo{
			"app.big":   {db: "app", name: "big", typ: "BASE TABLE", bytes: 3 << 30, rows: 9e6},
			"app.many":  {db: "app", name: "many", typ: "BASE TABLE", bytes: 1 << 20, rows: 200000},
			"app.small": {db: "app", name: "small", typ: "BASE TABLE", bytes: 16384, rows: 10},
			"app.v":     {db: "app", name: "v", typ: "VIEW"},
		}, locks: tableLocks{lockTables: 12, ftwrl: 3}}
	}
	tests := []struct {
		name string
		dst  *schema.Side
		vars map[string]string
		want []string // object: message part
	}{
		{"galera, default limits", galera, map[string]string{"wsrep_max_ws_size": "2147483647", "wsrep_max_ws_rows": "0"},
			[]string{"app.big: holds about 3.0 GiB, above wsrep_max_ws_size=2.0 GiB", "LOCK TABLES: the source has run LOCK TABLES 12 times",
				"FLUSH TABLES WITH READ LOCK: the source's statements include FLUSH TABLES WITH READ LOCK, 3 times"}},
		{"galera, a row limit", galera, map[string]string{"wsrep_max_ws_size": "2147483647", "wsrep_max_ws_rows": "100000"},
			[]string{"app.big: holds about 3.0 GiB", "app.many: holds about 200000 rows, above wsrep_max_ws_rows=100000", "LOCK TABLES:", "FLUSH TABLES WITH READ LOCK:"}},
		{"mariadb: no cluster", maria, map[string]string{"wsrep_max_ws_size": "1024"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &runner{rep: &Report{}, src: src(), dst: &snapshot{role: "target", side: tc.dst, vars: tc.vars}}
			r.checkWriteSetLimit()
			r.checkTableLocks()
			var got []string
			for _, f := range r.rep.Findings {
				got = append(got, f.Object+": "+f.Message)
				if f.Severity != Warning || f.Fix == "" {
					t.Errorf("%s: got severity %q, fix %q; want a warning with a fix", f.Object, f.Severity, f.Fix)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d findings %q, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("finding %d: got %q, want it to start %q", i, got[i], w)
				}
			}
		})
	}
}

func TestSizeText(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{512, "512 B"}, {1536, "1.5 KiB"}, {2147483647, "2.0 GiB"}, {3 << 40, "3.0 TiB"}} {
		if got := sizeText(tc.n); got != tc.want {
			t.Errorf("sizeText(%d): got %q, want %q", tc.n, got, tc.want)
		}
	}
}
