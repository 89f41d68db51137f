package capture

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"testing"
)

// checkRecordJSON holds when appendRecord writes r as encoding/json does.
func checkRecordJSON(t *testing.T, r *Record) {
	t.Helper()
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	got, ok := appendRecord(nil, r)
	if !ok {
		return
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("got %s, want %s", got, want.Bytes())
	}
}

func TestRecordJSON(t *testing.T) {
	tests := []struct {
		name string
		r    Record
	}{
		{"quit", Record{Session: "1", Kind: KindQuit}},
		{"full", Record{Session: "2:17", Seq: 3, TS: 1700654400000001, DB: "shop", SQL: "SELECT 1", Prepared: true,
			DurationUS: i64(5), RowsSent: i64(0), RowsExamined: i64(-1), Error: 1146, Fingerprint: "select ?", Digest: "abc"}},
		{"escapes", Record{Session: "s", SQL: "a\"b\\c\nd\re\tf\bg\fh\x00i\x1fj<>&"}},
		{"unicode", Record{Session: "s", SQL: "é 中 \u2028 \u2029 😀"}},
		{"invalid utf-8", Record{Session: "s", SQL: "a\xffb\xc3(c\xe2\x82"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkRecordJSON(t, &tc.r) })
	}
}

func FuzzRecordJSON(f *testing.F) {
	f.Add("SELECT 'a\"b' \u2028", "db\xff", int64(7))
	f.Fuzz(func(t *testing.T, sql, db string, n int64) {
		checkRecordJSON(t, &Record{Session: db, Seq: n, DB: db, SQL: sql, DurationUS: &n, Fingerprint: sql})
	})
}

// checkParseRecord holds when parseRecord, where it takes line, reads it
// as encoding/json does; it reports whether parseRecord took it.
func checkParseRecord(t *testing.T, line []byte) bool {
	t.Helper()
	var fast Record
	if !parseRecord(line, &fast) {
		return false
	}
	var slow Record
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&slow); err != nil {
		t.Fatalf("parseRecord took %q, which encoding/json refuses: %v", line, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q: parseRecord read %+v, encoding/json %+v", line, fast, slow)
	}
	return true
}

func TestParseRecord(t *testing.T) {
	for _, tc := range []struct {
		line string
		fast bool // parseRecord takes it
	}{
		{`{"session":"1","seq":1,"ts":1795348800000000,"db":"sbtest","sql":"SELECT c FROM sbtest1 WHERE id = 92313","fingerprint":"select ?","digest":"48c905ec24def6bc"}`, true},
		{`{"session":"2:17","seq":3,"kind":"quit"}`, true},
		{` { "seq" : -0 , "session" : "x", "prepared" : false, "error": 1146, "duration_us": 0, "rows_sent": 12, "rows_examined": -1 } `, true},
		{`{"session":"s","sql":"a\"b\\c\nd\re\tf\bg\fh\u0000i\u001fj\/ \u00e9 \u2028 é 中 😀"}`, true},
		{`{}`, true},
		{`{"session":"s","sql":"SELECT ?","prepared":true,"params":[1, -2.5e3,"a\n",null,true,false,{"hex":"ff00"},18446744073709551616,0.5E-2]}`, true},
		{`{"session":"s","params":[]}`, true},
		{`{"session":"s","params":null}`, false},
		{`{"session":"s","params":[[1]]}`, false},
		{`{"session":"s","params":[01]}`, false},
		{`{"session":"s","params":[1.]}`, false},
		{`{"session":"s","params":[1e]}`, false},
		{`{"session":"s","params":[{"hex":1}]}`, false},
		{`{"session":"s","params":[{"a":"b"}]}`, false},
		{`{"session":"s","params":[{"hex":"a","b":"c"}]}`, false},
		{`{"session":"s","params":[nul]}`, false},
		{`{"session":"s","sql":"\ud83d\ude00"}`, false},     // a surrogate pair
		{`{"session":"s","sql":"a` + "\xff" + `b"}`, false}, // invalid UTF-8
		{`{"session":"s","params":[1,"a"]}`, true},
		{`{"session":null}`, false},
		{`{"Session":"s"}`, false}, // encoding/json matches keys in any case
		{`{"session":"a","session":"b"}`, false},
		{`{"seq":1.0}`, false},
		{`{"seq":1e3}`, false},
		{`{"seq":01}`, false},
		{`{"seq":+1}`, false},
		{`{"seq":99999999999999999999}`, false},
		{`{"session":"s"} trailing`, false},
		{`{"session":"s",}`, false},
		{`{"session":"s"`, false},
		{`{"sql":"tab	inside"}`, false},
		{``, false},
	} {
		if got := checkParseRecord(t, []byte(tc.line)); got != tc.fast {
			t.Errorf("parseRecord(%q) took it: %v, want %v", tc.line, got, tc.fast)
		}
	}
}

// FuzzParseRecord: any line parseRecord takes, encoding/json reads the
// same; and every line appendRecord writes, parseRecord takes.
func FuzzParseRecord(f *testing.F) {
	f.Add([]byte(`{"session":"1","seq":1,"ts":17,"db":"d","sql":"SELECT 'a\"b' \u2028","prepared":true,"error":5}`))
	f.Add([]byte(`{"session":"s","sql":"\u00e9\n","rows_sent":3}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		checkParseRecord(t, line)
		r := Record{Session: string(line), SQL: string(line), Seq: int64(len(line))}
		out, _ := appendRecord(nil, &r)
		if !checkParseRecord(t, bytes.TrimSuffix(out, []byte("\n"))) {
			t.Fatalf("parseRecord refused %q, which appendRecord wrote", out)
		}
		// A prepared statement's record, which encoding/json writes.
		r.Prepared = true
		r.Params = []any{string(line), -int64(len(line)), nil, 1.5, map[string]any{"hex": hex.EncodeToString(line)}}
		var w bytes.Buffer
		enc := json.NewEncoder(&w)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&r); err != nil {
			t.Fatal(err)
		}
		if !checkParseRecord(t, bytes.TrimSuffix(w.Bytes(), []byte("\n"))) {
			t.Fatalf("parseRecord refused %q, which capture writes", w.Bytes())
		}
	})
}
