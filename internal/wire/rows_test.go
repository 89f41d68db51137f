package wire

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox/gmstest"
	"github.com/shakedown/shakedown/internal/target"
)

// collect keeps what ReadReply hands over.
type collect struct {
	sets  int
	types []string
	names []string
	rows  [][]string
}

func (r *collect) Columns(cols []Column) {
	r.sets++
	r.types, r.names = r.types[:0], r.names[:0]
	for _, c := range cols {
		r.types = append(r.types, c.TypeName())
		r.names = append(r.names, c.Name)
	}
}

func (r *collect) Row(values [][]byte) {
	row := make([]string, len(values))
	for i, v := range values {
		if v == nil {
			row[i] = "NULL"
		} else {
			row[i] = string(v)
		}
	}
	r.rows = append(r.rows, row)
}

// TestRowsTextAndBinary reads the same rows as text and, through a
// prepared statement, in binary: every value must read the same, and
// every column carry its type. MariaDB, and go-mysql-server as the second
// implementation of the protocol.
func TestRowsTextAndBinary(t *testing.T) {
	t.Run("MariaDB", func(t *testing.T) {
		c := dial(t)
		createRows(t, c, nil)
		wantTypes := "INT TINYINT TINYINT UNSIGNED SMALLINT MEDIUMINT BIGINT BIGINT UNSIGNED FLOAT DOUBLE DECIMAL DATE " +
			"DATETIME DATETIME TIMESTAMP TIME TIME YEAR VARCHAR CHAR VARBINARY TEXT BLOB ENUM SET BIT"
		checkTextAndBinary(t, c, wantTypes, false)
	})
	t.Run("go-mysql-server", func(t *testing.T) {
		srv := gmstest.Start(t)
		tg, err := target.Parse(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Dial(context.Background(), tg.Config(tg.Endpoints()[0], tg.DB), Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// It has no fractional TIME.
		createRows(t, c, strings.NewReplacer("tm3 TIME(3)", "tm3 TIME"))
		// Its text drops a fraction's trailing zeros, or keeps them all,
		// whatever the column's decimals.
		checkTextAndBinary(t, c, "", true)
	})
}

// createRows makes the table wire_rows with a column of most types and
// three rows: extremes, other values, NULLs. ddl, when set, adjusts the
// table's definition for a server that lacks a type.
func createRows(t *testing.T, c *Conn, ddl *strings.Replacer) {
	t.Helper()
	mustQuery(t, c, "DROP TABLE IF EXISTS wire_rows")
	create := `CREATE TABLE wire_rows (
		id INT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, mi MEDIUMINT, bi BIGINT,
		bu BIGINT UNSIGNED, fl FLOAT, db DOUBLE, de DECIMAL(10,3), d DATE, dt DATETIME, dt6 DATETIME(6),
		ts TIMESTAMP(3) NULL, tm TIME, tm3 TIME(3), y YEAR, vc VARCHAR(20), ch CHAR(3), vb VARBINARY(8),
		tx TEXT, bl BLOB, e ENUM('a','b'), st SET('x','y'), bt BIT(8))`
	if ddl != nil {
		create = ddl.Replace(create)
	}
	mustQuery(t, c, create)
	mustQuery(t, c, `INSERT INTO wire_rows VALUES
		(1, -128, 255, -32768, -8388608, -9223372036854775808, 18446744073709551615, 1.5, 0.25, -12.345,
		 '2024-02-29', '2024-02-29 13:14:15', '2024-02-29 13:14:15.000120', '2024-02-29 13:14:15.5',
		 '-838:59:59', '12:34:56.789', 2024, 'héllo', 'ab', 0x00ff, 'text', 0x0102, 'b', 'x,y', b'101'),
		(2, 127, 0, 32767, 8388607, 9223372036854775807, 0, -2.25, -1e-5, 0, '1000-01-01',
		 '9999-12-31 23:59:59', '2000-01-01 00:00:00', NULL, '00:00:00', '-00:00:01.5', 1901, '', '', '',
		 '', '', 'a', '', b'0'),
		(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
		 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`)
}

// checkTextAndBinary reads wire_rows both ways and compares; wantTypes,
// when not empty, are the columns' type names. With loose, temporal values
// compare without their fractions' trailing zeros.
func checkTextAndBinary(t *testing.T, c *Conn, wantTypes string, loose bool) {
	t.Helper()
	const q = "SELECT * FROM wire_rows ORDER BY id"
	var text collect
	if err := c.SendQuery(q); err != nil {
		t.Fatal(err)
	}
	res, err := c.ReadReply(&text)
	if err != nil {
		t.Fatal(err)
	}
	if !res.HasRows || res.Rows != 3 || len(text.rows) != 3 || text.sets != 1 {
		t.Fatalf("text: got %+v, %d rows in %d sets, want 3 rows in 1 set", res, len(text.rows), text.sets)
	}
	if got := strings.Join(text.types, " "); wantTypes != "" && got != wantTypes {
		t.Errorf("types:\ngot  %s\nwant %s", got, wantTypes)
	}
	if text.names[0] != "id" || text.names[len(text.names)-1] != "bt" {
		t.Errorf("names: got %v, want id ... bt", text.names)
	}

	st, err := c.Prepare(q)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// Twice: MariaDB leaves the columns out of the second execution's
	// reply.
	for run := range 2 {
		var bin collect
		if err := st.SendExec(); err != nil {
			t.Fatal(err)
		}
		res, err := c.ReadReply(&bin)
		if err != nil {
			t.Fatalf("execution %d: %v", run+1, err)
		}
		if res.Rows != 3 || len(bin.rows) != 3 {
			t.Fatalf("execution %d: got %d rows, want 3", run+1, len(bin.rows))
		}
		if got, want := strings.Join(bin.types, " "), strings.Join(text.types, " "); got != want {
			t.Errorf("execution %d: types:\ngot  %s\nwant %s (as text)", run+1, got, want)
		}
		for i := range text.rows {
			for j := range text.rows[i] {
				b, x := bin.rows[i][j], text.rows[i][j]
				if loose && strings.ContainsAny(b, ":") {
					b, x = trimFraction(b), trimFraction(x)
				}
				if !sameValue(b, x, text.types[j]) {
					t.Errorf("execution %d, row %d, %s (%s): got %q in binary, %q as text", run+1, i+1, text.names[j], text.types[j], bin.rows[i][j], text.rows[i][j])
				}
			}
		}
	}
	if c.Broken() {
		t.Fatal("connection broken after reading rows")
	}
}

// sameValue compares a value read in binary with its text: floats by
// value, since the server's text may spell them otherwise (-0.00001 for
// -1e-05), the rest exactly.
func sameValue(bin, text, typ string) bool {
	if typ != "FLOAT" && typ != "DOUBLE" || bin == "NULL" || text == "NULL" {
		return bin == text
	}
	b, err1 := strconv.ParseFloat(bin, 64)
	x, err2 := strconv.ParseFloat(text, 64)
	return err1 == nil && err2 == nil && b == x
}

// trimFraction drops a fraction's trailing zeros, and its point if
// nothing is left.
func trimFraction(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// TestReadReplyResults covers what is not a single result set: several
// statements at once, an error after rows, warnings, and the pairing of
// sends with reads.
func TestReadReplyResults(t *testing.T) {
	c := dial(t)
	var r collect
	if _, err := c.ReadReply(&r); err == nil {
		t.Error("ReadReply with nothing sent: got nil error")
	}
	if err := c.SendQuery("SELECT 1/0, CAST('x1' AS SIGNED)"); err != nil {
		t.Fatal(err)
	}
	res, err := c.ReadReply(&r)
	if err != nil {
		t.Fatal(err)
	}
	if res.Warnings != 2 {
		t.Errorf("warnings: got %d, want 2", res.Warnings)
	}
	// Warnings from an OK packet, of a statement without rows.
	if err := c.SendQuery("DO 1/0"); err != nil {
		t.Fatal(err)
	}
	if res, err := c.ReadReply(&r); err != nil || res.Warnings != 1 || res.HasRows {
		t.Errorf("DO 1/0: got %+v %v, want 1 warning and no rows", res, err)
	}
	if err := c.SendQuery("SELECT (SELECT 1 UNION SELECT 2)"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadReply(&r); err == nil || !strings.Contains(err.Error(), "more than 1 row") {
		t.Errorf("subquery error: got %v, want one", err)
	}
	if c.Broken() {
		t.Fatal("a server error must not break the connection")
	}
	// The connection is in step again: the next query reads its own reply.
	r = collect{}
	if err := c.SendQuery("SELECT 'after'"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadReply(&r); err != nil || len(r.rows) != 1 || r.rows[0][0] != "after" {
		t.Errorf("after an error: got %v %v, want [[after]]", r.rows, err)
	}
}

// TestBinaryValues decodes a binary row of most types by hand.
func TestBinaryValues(t *testing.T) {
	var cols []Column
	for _, p := range fuzzColumns {
		col, err := parseColumn(p)
		if err != nil {
			t.Fatal(err)
		}
		cols = append(cols, col)
	}
	c := &Conn{}
	vals, err := c.binaryValues(fuzzBinaryRow, cols)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-1", "1", "1.5", "1", "2024-02-29 13:14:15.000120", "-26:03:04.001", "2024", "abc"}
	for i, v := range vals {
		if string(v) != want[i] {
			t.Errorf("%s: got %q, want %q", cols[i].Name, v, want[i])
		}
	}
	// A NULL bit (the first column's: bit 2) and a row cut short.
	row := append([]byte(nil), fuzzBinaryRow...)
	row[1] |= 1 << 2
	row = append(row[:3], row[4:]...)
	if vals, err := c.binaryValues(row, cols); err != nil || vals[0] != nil || string(vals[1]) != "1" {
		t.Errorf("NULL first: got %q %v, want NULL then 1", vals, err)
	}
	if _, err := c.binaryValues(fuzzBinaryRow[:20], cols); err == nil {
		t.Error("row cut short: got nil error")
	}
}

// TestAppendFraction: the column's digits when they hold the value, all
// six when they do not or the column does not say.
func TestAppendFraction(t *testing.T) {
	for _, tc := range []struct {
		us       uint32
		decimals byte
		want     string
	}{
		{0, 0, ""},
		{0, 3, ".000"},
		{500000, 1, ".5"},
		{120, 6, ".000120"},
		{120, 3, ".000120"},    // more than the column says: kept whole
		{500000, 0, ".500000"}, // a column that claims no fraction
		{7, 31, ".000007"},     // not fixed
		{0, 31, ""},
	} {
		if got := string(appendFraction(nil, tc.us, tc.decimals)); got != tc.want {
			t.Errorf("%d us, %d decimals: got %q, want %q", tc.us, tc.decimals, got, tc.want)
		}
	}
}
