package verify

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Each test builds data that the naive checksum (COUNT and BIT_XOR of
// CRC32 over CONCAT_WS, or its usual variants) calls equal although the
// rows differ, and checks that verify finds exactly the differing rows.

func TestPitfallXORCancellation(t *testing.T) {
	p := newPair(t)
	p.both(t, "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(10) NOT NULL)")
	mustExec(t, p.srcDB, "INSERT INTO t VALUES (1, 'xxxa'), (2, 'yyyd'), (3, 'zzzz')")
	// The same bit flip (0x03) at the same place in two rows: CRC32 is
	// affine, so both rows' CRCs change by the same value and XOR cancels.
	mustExec(t, p.dstDB, "INSERT INTO t VALUES (1, 'xxxb'), (2, 'yyyg'), (3, 'zzzz')")
	p.naiveEqual(t, "t", "id, c")
	r := p.run(t, Options{})
	tr := table(t, r, "t")
	wantRows(t, tr, "changed id=1 [c]", "changed id=2 [c]")
	// A changed row shows both values, not only the column's name.
	var got []string
	for _, d := range tr.Rows {
		got = append(got, d.Describe())
	}
	want := `changed id=1 (c: "xxxa" on the source, "xxxb" on the target)`
	if !slices.Contains(got, want) {
		t.Errorf("got %q, want %q among them", got, want)
	}
}

func TestPitfallDuplicateRows(t *testing.T) {
	p := newPair(t)
	p.both(t, "CREATE TABLE t (a INT, b VARCHAR(10))") // no key
	// XOR cancels pairs: {A, A, C} and {B, B, C} both checksum to C.
	mustExec(t, p.srcDB, "INSERT INTO t VALUES (1, 'A'), (1, 'A'), (3, 'C')")
	mustExec(t, p.dstDB, "INSERT INTO t VALUES (2, 'B'), (2, 'B'), (3, 'C')")
	p.naiveEqual(t, "t", "a, b")
	r := p.run(t, Options{})
	tr := table(t, r, "t")
	wantRows(t, tr, "missing_on_target a=1 b=A x2", "extra_on_target a=2 b=B x2")
	if tr.DifferingRows != 4 || len(tr.Key) != 0 {
		t.Errorf("got %d differing rows, key %v; want 4 and whole rows", tr.DifferingRows, tr.Key)
	}

	// Counts that differ by an even number cancel too.
	p2 := newPair(t)
	p2.both(t, "CREATE TABLE t (a INT, b VARCHAR(10))")
	mustExec(t, p2.srcDB, "INSERT INTO t VALUES (1, 'A'), (1, 'A'), (1, 'A'), (2, 'B')")
	mustExec(t, p2.dstDB, "INSERT INTO t VALUES (1, 'A'), (2, 'B'), (2, 'B'), (2, 'B')")
	p2.naiveEqual(t, "t", "a, b")
	r = p2.run(t, Options{})
	wantRows(t, table(t, r, "t"), "missing_on_target a=1 b=A x2", "extra_on_target a=2 b=B x2")
}

func TestPitfallNulls(t *testing.T) {
	p := newPair(t)
	for _, tbl := range []string{"skip", "text", "marker", "empty"} {
		p.both(t, "CREATE TABLE "+tbl+" (id INT PRIMARY KEY, a VARCHAR(10), b VARCHAR(10))")
	}
	// CONCAT_WS skips NULLs: 1#x and 2# either way.
	mustExec(t, p.srcDB, "INSERT INTO skip VALUES (1, NULL, 'x'), (2, NULL, '')")
	mustExec(t, p.dstDB, "INSERT INTO skip VALUES (1, 'x', NULL), (2, '', NULL)")
	p.naiveEqual(t, "skip", "id, a, b")
	// NULL turned into text before hashing meets that text.
	mustExec(t, p.srcDB, "INSERT INTO text VALUES (3, NULL, 'k'), (5, 'NULL', 'k')")
	mustExec(t, p.dstDB, "INSERT INTO text VALUES (3, 'NULL', 'k'), (5, NULL, 'k')")
	p.naiveEqual(t, "text", "id, IFNULL(a, 'NULL'), b")
	mustExec(t, p.srcDB, "INSERT INTO marker VALUES (4, NULL, 'k')")
	mustExec(t, p.dstDB, "INSERT INTO marker VALUES (4, '<null>', 'k')")
	p.naiveEqual(t, "marker", "id, IFNULL(a, '<null>'), b")
	mustExec(t, p.srcDB, "INSERT INTO empty VALUES (6, NULL, NULL)")
	mustExec(t, p.dstDB, "INSERT INTO empty VALUES (6, '', NULL)")
	p.naiveEqual(t, "empty", "id, IFNULL(a, ''), b")

	r := p.run(t, Options{})
	wantRows(t, table(t, r, "skip"), "changed id=1 [a,b]", "changed id=2 [a,b]")
	wantRows(t, table(t, r, "text"), "changed id=3 [a]", "changed id=5 [a]")
	wantRows(t, table(t, r, "marker"), "changed id=4 [a]")
	wantRows(t, table(t, r, "empty"), "changed id=6 [a]")
}

func TestPitfallSeparators(t *testing.T) {
	p := newPair(t)
	p.both(t, "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10) NOT NULL, b VARCHAR(10) NOT NULL)")
	mustExec(t, p.srcDB, "INSERT INTO t VALUES (1, 'a#b', 'c'), (2, 'x', 'y')")
	mustExec(t, p.dstDB, "INSERT INTO t VALUES (1, 'a', 'b#c'), (2, 'x', 'y')")
	p.naiveEqual(t, "t", "id, a, b")
	r := p.run(t, Options{})
	wantRows(t, table(t, r, "t"), "changed id=1 [a,b]")
}

func TestPitfallCollations(t *testing.T) {
	keys := []string{"a", "B", "c", "É", "Z", "_x", "ñ", "Ö", "1", "aa", "AB", "zz", "Ça", "y"}
	values := func(skip string, extra ...string) string {
		var vals []string
		for i, k := range append(keys, extra...) {
			if k != skip {
				vals = append(vals, "('"+k+"', "+strconv.Itoa(i)+")")
			}
		}
		return strings.Join(vals, ",")
	}
	t.Run("different collations", func(t *testing.T) {
		// The same keys sort differently under utf8mb4_general_ci and
		// utf8mb4_bin, so ranges from one side select other rows on the
		// other; a key that differs only in case is a different row.
		p := newPair(t)
		mustExec(t, p.srcDB, "CREATE TABLE t (k VARCHAR(10) COLLATE utf8mb4_general_ci PRIMARY KEY, v INT NOT NULL)",
			"INSERT INTO t VALUES "+values("", "abc"))
		mustExec(t, p.dstDB, "CREATE TABLE t (k VARCHAR(10) COLLATE utf8mb4_bin PRIMARY KEY, v INT NOT NULL)",
			"INSERT INTO t VALUES "+values("", "ABC"))
		r := p.run(t, Options{chunkRows: 3})
		tr := table(t, r, "t")
		wantRows(t, tr, "missing_on_target k=abc", "extra_on_target k=ABC")
		if !hasSchemaKind(tr, "column_collation") {
			t.Errorf("got schema differences %v, want the collation of k", tr.SchemaDifferences)
		}
	})
	t.Run("case-insensitive key on both", func(t *testing.T) {
		p := newPair(t)
		p.both(t, "CREATE TABLE t (k VARCHAR(10) COLLATE utf8mb4_general_ci PRIMARY KEY, v INT NOT NULL)")
		mustExec(t, p.srcDB, "INSERT INTO t VALUES "+values("", "abc"))
		mustExec(t, p.dstDB, "INSERT INTO t VALUES "+values("", "ABC"))
		// Matching rows by key in the collation (WHERE k = 'abc') would
		// pair abc with ABC and call them one row.
		r := p.run(t, Options{chunkRows: 3})
		tr := table(t, r, "t")
		wantRows(t, tr, "missing_on_target k=abc", "extra_on_target k=ABC")
		if tr.Chunks < 3 {
			t.Errorf("got %d chunks, want several (walked by the key)", tr.Chunks)
		}
	})
}

func TestPitfallTimeZones(t *testing.T) {
	p := newPair(t)
	p.both(t, "CREATE TABLE t (id INT PRIMARY KEY, ts TIMESTAMP NULL)")
	mustExec(t, p.srcDB, "SET time_zone = '+00:00'", "INSERT INTO t VALUES (1, '2024-03-31 01:30:00')")
	// An hour later, as an instant; read by a server whose session time
	// zone is an hour ahead it prints as the source's does.
	mustExec(t, p.dstDB, "SET time_zone = '+00:00'", "INSERT INTO t VALUES (1, '2024-03-31 02:30:00')")
	p.naiveEqualTZ(t, "t", "id, CAST(ts AS CHAR)", "+01:00", "+00:00")
	// The same instants stored from sessions in different time zones are
	// equal.
	mustExec(t, p.srcDB, "SET time_zone = '+05:00'", "INSERT INTO t VALUES (3, '2024-01-01 05:00:00')")
	mustExec(t, p.dstDB, "SET time_zone = '-03:00'", "INSERT INTO t VALUES (3, '2023-12-31 21:00:00')")
	r := p.run(t, Options{})
	wantRows(t, table(t, r, "t"), "changed id=1 [ts]")
}

func TestPitfallFractionalSeconds(t *testing.T) {
	p := newPair(t)
	mustExec(t, p.srcDB, "CREATE TABLE t (id INT PRIMARY KEY, dt DATETIME(6), tm TIME(6), e DATETIME(3))",
		"INSERT INTO t VALUES (1, '2024-01-01 10:00:00.123456', '10:00:00.5', '2024-01-01 00:00:00.123'), (2, '2024-01-01 10:00:00', '-01:00:00.25', NULL)")
	mustExec(t, p.dstDB, "CREATE TABLE t (id INT PRIMARY KEY, dt DATETIME(6), tm TIME(6), e DATETIME(6))",
		// Row 1: cut to milliseconds; row 2 equal (e is wider on the target
		// but holds the same values).
		"INSERT INTO t VALUES (1, '2024-01-01 10:00:00.123', '10:00:00.4', '2024-01-01 00:00:00.123'), (2, '2024-01-01 10:00:00', '-01:00:00.25', NULL)")
	p.naiveEqual(t, "t", "id, DATE_FORMAT(dt, '%Y-%m-%d %T'), TIME_FORMAT(tm, '%H:%i:%s'), DATE_FORMAT(e, '%Y-%m-%d %T')")
	r := p.run(t, Options{})
	tr := table(t, r, "t")
	wantRows(t, tr, "changed id=1 [dt,tm]")
	if !hasSchemaKind(tr, "column_type") {
		t.Errorf("got schema differences %v, want the type of e", tr.SchemaDifferences)
	}
}

func TestPitfallNumbers(t *testing.T) {
	p := newPair(t)
	mustExec(t, p.srcDB, "CREATE TABLE t (id INT PRIMARY KEY, f FLOAT, d DOUBLE, x DECIMAL(20,10), y DECIMAL(10,2))",
		`INSERT INTO t VALUES
		(1, 0.1, 1.0000000000001, 1.0000000001, 1.50),  -- all equal under the rules
		(2, 1.5, 2.5, 2, 2),
		(3, 3.31, 3.5, 3, 3)`)
	mustExec(t, p.dstDB, "CREATE TABLE t (id INT PRIMARY KEY, f DOUBLE, d DOUBLE, x DECIMAL(20,10), y DECIMAL(12,4))",
		`INSERT INTO t VALUES
		(1, 0.1, 1.00000000000011, 1.0000000001, 1.5),  -- FLOAT 0.1 read as a DOUBLE, d within 1e-12
		(2, 1.5000001, 2.5000001, 2.0000000001, 2),       -- f within 1e-6 of a FLOAT; d and x beyond
		(3, 3.32, 3.5, 3, 3.001)`)
	p.naiveEqual(t, "t", "id, ROUND(f, 1), ROUND(d, 1), ROUND(x, 6), ROUND(y, 2)")
	r := p.run(t, Options{})
	wantRows(t, table(t, r, "t"), "changed id=2 [d,x]", "changed id=3 [f,y]")
}

func TestPitfallCharsets(t *testing.T) {
	p := newPair(t)
	text := "'Crème brûlée, naïve café — déjà vu: Ærø, ß, €'"
	mustExec(t, p.srcDB, "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(60) CHARACTER SET latin1, c CHAR(60) CHARACTER SET latin1, e ENUM('é', 'ü') CHARACTER SET latin1)",
		"INSERT INTO t VALUES (1, "+text+", "+text+", 'é'), (2, 'plain', 'ascii', 'ü'), (3, 'é', 'x', NULL)")
	mustExec(t, p.dstDB, "CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(60) CHARACTER SET utf8mb4, c CHAR(60) CHARACTER SET utf8mb4, e ENUM('é', 'ü') CHARACTER SET utf8mb4)",
		"INSERT INTO t VALUES (1, "+text+", "+text+", 'é'), (2, 'plain', 'ascii', 'ü'), (3, 'e', 'x', NULL)")
	r := p.run(t, Options{})
	tr := table(t, r, "t")
	// The same text in latin1 and utf8mb4 is equal; é and e are not.
	wantRows(t, tr, "changed id=3 [s]")
	if !hasSchemaKind(tr, "column_charset") {
		t.Errorf("got schema differences %v, want the character sets", tr.SchemaDifferences)
	}
}

func TestPitfallJSON(t *testing.T) {
	p := newPair(t)
	p.both(t, "CREATE TABLE t (id INT PRIMARY KEY, j JSON)")
	mustExec(t, p.srcDB, `INSERT INTO t VALUES (1, '{"a": 1, "b": [1, 2.0]}'), (2, '{"a": 1}'), (3, '{"n": 12345678901234567890}')`)
	mustExec(t, p.dstDB, `INSERT INTO t VALUES (1, '{"b":[1,2], "a":1.0}'), (2, '{"a": 2}'), (3, '{"n": 12345678901234567891}')`)
	r := p.run(t, Options{})
	// Row 1 is the same document written differently; 3 differs beyond a
	// double's precision.
	wantRows(t, table(t, r, "t"), "changed id=2 [j]", "changed id=3 [j]")
}

func TestLiveSourceRecheck(t *testing.T) {
	p := newPair(t)
	p.both(t, "CREATE TABLE t (id INT PRIMARY KEY, v INT NOT NULL)")
	mustExec(t, p.srcDB, "INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)")
	mustExec(t, p.dstDB, "INSERT INTO t VALUES (1, 1), (2, 20), (3, 30)")
	fixed := false
	r := p.run(t, Options{Recheck: 3, RecheckWait: 1, onDiffs: func() {
		// Replication catches up on row 2 between the first reading and the
		// re-read.
		if !fixed {
			fixed = true
			mustExec(t, p.dstDB, "UPDATE t SET v = 2 WHERE id = 2")
		}
	}})
	wantRows(t, table(t, r, "t"), "changed id=3 [v]")
}
