package capture

import (
	"bytes"
	"encoding/json"
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
