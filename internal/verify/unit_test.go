package verify

import (
	"encoding/json"
	"github.com/shakedown/shakedown/internal/schema"
	"math/big"
	"strings"
	"testing"
	"time"
)

func TestValuesEqual(t *testing.T) {
	flt := &colSpec{rule: ruleFloat, tol: floatTol}
	dbl := &colSpec{rule: ruleFloat, tol: doubleTol}
	js := &colSpec{rule: ruleJSON}
	exact := &colSpec{}
	tests := []struct {
		name string
		spec *colSpec
		a, b []byte
		want bool
	}{
		{"null null", exact, nil, nil, true},
		{"null empty", exact, nil, []byte(""), false},
		{"null text NULL", exact, nil, []byte("NULL"), false},
		{"bytes", exact, []byte("a"), []byte("A"), false},
		{"float within 1e-6", flt, []byte("0.1"), []byte("0.10000000149011612"), true},
		{"float beyond 1e-6", flt, []byte("1.5"), []byte("1.5000016"), false},
		{"double within 1e-12", dbl, []byte("1.0000000000001"), []byte("1.00000000000011"), true},
		{"double beyond 1e-12", dbl, []byte("2.5"), []byte("2.5000001"), false},
		{"float zero", flt, []byte("0"), []byte("-0"), true},
		{"json member order", js, []byte(`{"a": 1, "b": [1, 2.0]}`), []byte(`{"b":[1,2],"a":1.0}`), true},
		{"json number exact", js, []byte(`12345678901234567890`), []byte(`12345678901234567891`), false},
		{"json exponent", js, []byte(`[1e2]`), []byte(`[100]`), true},
		{"json array order", js, []byte(`[1, 2]`), []byte(`[2, 1]`), false},
		{"json null vs string", js, []byte(`null`), []byte(`"null"`), false},
		{"json not json", js, []byte(`{`), []byte(`{`), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := valuesEqual(tt.spec, tt.a, tt.b); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestKeyCompare(t *testing.T) {
	tests := []struct {
		name string
		cmp  keyCmp
		a, b string
		want int
	}{
		{"int", kcInt, "9", "10", -1},
		{"int negative", kcInt, "-10", "-9", -1},
		{"int sign", kcInt, "-1", "0", -1},
		{"int big unsigned", kcInt, "18446744073709551615", "9223372036854775807", 1},
		{"int equal", kcInt, "42", "42", 0},
		{"decimal scale", kcDecimal, "1.50", "1.5", 0},
		{"decimal", kcDecimal, "-1.5", "1", -1},
		{"float", kcFloat, "1e2", "99.5", 1},
		{"time negative", kcTime, "-01:00:00", "00:00:00.5", -1},
		{"time hours", kcTime, "100:00:00", "99:59:59.999999", 1},
		{"bytes", kcBytes, "B", "a", -1},
		{"bytes prefix", kcBytes, "a", "a ", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &keyCol{cmp: tt.cmp}
			if got := k.compare([]byte(tt.a), []byte(tt.b)); got != tt.want {
				t.Errorf("compare(%q, %q): got %d, want %d", tt.a, tt.b, got, tt.want)
			}
			if got := k.compare([]byte(tt.b), []byte(tt.a)); got != -tt.want {
				t.Errorf("compare(%q, %q): got %d, want %d", tt.b, tt.a, got, -tt.want)
			}
			if eq := k.canon([]byte(tt.a)) == k.canon([]byte(tt.b)); eq != (tt.want == 0) {
				t.Errorf("canon equal: got %v, want %v", eq, tt.want == 0)
			}
		})
	}
}

func TestLiterals(t *testing.T) {
	num := &colSpec{numeric: true}
	bin := &colSpec{binary: true}
	txt := &colSpec{}
	tests := []struct {
		name string
		spec *colSpec
		v    []byte
		want string
	}{
		{"null", txt, nil, "NULL"},
		{"number", num, []byte("-12.50"), "-12.50"},
		{"float exponent", num, []byte("1.5e-30"), "1.5e-30"},
		{"not a number", num, []byte("1; DROP"), "'1; DROP'"},
		{"text", txt, []byte("it's"), `'it\'s'`},
		{"escapes", txt, []byte("a\\b\n\r\x00\x1a"), `'a\\b\n\r\0\Z'`},
		{"unicode", txt, []byte("漢字 😀"), "'漢字 😀'"},
		{"not utf-8", txt, []byte{0xff, 0x41}, "_utf8mb4 x'ff41'"},
		{"binary", bin, []byte{0, 1, 0xfe}, "x'0001fe'"},
		{"empty binary", bin, []byte{}, "x''"},
		{"empty text", txt, []byte{}, "''"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := valueLiteral(tt.spec, tt.v); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestValueJSON(t *testing.T) {
	for _, v := range []Value{{B: []byte("abc")}, {B: []byte{0xff, 0}}, {Null: true}, {B: []byte{}}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var back Value
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.Null != v.Null || string(back.B) != string(v.B) {
			t.Errorf("%s: got %+v back, want %+v", b, back, v)
		}
	}
}

func TestChunkPredicate(t *testing.T) {
	intKey := &keyInfo{cols: []*keyCol{newKeyCol(&colSpec{Name: "id", fam: famInt, val: "`id`"})}}
	pair := &keyInfo{cols: []*keyCol{
		newKeyCol(&colSpec{Name: "a", fam: famText, val: "`a`"}),
		newKeyCol(&colSpec{Name: "b", fam: famInt, val: "`b`"}),
	}}
	tests := []struct {
		name string
		k    *keyInfo
		c    *chunk
		want string
		args int
	}{
		{"all", intKey, &chunk{}, "", 0},
		{"int open below", intKey, &chunk{IHi: big.NewInt(10)}, "`id` <= ?", 1},
		{"int range", intKey, &chunk{ILo: big.NewInt(11), IHi: big.NewInt(20)}, "`id` >= ? AND `id` <= ?", 2},
		{"int open above", intKey, &chunk{ILo: big.NewInt(21)}, "`id` >= ?", 1},
		{"walk", pair, &chunk{WLo: []Value{{B: []byte("x")}, {B: []byte("1")}}, WHi: []Value{{B: []byte("y")}, {B: []byte("2")}}},
			"(`a` > ? OR (`a` = ? AND `b` > ?)) AND (`a` < ? OR (`a` = ? AND `b` <= ?))", 6},
		{"nulls", pair, &chunk{Nulls: true}, "(`a` IS NULL OR `b` IS NULL)", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, args := tt.c.predicate(tt.k)
			if got != tt.want || len(args) != tt.args {
				t.Errorf("got %q with %d args, want %q with %d", got, len(args), tt.want, tt.args)
			}
		})
	}
}

func TestColumnEncoding(t *testing.T) {
	col := func(dataType, colType, charset string, nullable bool) *schema.Column {
		return &schema.Column{Name: "c", DataType: dataType, Type: colType, Charset: charset, Nullable: nullable}
	}
	tests := []struct {
		name     string
		src, dst *schema.Column
		want     string // the row hash's CONCAT arguments for the column
	}{
		{"int", col("int", "int", "", false), col("bigint", "bigint", "", false), "`c`,','"},
		{"nullable int", col("int", "int", "", true), col("int", "int", "", false), "IF(`c` IS NULL,'N',CONCAT(`c`,','))"},
		{"same charset text", col("varchar", "varchar(10)", "latin1", false), col("varchar", "varchar(10)", "latin1", false),
			"LENGTH(`c`),':',CAST(`c` AS BINARY)"},
		{"latin1 vs utf8mb4", col("varchar", "varchar(10)", "latin1", false), col("varchar", "varchar(10)", "utf8mb4", false),
			"LENGTH(CAST(CONVERT(`c` USING utf8mb4) AS BINARY)),':',CAST(CONVERT(`c` USING utf8mb4) AS BINARY)"},
		{"blob", col("longblob", "longblob", "", false), col("longblob", "longblob", "", false), "SHA1(`c`)"},
		{"timestamp", col("timestamp", "timestamp", "", false), col("timestamp", "timestamp", "", false),
			"IFNULL(UNIX_TIMESTAMP(`c`),CONCAT('?',`c`)),','"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(newColSpec(tt.src, tt.dst, true).frag, ","); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestSizer(t *testing.T) {
	s := newSizer(500*time.Millisecond, 1)
	s.observe(20_000, big.NewInt(20_000), 50*time.Millisecond) // 10x too fast: grows, at most 4x
	if got := s.chunkRows(); got <= initialChunkRows || got > 4*initialChunkRows {
		t.Errorf("after a fast chunk: got %d rows, want more than %d and at most 4x", got, initialChunkRows)
	}
	for range 20 {
		s.observe(1_000_000, nil, 10*time.Second)
	}
	if got := s.chunkRows(); got != minChunkRows*50 && (got < 45_000 || got > 55_000) {
		t.Errorf("after slow chunks: got %d rows, want about 50000", got)
	}
	s.observe(100, big.NewInt(1000), time.Millisecond) // sparse keys: 0.1 rows per unit
	if st := s.step(); st.Int64() < s.chunkRows() {
		t.Errorf("got step %d for %d rows at density %.2f, want more units than rows", st, s.chunkRows(), s.density)
	}
}

func TestCheckpointDamaged(t *testing.T) {
	path := t.TempDir() + "/ck"
	fp := Fingerprint{Source: "a", Target: "b"}
	c, err := OpenCheckpoint(path, fp)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.table("db.t", schemeInt, []string{"id"}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if c, err = OpenCheckpoint(path, fp); err != nil || !c.Resumed() {
		t.Fatalf("reopen: got %v, resumed %v", err, c.Resumed())
	}
	c.Close()
	if _, err := OpenCheckpoint(path, Fingerprint{Source: "a", Target: "c"}); err == nil || !strings.Contains(err.Error(), "different check") {
		t.Errorf("other check: got %v, want a mismatch", err)
	}
}

func TestParseSum(t *testing.T) {
	cases := []struct {
		in   string
		want string
		ok   bool
	}{
		{"0", "0", true},
		{"36893488147419103090", "36893488147419103090", true},
		{"1.8528253502940026e+22", "18528253502940026000000", true},
		{"4.2e+01", "42", true},
		{"1.5", "", false},
		{"abc", "", false},
		{"", "", false},
	}
	for _, tc := range cases {
		got, ok := parseSum(tc.in)
		if ok != tc.ok || ok && got.String() != tc.want {
			t.Errorf("parseSum(%q): got %v, %v; want %s, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
