package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// TestBulkInsertIgnoresOLTPOptions: a sysbench line for bulk_insert that
// carries the OLTP scripts' options (--tables, --table-size, ...) runs, as
// in sysbench 1.0.20, whose bulk_insert.lua reads none of them; they are
// left out of the result. An option no script has is still refused.
// Before, "run bulk_insert: --tables: unknown option".
func TestBulkInsertIgnoresOLTPOptions(t *testing.T) {
	url := sandboxtest.URL(t)
	mustExec(t, adminDB(t, url), "DROP DATABASE IF EXISTS bulkopts", "CREATE DATABASE bulkopts")
	url = strings.TrimSuffix(url, "/sbtest") + "/bulkopts"
	oltp := []string{"--tables=1", "--table-size=100000", "--point-selects", "3", "--skip-trx", "--range-selects=off", "--mysql-storage-engine=innodb"}
	path := filepath.Join(t.TempDir(), "r.json")
	for _, verb := range []string{"prepare", "run", "cleanup"} {
		args := append([]string{"sysbench", "/usr/share/sysbench/bulk_insert.lua", "--target=" + url, "--threads=2", "--time=1"}, oltp...)
		if verb == "run" {
			args = append(args, "--json="+path)
		}
		if code, out, errOut := runCLI(context.Background(), append(args, verb)...); code != ExitOK {
			t.Fatalf("%s: exit %d, want 0\n%s\n%s", verb, code, out, errOut)
		}
		if verb == "run" {
			res := readResult(t, path)
			if res.Transactions == 0 {
				t.Errorf("run: got 0 events, want some")
			}
			for _, o := range []string{"tables", "table-size", "point-selects", "skip-trx"} {
				if v, ok := res.Options[o]; ok {
					t.Errorf("result options: got %s=%s, want the ignored option left out", o, v)
				}
			}
		}
	}
	code, _, errOut := runCLI(context.Background(), "run", "bulk_insert", "--target="+url, "--tabels=1")
	if code != ExitUsage || !strings.Contains(errOut, "--tabels: unknown option") {
		t.Errorf("a typo: got exit %d, %q; want %d and --tabels: unknown option", code, errOut, ExitUsage)
	}
}
