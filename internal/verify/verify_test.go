package verify

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/escape"
)

// sbtestTable creates an sbtest-shaped table of n rows, the same on every
// call: c and pad are digit groups derived from the id.
func sbtestTable(t *testing.T, p *pair, name string, n int) {
	t.Helper()
	mustExec(t, p.srcDB, fmt.Sprintf(`CREATE TABLE %s (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0,
		c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id), KEY k_1 (k)) ENGINE=InnoDB`, name),
		fmt.Sprintf(`INSERT INTO %s (id, k, c, pad) SELECT seq, CRC32(seq) %% %d,
		CONCAT_WS('-', CRC32(seq), CRC32(seq+1), CRC32(seq+2), CRC32(seq+3), CRC32(seq+4), CRC32(seq+5), CRC32(seq+6), CRC32(seq+7), CRC32(seq+8), CRC32(seq+9)),
		CONCAT_WS('-', CRC32(-seq), CRC32(-seq-1), CRC32(-seq-2), CRC32(-seq-3), CRC32(-seq-4))
		FROM seq_1_to_%d`, name, n, n))
	p.copyTable(t, name)
}

func TestSbtestDifferencesAndRepair(t *testing.T) {
	p := newPair(t)
	const n = 20_000
	for i := 1; i <= 2; i++ {
		sbtestTable(t, p, fmt.Sprintf("sbtest%d", i), n)
	}
	mustExec(t, p.dstDB,
		"UPDATE sbtest1 SET c = 'changed' WHERE id = 17",
		"UPDATE sbtest1 SET k = k + 1, pad = 'x' WHERE id = 19999",
		"DELETE FROM sbtest1 WHERE id IN (1, 12345)",
		"SET sql_mode = 'NO_AUTO_VALUE_ON_ZERO'",
		"INSERT INTO sbtest1 (id, k, c, pad) VALUES (20001, 1, 'new', 'new'), (0, 0, 'zero', '')",
		"UPDATE sbtest2 SET c = REVERSE(c) WHERE id = 500",
		"DELETE FROM sbtest2 WHERE id = 20000")
	var fix bytes.Buffer
	var chunks sync.Map
	r := p.run(t, Options{Fix: &fix, chunkRows: 3000, OnChunk: func(e ChunkEvent) { chunks.Store(fmt.Sprint(e.Table, e.Seq), true) }})
	t1, t2 := table(t, r, "sbtest1"), table(t, r, "sbtest2")
	wantRows(t, t1, "changed id=17 [c]", "changed id=19999 [k,pad]", "missing_on_target id=1", "missing_on_target id=12345",
		"extra_on_target id=20001", "extra_on_target id=0")
	wantRows(t, t2, "changed id=500 [c]", "missing_on_target id=20000")
	if t1.RowsSource != n || t1.RowsTarget != n || t1.DifferingRows != 6 || t1.Chunks < 5 || t1.Equal {
		t.Errorf("sbtest1: got rows %d/%d, %d differing, %d chunks, equal %v; want %d/%d, 6, several, false",
			t1.RowsSource, t1.RowsTarget, t1.DifferingRows, t1.Chunks, t1.Equal, n, n)
	}
	if r.Equal || r.DifferingRows != 8 {
		t.Errorf("got equal %v, %d differing rows; want false, 8", r.Equal, r.DifferingRows)
	}

	p.applyFix(t, fix.String())
	r = p.run(t, Options{})
	if !r.Equal {
		var b bytes.Buffer
		WriteText(&b, r, 20)
		t.Errorf("after applying the repair SQL: not equal:\n%s\nrepair SQL:\n%s", b.String(), fix.String())
	}
}

func TestEveryColumnType(t *testing.T) {
	p := newPair(t)
	ddl := `CREATE TABLE every (
		id INT NOT NULL PRIMARY KEY,
		ti TINYINT, si SMALLINT UNSIGNED, mi MEDIUMINT, i INT, bi BIGINT, ubi BIGINT UNSIGNED, zf INT(6) ZEROFILL,
		bo BOOLEAN, bt BIT(12), yr YEAR,
		de DECIMAL(30,10), fl FLOAT, db DOUBLE,
		da DATE, dt DATETIME(6), ts TIMESTAMP(3) NULL, tm TIME(6),
		ch CHAR(10), vc VARCHAR(100), tt TINYTEXT, tx TEXT, mt MEDIUMTEXT, lt LONGTEXT,
		bn BINARY(8), vb VARBINARY(20), tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB,
		en ENUM('a', 'b', 'c d'), st SET('x', 'y', 'z'),
		js JSON, geo GEOMETRY, pt POINT,
		ip INET6, uu UUID,
		gen INT AS (i * 2) VIRTUAL
	)`
	p.both(t, ddl)
	rows := []string{
		`(1, -128, 65535, -8388608, -2147483648, -9223372036854775808, 18446744073709551615, 42,
		  TRUE, b'101010101010', 1901,
		  -12345678901234567890.0123456789, 3.14159, 2.718281828459045,
		  '1000-01-01', '1000-01-01 00:00:00.000001', '1970-01-01 00:00:01.5', '-838:59:59.000000',
		  'a', 'multi\nline\ttab', 'tiny', 'text with ''quotes'' and \\backslash', REPEAT('m', 70000), 'long é ü 漢字 😀',
		  x'00010203', x'00ff00', x'', x'deadbeef', x'00', REPEAT(x'ab', 1000),
		  'c d', 'x,z',
		  '{"k": [1, 2, {"n": null}], "s": "é"}', ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 0))'), POINT(1.5, -2),
		  '::1', '123e4567-e89b-12d3-a456-426614174000', DEFAULT)`,
		`(2, 127, 0, 8388607, 2147483647, 9223372036854775807, 0, 0,
		  FALSE, b'0', 2155,
		  0.0000000001, -1.5e-30, 1.7976931348623157e308,
		  '9999-12-31', '9999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999', '838:59:59.999999',
		  '', '', '', '', '', '',
		  x'', x'', x'', x'', x'', x'',
		  'a', '',
		  '[]', ST_GeomFromText('POINT(0 0)'), POINT(0, 0),
		  '2001:db8::ff00:42:8329', '00000000-0000-0000-0000-000000000000', DEFAULT)`,
		"(3, " + strings.Repeat("NULL, ", 36) + "DEFAULT)",
		`(4, 0, 1, 0, 0, 0, 1, 1, 1, b'1', 2000, 0, 0, 0, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '00:00:00',
		  'NULL', 'NULL', '<null>', 'N', '0', ' ', x'4e554c4c', x'4e', x'00', x'20', x'30', x'3a',
		  'b', 'y', 'null', NULL, NULL, NULL, NULL, DEFAULT)`,
	}
	mustExec(t, p.srcDB, "SET sql_mode = ''", "INSERT INTO every VALUES "+strings.Join(rows, ","))
	mustExec(t, p.dstDB, "SET sql_mode = ''", "INSERT INTO every VALUES "+strings.Join(rows, ","))

	r := p.run(t, Options{})
	if tr := table(t, r, "every"); !tr.Equal || len(tr.Compared) != 38 {
		t.Fatalf("identical copies: got equal %v, %d rows differ (%v), %d columns compared; want equal, 38 columns",
			tr.Equal, tr.DifferingRows, rowSet(tr), len(tr.Compared))
	}

	// One change per column, spread over the rows.
	changes := map[string]string{
		"ti": "0", "si": "1", "mi": "1", "i": "1", "bi": "1", "ubi": "18446744073709551614", "zf": "43",
		"bo": "FALSE", "bt": "b'101010101011'", "yr": "1902",
		"de": "-12345678901234567890.0123456788", "fl": "3.15", "db": "2.7182818",
		"da": "'1000-01-02'", "dt": "'1000-01-01 00:00:00.000002'", "ts": "'1970-01-01 00:00:01.501'", "tm": "'-838:59:58'",
		"ch": "'A'", "vc": "'multi\\nline\\ttab '", "tt": "'tinY'", "tx": "'text with ''quotes'' and /backslash'",
		"mt": "REPEAT('m', 70001)", "lt": "'long é ü 漢字 😁'",
		"bn": "x'00010204'", "vb": "x'00ff0000'", "tb": "x'00'", "bl": "x'deadbeee'", "mb": "x''", "lb": "REPEAT(x'ab', 1001)",
		"en": "'a'", "st": "'x'", "js": `'{"k": [1, 2, {"n": 0}], "s": "é"}'`,
		"geo": "ST_GeomFromText('POLYGON((0 0,2 0,1 1,0 0))')", "pt": "POINT(1.5, -2.5)",
		"ip": "'::2'", "uu": "'123e4567-e89b-12d3-a456-426614174001'",
	}
	cols := []string{"gen"}
	for _, col := range slices.Sorted(maps.Keys(changes)) {
		mustExec(t, p.dstDB, fmt.Sprintf("UPDATE every SET %s = %s WHERE id = 1", escape.Ident(col), changes[col]))
		cols = append(cols, col)
	}
	want := []string{"changed id=1 [" + strings.Join(cols, ",") + "]"}
	// NULL to a value, a value to NULL.
	mustExec(t, p.dstDB, "UPDATE every SET vc = '', lb = x'' WHERE id = 3", "UPDATE every SET ch = NULL, js = NULL WHERE id = 4")
	want = append(want, "changed id=3 [vc,lb]", "changed id=4 [ch,js]")
	var fix bytes.Buffer
	r = p.run(t, Options{Fix: &fix})
	got := mergeByKey(rowSet(table(t, r, "every")))
	wantMerged := mergeByKey(want)
	if strings.Join(got, "\n") != strings.Join(wantMerged, "\n") {
		t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(wantMerged, "\n  "))
	}
	p.applyFix(t, fix.String())
	if r := p.run(t, Options{}); !r.Equal {
		t.Errorf("after the repair SQL: %v\nrepair SQL:\n%s", rowSet(table(t, r, "every")), fix.String())
	}
}

// mergeByKey merges "changed id=N [cols]" lines of one key into one line
// with the columns sorted.
func mergeByKey(lines []string) []string {
	cols := map[string][]string{}
	for _, l := range lines {
		head, rest, _ := strings.Cut(l, " [")
		cols[head] = append(cols[head], strings.Split(strings.TrimSuffix(rest, "]"), ",")...)
	}
	var out []string
	for _, head := range slices.Sorted(maps.Keys(cols)) {
		c := cols[head]
		sort.Strings(c)
		out = append(out, head+" ["+strings.Join(c, ",")+"]")
	}
	return out
}

func TestCompositeKeys(t *testing.T) {
	p := newPair(t)
	// Integer first: chunked by ranges of a. Text first: walked.
	p.both(t,
		"CREATE TABLE ia (a INT NOT NULL, b VARCHAR(10) NOT NULL, v INT, PRIMARY KEY (a, b))",
		"CREATE TABLE ta (a VARCHAR(10) NOT NULL, b INT NOT NULL, v INT, PRIMARY KEY (a, b))",
		"CREATE TABLE uk (id INT, a VARCHAR(10) NOT NULL, b DATE NOT NULL, v INT, UNIQUE KEY ab (a, b))")
	for _, db := range []*pair{p} {
		mustExec(t, db.srcDB,
			"INSERT INTO ia SELECT seq % 50, CONCAT('k', seq), seq FROM seq_1_to_2000",
			"INSERT INTO ta SELECT CONCAT('k', seq % 50), seq, seq FROM seq_1_to_2000",
			"INSERT INTO uk SELECT seq, CONCAT('k', seq % 7), '2024-01-01' + INTERVAL seq DAY, seq FROM seq_1_to_2000")
	}
	for _, tbl := range []string{"ia", "ta", "uk"} {
		mustExec(t, p.dstDB, fmt.Sprintf("INSERT INTO %s SELECT * FROM %s.%s", tbl, escape.Ident(p.src.DB), tbl))
	}
	mustExec(t, p.dstDB,
		"UPDATE ia SET v = 0 WHERE a = 7 AND b = 'k57'",
		"DELETE FROM ia WHERE a = 49 AND b = 'k1999'",
		"INSERT INTO ia VALUES (60, 'x', 1)",
		"UPDATE ta SET v = 0 WHERE a = 'k7' AND b = 57",
		"DELETE FROM ta WHERE a = 'k0' AND b = 50",
		"INSERT INTO ta VALUES ('a', 1, 1)",
		"UPDATE uk SET v = 0 WHERE a = 'k3' AND b = '2024-01-11'",
		"UPDATE uk SET id = NULL WHERE a = 'k4' AND b = '2024-01-05'")
	r := p.run(t, Options{chunkRows: 300})
	wantRows(t, table(t, r, "ia"), "changed a=7 b=k57 [v]", "missing_on_target a=49 b=k1999", "extra_on_target a=60 b=x")
	wantRows(t, table(t, r, "ta"), "changed a=k7 b=57 [v]", "missing_on_target a=k0 b=50", "extra_on_target a=a b=1")
	tr := table(t, r, "uk")
	wantRows(t, tr, "changed a=k3 b=2024-01-11 [v]", "changed a=k4 b=2024-01-05 [id]")
	if tr.KeyIndex != "ab" || tr.Chunks < 3 {
		t.Errorf("uk: got key %q and %d chunks, want ab and several", tr.KeyIndex, tr.Chunks)
	}
}

func TestSchemaDifferences(t *testing.T) {
	p := newPair(t)
	mustExec(t, p.srcDB,
		"CREATE TABLE only_src (id INT PRIMARY KEY)",
		"INSERT INTO only_src VALUES (1), (2)",
		`CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL DEFAULT 5, b VARCHAR(10) CHARACTER SET latin1,
			c VARCHAR(10), gone INT, ts TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, KEY ka (a), UNIQUE KEY ub (b))`,
		"INSERT INTO t (id, a, b, c, gone) VALUES (1, 1, 'x', 'y', 9), (2, 2, 'z', 'w', 9)")
	mustExec(t, p.dstDB,
		"CREATE TABLE only_dst (id INT PRIMARY KEY)",
		`CREATE TABLE t (id INT PRIMARY KEY, a BIGINT NULL DEFAULT 6, b VARCHAR(10) CHARACTER SET utf8mb4,
			c VARCHAR(10), added INT, ts TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP, KEY kb (b))`,
		"INSERT INTO t (id, a, b, c, added) VALUES (1, 1, 'x', 'y', 7), (2, 2, 'z', 'v', 7)")
	mustExec(t, p.dstDB, fmt.Sprintf("UPDATE t SET ts = (SELECT ts FROM %s.t s WHERE s.id = t.id)", escape.Ident(p.src.DB)))
	r := p.run(t, Options{})
	kinds := map[string]bool{}
	for _, tr := range r.Tables {
		for _, d := range tr.SchemaDifferences {
			kinds[d.Kind+" "+d.Object] = true
		}
	}
	for _, want := range []string{
		"table_missing_on_target ", "table_extra_on_target ",
		"column_type a", "column_nullable a", "column_default a", "column_charset b", "column_collation b",
		"column_missing_on_target gone", "column_extra_on_target added",
		"index_missing_on_target ka INDEX (a)", "index_missing_on_target ub UNIQUE (b)", "index_extra_on_target kb INDEX (b)",
	} {
		if !kinds[want] {
			t.Errorf("no schema difference %q; got %v", want, slices.Sorted(maps.Keys(kinds)))
		}
	}
	if len(kinds) != 12 {
		t.Errorf("got %d schema differences, want 12: %v", len(kinds), slices.Sorted(maps.Keys(kinds)))
	}
	tr := table(t, r, "t")
	wantRows(t, tr, "changed id=2 [c]")
	if strings.Join(tr.Compared, ",") != "id,a,b,c,ts" || len(tr.Notes) == 0 || !strings.Contains(tr.Notes[0], "not compared: gone (source only), added (target only)") {
		t.Errorf("got compared %v, notes %q", tr.Compared, tr.Notes)
	}
	if src := table(t, r, "only_src"); src.RowsSource != 2 || src.Equal {
		t.Errorf("only_src: got %d rows, equal %v; want 2, false", src.RowsSource, src.Equal)
	}
}

func TestWhereTablesExclude(t *testing.T) {
	p := newPair(t)
	p.both(t, "CREATE TABLE a1 (id INT PRIMARY KEY, v INT)", "CREATE TABLE a2 (id INT PRIMARY KEY, v INT)", "CREATE TABLE b1 (id INT PRIMARY KEY)")
	mustExec(t, p.srcDB, "INSERT INTO a1 VALUES (1, 1), (2, 2), (3, 3)", "INSERT INTO a2 VALUES (1, 1)", "INSERT INTO b1 VALUES (1)")
	mustExec(t, p.dstDB, "INSERT INTO a1 VALUES (1, 1), (2, 20), (3, 30)", "INSERT INTO a2 VALUES (1, 2)")
	r := p.run(t, Options{Tables: []string{"a*"}, Exclude: []string{"*.a2"}, Where: "id < 3"})
	if len(r.Tables) != 1 {
		t.Fatalf("got %d tables, want a1 only", len(r.Tables))
	}
	wantRows(t, table(t, r, "a1"), "changed id=2 [v]")
}

func TestResume(t *testing.T) {
	p := newPair(t)
	sbtestTable(t, p, "big", 30_000)
	mustExec(t, p.dstDB, "UPDATE big SET c = 'x' WHERE id IN (5, 29000)", "DELETE FROM big WHERE id = 15000")
	path := filepath.Join(t.TempDir(), "ck.jsonl")
	fp := Fingerprint{Source: p.src.Redacted(), Target: p.dst.Redacted()}

	// First run: stopped after a few chunks, as by a kill.
	ck, err := OpenCheckpoint(path, fp)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	var mu sync.Mutex
	first := map[int]bool{}
	_, err = Run(ctx, p.srcSide, p.dstSd, Options{Checkpoint: ck, chunkRows: 1000, Threads: 2, OnChunk: func(e ChunkEvent) {
		mu.Lock()
		defer mu.Unlock()
		first[e.Seq] = true
		if len(first) == 8 {
			cancel()
		}
	}})
	if err == nil {
		t.Fatal("first run: got no error, want interrupted")
	}
	ck.Close()
	if testing.Verbose() {
		b, _ := os.ReadFile(path)
		t.Logf("checkpoint:\n%s", b)
	}
	// A kill can cut the last line short.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, `{"table":"x","done":`...), 0o600); err != nil {
		t.Fatal(err)
	}
	recorded := strings.Count(string(data), `"done":`)
	if recorded < 8 {
		t.Fatalf("checkpoint holds %d finished chunks, want at least 8", recorded)
	}

	// Second run: skips what the first finished, checks the rest once.
	ck, err = OpenCheckpoint(path, fp)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	second := map[int]bool{}
	resumed := 0
	r, err := Run(testCtx(t), p.srcSide, p.dstSd, Options{Checkpoint: ck, chunkRows: 1000, OnChunk: func(e ChunkEvent) {
		mu.Lock()
		defer mu.Unlock()
		if e.Resumed {
			resumed++
			return
		}
		if second[e.Seq] {
			t.Errorf("chunk %d checked twice", e.Seq)
		}
		second[e.Seq] = true
	}})
	if err != nil {
		t.Fatal(err)
	}
	if resumed != recorded || r.ChunksResumed != recorded {
		t.Errorf("got %d chunks resumed (report %d), want %d", resumed, r.ChunksResumed, recorded)
	}
	tr := table(t, r, "big")
	if tr.Chunks != resumed+len(second) || tr.Chunks < 25 {
		t.Errorf("got %d chunks = %d resumed + %d checked, want about 30", tr.Chunks, resumed, len(second))
	}
	if tr.RowsSource != 30_000 || tr.RowsTarget != 29_999 {
		t.Errorf("got rows %d/%d, want 30000/29999", tr.RowsSource, tr.RowsTarget)
	}
	wantRows(t, tr, "changed id=5 [c]", "changed id=29000 [c]", "missing_on_target id=15000")

	// A checkpoint of another check is refused.
	if _, err := OpenCheckpoint(path, Fingerprint{Source: "other"}); err == nil {
		t.Error("got no error opening another check's checkpoint")
	}
}

func TestTargetNullKeys(t *testing.T) {
	p := newPair(t)
	mustExec(t, p.srcDB, "CREATE TABLE t (id INT, a VARCHAR(5) NOT NULL, v INT, UNIQUE KEY ua (a))",
		"INSERT INTO t VALUES (1, 'x', 1), (2, 'y', 2)")
	mustExec(t, p.dstDB, "CREATE TABLE t (id INT, a VARCHAR(5) NULL, v INT, UNIQUE KEY ua (a))",
		"INSERT INTO t VALUES (1, 'x', 1), (2, 'y', 2), (3, NULL, 3), (4, NULL, 4)")
	var fix bytes.Buffer
	r := p.run(t, Options{Fix: &fix})
	wantRows(t, table(t, r, "t"), "extra_on_target a=NULL", "extra_on_target a=NULL")
	if !strings.Contains(fix.String(), "WHERE `a` IS NULL LIMIT 1;") {
		t.Errorf("repair SQL does not delete the NULL-key rows:\n%s", fix.String())
	}
}

func TestKeylessManyDifferences(t *testing.T) {
	p := newPair(t)
	p.both(t, "CREATE TABLE t (a INT, b VARCHAR(20))")
	mustExec(t, p.srcDB, "INSERT INTO t SELECT seq % 3000, CONCAT('v', seq % 3000) FROM seq_1_to_6000") // every row twice
	mustExec(t, p.dstDB, "INSERT INTO t SELECT seq % 3000, CONCAT('w', seq % 3000) FROM seq_1_to_3000")
	var fix bytes.Buffer
	r := p.run(t, Options{Fix: &fix, MaxRows: 10})
	tr := table(t, r, "t")
	if tr.DifferingRows != 9000 || len(tr.Rows) != 10 || tr.RowsNotListed == 0 {
		t.Fatalf("got %d differing rows, %d listed, %d not; want 9000, 10, the rest", tr.DifferingRows, len(tr.Rows), tr.RowsNotListed)
	}
	p.applyFix(t, fix.String())
	if r := p.run(t, Options{}); !r.Equal {
		t.Errorf("after the repair SQL: %v", rowSet(table(t, r, "t")))
	}
}

func TestMaxLoadPauses(t *testing.T) {
	p := newPair(t)
	p.both(t, "CREATE TABLE t (id INT PRIMARY KEY)")
	// A busy source: a statement running for a second keeps
	// Threads_running above 1.
	done := make(chan error, 1)
	go func() {
		_, err := p.srcDB.Exec("SELECT SLEEP(1)")
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := p.srcDB.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(1)'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the busy statement never showed in the processlist")
		}
	}
	var progress bytes.Buffer
	r := p.run(t, Options{MaxLoad: 1, Progress: &progress})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !r.Equal || !strings.Contains(progress.String(), "paused: source Threads_running") || !strings.Contains(progress.String(), "resumed") {
		t.Errorf("got equal %v, progress %q; want equal, paused and resumed", r.Equal, progress.String())
	}
}

// TestChecksumForms: both chunk checksums find the same rows, and on a
// server with CRC32C (the sandbox's MariaDB) the faster one is chosen and
// named in the rules.
func TestChecksumForms(t *testing.T) {
	p := newPair(t)
	if !probeChecksum(testCtx(t), p.srcDB) {
		t.Fatalf("the sandbox's server fails the CRC32C checksum probe")
	}
	sbtestTable(t, p, "sbtest1", 5_000)
	mustExec(t, p.dstDB,
		"UPDATE sbtest1 SET c = 'changed' WHERE id = 17",
		"DELETE FROM sbtest1 WHERE id = 4000",
		"INSERT INTO sbtest1 (id, k, c, pad) VALUES (5001, 1, 'new', 'new')")
	if !exactSum(testCtx(t), p.srcDB) {
		t.Fatalf("the sandbox's server does not sum 64-bit integers exactly")
	}
	for _, tc := range []struct {
		form checksum
		rule string
	}{
		{checksumCRCs, "CRC32C"},
		{checksumPrefix, "the first 64 bits of each row's SHA-1 over"},
		{checksumQuarters, "four 16-bit quarters"},
	} {
		r := p.run(t, Options{chunkRows: 1000, forceChecksum: &tc.form})
		wantRows(t, table(t, r, "sbtest1"), "changed id=17 [c]", "missing_on_target id=4000", "extra_on_target id=5001")
		if rule := strings.Join(r.Rules, "\n"); !strings.Contains(rule, tc.rule) {
			t.Errorf("checksum %d: got rules\n%s\nwant them to say %q", tc.form, rule, tc.rule)
		}
	}
	// Without a forced form the sandbox gets the CRCs.
	if rule := strings.Join(p.run(t, Options{chunkRows: 1000}).Rules, "\n"); !strings.Contains(rule, "CRC32C") {
		t.Errorf("auto: got rules\n%s\nwant CRC32C", rule)
	}
}
