package capture

import (
	"encoding/binary"
	"testing"
)

// queryAttr is one query attribute a client sends with COM_QUERY: a type
// of the binary protocol, a name and a value (nil: NULL).
type queryAttr struct {
	typ   byte
	name  string
	value []byte
}

// attrQuery is COM_QUERY as a client that negotiated
// CLIENT_QUERY_ATTRIBUTES sends it: parameter count, parameter set count
// (1), and when there are attributes the NULL bitmap, the new-params-bound
// flag, each type and name, and the values; then the statement.
func attrQuery(sql string, attrs ...queryAttr) []byte {
	b := []byte{comQuery, byte(len(attrs)), 1}
	if len(attrs) > 0 {
		nulls := make([]byte, (len(attrs)+7)/8)
		for i, a := range attrs {
			if a.value == nil {
				nulls[i/8] |= 1 << (i % 8)
			}
		}
		b = append(b, nulls...)
		b = append(b, 1)
		for _, a := range attrs {
			b = append(b, a.typ, 0, byte(len(a.name)))
			b = append(b, a.name...)
		}
		for _, a := range attrs {
			b = append(b, a.value...)
		}
	}
	return append(b, sql...)
}

// attrSegments is a session with a MySQL 8.0 server and a client that both
// offer CLIENT_QUERY_ATTRIBUTES: queries with none, one and three
// attributes (a string, a NULL, an integer), then COM_QUIT.
func attrSegments(queries [][]byte) []seg {
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	greeting := append([]byte{10}, "8.0.36\x00"...)
	greeting = append(greeting, le32(77)...)
	greeting = append(greeting, "12345678\x00"...)
	greeting = append(greeting, 0xff, 0xf7, 0xff, 0x02, 0x00) // caps low, charset, status
	greeting = append(greeting, 0xff, 0xdf, 21)               // caps high (query attributes), auth data length
	greeting = append(greeting, make([]byte, 10)...)
	greeting = append(greeting, "123456789012\x00caching_sha2_password\x00"...)

	caps := uint32(capConnectWithDB | capSecureConn | 0x200 | capPluginAuthLenec | capDeprecateEOF | capQueryAttributes | 0x00080000)
	resp := le32(caps)
	resp = append(resp, le32(1<<24)...)
	resp = append(resp, 255)
	resp = append(resp, make([]byte, 23)...)
	resp = append(resp, "app\x00"...)
	resp = append(resp, 32)
	resp = append(resp, make([]byte, 32)...)
	resp = append(resp, "shop\x00caching_sha2_password\x00"...)

	ok := []byte{0, 0, 0, 2, 0, 0, 0}
	s := []seg{{false, mysqlPacket(0, greeting)}, {true, mysqlPacket(1, resp)}, {false, mysqlPacket(2, ok)}}
	for _, q := range queries {
		s = append(s, seg{true, mysqlPacket(0, q)}, seg{false, mysqlPacket(1, ok)})
	}
	return append(s, seg{true, mysqlPacket(0, []byte{comQuit})})
}

func TestPcapQueryAttributes(t *testing.T) {
	queries := [][]byte{
		attrQuery("SELECT 1"),
		attrQuery("SELECT id FROM t WHERE id = 2", queryAttr{0xfe, "trace_id", []byte("\x05abcde")}),
		attrQuery("UPDATE t SET v = 3 WHERE id = 4",
			queryAttr{0xfe, "trace_id", []byte("\x03xyz")},
			queryAttr{0x06, "nothing", nil},
			queryAttr{0x08, "span", binary.LittleEndian.AppendUint64(nil, 99)}),
	}
	want := []string{"SELECT 1", "SELECT id FROM t WHERE id = 2", "UPDATE t SET v = 3 WHERE id = 4"}
	got, c, err := capturePcap(t, writePcap(t, 3306, attrSegments(queries)), 3306)
	if err != nil {
		t.Fatalf("capture: %v (%s)", err, &c.Stats.Packets)
	}
	var sqls []string
	for _, r := range got {
		if r.Kind == "" {
			sqls = append(sqls, r.SQL)
			if r.DB != "shop" || r.Session != "77" {
				t.Errorf("%q: got db %q session %q, want shop and 77", r.SQL, r.DB, r.Session)
			}
		}
	}
	if len(sqls) != len(want) {
		t.Fatalf("got statements %q, want %q (skipped: %s)", sqls, want, &c.Stats.Packets)
	}
	for i := range want {
		if sqls[i] != want[i] {
			t.Errorf("statement %d: got %q, want %q", i, sqls[i], want[i])
		}
	}
	if len(c.Stats.Packets.Skipped) != 0 {
		t.Errorf("got skipped %s, want nothing skipped", &c.Stats.Packets)
	}
}

// TestQueryAttributesBroken: attributes that cannot be read skip the
// query with a reason that says so, and the statement is never taken
// from the middle of them.
func TestQueryAttributesBroken(t *testing.T) {
	good := attrQuery("SELECT 1", queryAttr{0xfe, "a", []byte("\x01b")})
	cases := []struct {
		name string
		body []byte
	}{
		{"values cut short", good[:len(good)-len("SELECT 1")-1]},
		{"no parameter set count", []byte{comQuery, 1}},
		{"types never bound", []byte{comQuery, 1, 1, 0, 0, 'S'}},
		{"more parameters than bytes", []byte{comQuery, 0xfc, 0xff, 0xff, 1, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, c, err := capturePcap(t, writePcap(t, 3306, attrSegments([][]byte{tc.body, attrQuery("SELECT 2")})), 3306)
			if err != nil {
				t.Fatal(err)
			}
			var sqls []string
			for _, r := range got {
				if r.Kind == "" {
					sqls = append(sqls, r.SQL)
				}
			}
			if len(sqls) != 1 || sqls[0] != "SELECT 2" {
				t.Errorf("got statements %q, want only SELECT 2", sqls)
			}
			if n := c.Stats.Packets.Skipped[skipQueryAttrs]; n != 1 {
				t.Errorf("got %d skipped for %q, want 1 (%s)", n, skipQueryAttrs, &c.Stats.Packets)
			}
		})
	}
}

// TestQueryAttributesMidStream: on a connection whose handshake the
// capture missed, attributes are told from the statement's first bytes
// (a statement never starts with a control byte) and read past too.
func TestQueryAttributesMidStream(t *testing.T) {
	queries := [][]byte{
		attrQuery("SELECT 1"),
		attrQuery("SELECT 2", queryAttr{0xfe, "trace_id", []byte("\x01z")}, queryAttr{0x06, "n", nil}),
	}
	got, c, err := capturePcap(t, writePcap(t, 3306, attrSegments(queries)[3:]), 3306)
	if err != nil {
		t.Fatalf("capture: %v (%s)", err, &c.Stats.Packets)
	}
	var sqls []string
	for _, r := range got {
		if r.Kind == "" {
			sqls = append(sqls, r.SQL)
		}
	}
	if len(sqls) != 2 || sqls[0] != "SELECT 1" || sqls[1] != "SELECT 2" {
		t.Errorf("got statements %q, want SELECT 1 and SELECT 2 (%s)", sqls, &c.Stats.Packets)
	}
}

// attrSeedSegments seeds the fuzz targets with queries carrying attributes.
func attrSeedSegments() []seg {
	return attrSegments([][]byte{
		attrQuery("SELECT 1"),
		attrQuery("SELECT 2", queryAttr{0xfe, "trace_id", []byte("\x02ab")}, queryAttr{0x06, "n", nil}, queryAttr{0x03, "i", []byte{1, 0, 0, 0}}),
	})
}
