package dbcopy

import (
	"context"
	"testing"
)

// TestSnapshotIgnoresLaterWrites changes the source after the first range
// is copied: the target holds the source as it was when the copy began,
// not half-way between the two states.
func TestSnapshotIgnoresLaterWrites(t *testing.T) {
	p := newPair(t)
	shop(t, p.srcDB, 60, 400)
	before := map[string]int64{}
	queries := map[string]string{
		"orders total": "SELECT CAST(SUM(amount) * 100 AS SIGNED) FROM orders",
		"customers":    "SELECT COUNT(*) FROM customers",
		"audit":        "SELECT COUNT(*) FROM audit",
	}
	for name, q := range queries {
		before[name] = count(t, p.srcDB, q)
	}
	writes := []string{
		"UPDATE orders SET amount = amount + 1000",
		"INSERT INTO customers (id, name) VALUES (1001, 'late'), (1002, 'later')",
		"DELETE FROM audit",
	}
	opts := Options{AllowWrite: true, Threads: 1, ChunkRows: 50, NoVerify: true, NoAnalyze: true}
	opts.afterChunk = func(n int) {
		if n == 1 {
			mustExec(t, p.srcDB, writes...)
		}
	}
	if _, err := Run(testCtx(t), p.src, p.dst, opts); err != nil {
		t.Fatalf("copy: %v", err)
	}
	if got := count(t, p.srcDB, queries["customers"]); got != before["customers"]+2 {
		t.Fatalf("source customers after the writes: got %d, want %d (the writes did not happen)", got, before["customers"]+2)
	}
	for name, q := range queries {
		if got := count(t, p.dstDB, q); got != before[name] {
			t.Errorf("%s on the target: got %d, want %d, the source at the copy's start", name, got, before[name])
		}
	}
}

// TestInsertFallback copies with multi-row INSERTs when the target
// refuses LOAD DATA LOCAL.
func TestInsertFallback(t *testing.T) {
	p := newPair(t)
	shop(t, p.srcDB, 60, 200)
	var was int
	if err := p.srcDB.QueryRow("SELECT @@GLOBAL.local_infile").Scan(&was); err != nil {
		t.Fatal(err)
	}
	mustExec(t, p.srcDB, "SET GLOBAL local_infile = 0")
	t.Cleanup(func() { p.srcDB.ExecContext(context.Background(), "SET GLOBAL local_infile = ?", was) })
	res, err := Run(testCtx(t), p.src, p.dst, Options{AllowWrite: true, Threads: 2, ChunkRows: 40, NoAnalyze: true})
	if err != nil {
		t.Fatalf("copy: %v", err)
	}
	if res.Loader != "insert" || !res.Verify.Equal {
		t.Errorf("loader %q, verify %+v: want insert and equal", res.Loader, res.Verify)
	}
}
