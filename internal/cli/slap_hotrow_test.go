package cli

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// TestSlapHotRow: the flash sale's decrement of one row, run by 8 clients.
// On a server that keeps every update, the stock falls by exactly the rows
// the updates changed. A server that does not (here a trigger that turns
// every fifth decrement into an increment, as a server merging concurrent
// updates would lose them) fails the test with LOST UPDATES, in the text,
// the JSON and the exit status, whatever its speed.
func TestSlapHotRow(t *testing.T) {
	url := sandboxtest.URL(t)
	db := adminDB(t, url)
	mustExec(t, db,
		"DROP DATABASE IF EXISTS slaphot",
		"CREATE DATABASE slaphot",
		"CREATE TABLE slaphot.items (id INT PRIMARY KEY, stock INT NOT NULL)",
		"INSERT INTO slaphot.items VALUES (1, 100000), (2, 5)",
	)
	host, port := hostPort(t, url)
	slap := func(json string) (int, string, string) {
		return runCLI(context.Background(), "slap", "-h"+host, "-P"+port, "-uroot", "--create-schema=slaphot",
			"--query=UPDATE items SET stock = stock - 1 WHERE id = 1 AND stock > 0;SELECT stock FROM items WHERE id = 2",
			"--delimiter=;", "--concurrency=8", "--number-of-queries=800", "--json="+json)
	}
	dir := t.TempDir()
	code, out, errOut := slap(filepath.Join(dir, "ok.json"))
	if code != 0 {
		t.Fatalf("slap: exit %d\n%s\n%s", code, out, errOut)
	}
	// 800 statements, half of them the decrement: 400 rows changed.
	if want := "Hot-row check: sum of stock in items where id = 1 changed by -400, as the 400 rows the updates changed account for"; !strings.Contains(out, want) {
		t.Fatalf("slap: no %q in\n%s", want, out)
	}
	if lv := readResults(t, filepath.Join(dir, "ok.json")); len(lv) != 1 || lv[0].DataCheck == nil || !lv[0].DataCheck.OK() || lv[0].DataCheck.Committed != 400 {
		t.Fatalf("--json: got %+v, want one level whose data check holds for 400 rows", lv)
	}

	mustExec(t, db, "CREATE TRIGGER slaphot.lossy BEFORE UPDATE ON slaphot.items FOR EACH ROW SET NEW.stock = IF(OLD.stock % 5 = 0, OLD.stock + 1, NEW.stock)")
	code, out, errOut = slap(filepath.Join(dir, "lost.json"))
	if code != ExitFailure {
		t.Fatalf("slap on a server that loses updates: got exit %d, want %d\n%s\n%s", code, ExitFailure, out, errOut)
	}
	re := regexp.MustCompile(`LOST UPDATES: (\d+) of 400 committed transactions \(sum of stock in items where id = 1 went from`)
	m := re.FindStringSubmatch(out)
	if m == nil || m[1] == "0" || !strings.Contains(errOut, "hot-row check failed") {
		t.Fatalf("slap: want the finding in the summary and the error\n%s\n%s", out, errOut)
	}
	lv := readResults(t, filepath.Join(dir, "lost.json"))
	if len(lv) != 1 || lv[0].DataCheck == nil || lv[0].DataCheck.LostUpdates == 0 || !strings.Contains(lv[0].Error, "LOST UPDATES") {
		t.Fatalf("--json: got %+v, want the lost updates and the error", lv)
	}
}
