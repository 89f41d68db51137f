package capture

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"net"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// seg is one TCP segment of a synthetic capture.
type seg struct {
	toServer bool
	data     []byte
}

// mysqlPacket frames payload as one MySQL packet.
func mysqlPacket(seq byte, payload []byte) []byte {
	n := len(payload)
	return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}, payload...)
}

// writePcap writes a pcap of one TCP connection from 127.0.0.1:50000 to
// 127.0.0.1:port: handshake, the segments, and FINs.
func writePcap(t testing.TB, port int, segs []seg) []byte {
	t.Helper()
	return writePcapIP(t, port, segs, false)
}

// writePcapIP is writePcap over IPv6 (::1) if v6.
func writePcapIP(t testing.TB, port int, segs []seg, v6 bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	cseq, sseq := uint32(1000), uint32(5000)
	emit := func(toServer, syn, fin bool, data []byte) {
		ts = ts.Add(100 * time.Microsecond)
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{0, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{0, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
		var ip interface {
			gopacket.NetworkLayer
			gopacket.SerializableLayer
		} = &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: net.IP{127, 0, 0, 1}, DstIP: net.IP{127, 0, 0, 1}}
		if v6 {
			eth.EthernetType = layers.EthernetTypeIPv6
			ip = &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP, SrcIP: net.IPv6loopback, DstIP: net.IPv6loopback}
		}
		tcp := &layers.TCP{SYN: syn, FIN: fin, ACK: !syn || !toServer, Window: 65535}
		if toServer {
			tcp.SrcPort, tcp.DstPort, tcp.Seq, tcp.Ack = 50000, layers.TCPPort(port), cseq, sseq
		} else {
			tcp.SrcPort, tcp.DstPort, tcp.Seq, tcp.Ack = layers.TCPPort(port), 50000, sseq, cseq
		}
		if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
			t.Fatal(err)
		}
		sb := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(sb, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, tcp, gopacket.Payload(data)); err != nil {
			t.Fatal(err)
		}
		n := uint32(len(data))
		if syn || fin {
			n++
		}
		if toServer {
			cseq += n
		} else {
			sseq += n
		}
		b := sb.Bytes()
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(b), Length: len(b)}, b); err != nil {
			t.Fatal(err)
		}
	}
	emit(true, true, false, nil)
	emit(false, true, false, nil)
	for _, s := range segs {
		emit(s.toServer, false, false, s.data)
	}
	emit(true, false, true, nil)
	emit(false, false, true, nil)
	return buf.Bytes()
}

// appSegments is a short session: greeting, login to db shop, a text query
// with a result set, a prepared statement executed with three parameters,
// an error, and COM_QUIT.
func appSegments() []seg {
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	greeting := append([]byte{10}, "10.11.19-MariaDB\x00"...)
	greeting = append(greeting, le32(42)...)               // connection id
	greeting = append(greeting, "12345678\x00"...)         // auth data part 1
	greeting = append(greeting, 0xff, 0xf7, 8, 0x02, 0x00) // caps low, charset, status
	greeting = append(greeting, 0xff, 0x81, 21)            // caps high, auth data length
	greeting = append(greeting, make([]byte, 10)...)
	greeting = append(greeting, "123456789012\x00mysql_native_password\x00"...)

	caps := uint32(capConnectWithDB | capSecureConn | 0x200 | capDeprecateEOF | 0x00080000)
	resp := le32(caps)
	resp = append(resp, le32(1<<24)...)
	resp = append(resp, 45)
	resp = append(resp, make([]byte, 23)...)
	resp = append(resp, "app\x00"...)
	resp = append(resp, 20)
	resp = append(resp, bytes.Repeat([]byte{0xaa}, 20)...) // the password hash: never kept
	resp = append(resp, "shop\x00mysql_native_password\x00"...)

	ok := []byte{0, 0, 0, 2, 0, 0, 0}
	colDef := func(name string) []byte {
		var b []byte
		for _, s := range []string{"def", "shop", "t", "t", name, name} {
			b = append(b, byte(len(s)))
			b = append(b, s...)
		}
		return append(b, 0x0c, 45, 0, 11, 0, 0, 0, 3, 0, 0, 0, 0, 0)
	}
	eofOK := []byte{0xfe, 0, 0, 2, 0, 0, 0}

	var s []seg
	s = append(s, seg{false, mysqlPacket(0, greeting)}, seg{true, mysqlPacket(1, resp)}, seg{false, mysqlPacket(2, ok)})
	// Text query, two rows.
	s = append(s, seg{true, mysqlPacket(0, append([]byte{comQuery}, "SELECT id FROM t WHERE v = 'x'"...))})
	res := mysqlPacket(1, []byte{1})
	res = append(res, mysqlPacket(2, colDef("id"))...)
	res = append(res, mysqlPacket(3, []byte{1, '1'})...)
	res = append(res, mysqlPacket(4, []byte{1, '2'})...)
	res = append(res, mysqlPacket(5, eofOK)...)
	s = append(s, seg{false, res})
	// Prepare with three parameters and one column.
	s = append(s, seg{true, mysqlPacket(0, append([]byte{comStmtPrepare}, "SELECT id FROM t WHERE a = ? AND b = ? AND c = ?"...))})
	prep := mysqlPacket(1, []byte{0, 7, 0, 0, 0, 1, 0, 3, 0, 0, 0, 0})
	for i := 0; i < 3; i++ {
		prep = append(prep, mysqlPacket(byte(2+i), colDef("?"))...)
	}
	prep = append(prep, mysqlPacket(5, colDef("id"))...)
	s = append(s, seg{false, prep})
	// Execute: LONGLONG 7, VAR_STRING "héllo", DOUBLE 2.5.
	ex := []byte{comStmtExecute}
	ex = append(ex, le32(7)...)
	ex = append(ex, 0)
	ex = append(ex, le32(1)...)
	ex = append(ex, 0) // null bitmap
	ex = append(ex, 1) // types follow
	ex = append(ex, 0x08, 0, 0xfd, 0, 0x05, 0)
	ex = binary.LittleEndian.AppendUint64(ex, 7)
	ex = append(ex, 6)
	ex = append(ex, "héllo"...)
	ex = binary.LittleEndian.AppendUint64(ex, math.Float64bits(2.5))
	s = append(s, seg{true, mysqlPacket(0, ex)})
	exr := mysqlPacket(1, []byte{1})
	exr = append(exr, mysqlPacket(2, colDef("id"))...)
	exr = append(exr, mysqlPacket(3, []byte{0, 0, 7, 0, 0, 0, 0, 0, 0, 0})...)
	exr = append(exr, mysqlPacket(4, eofOK)...)
	s = append(s, seg{false, exr})
	// An error.
	s = append(s, seg{true, mysqlPacket(0, append([]byte{comQuery}, "SELECT * FROM nosuch"...))})
	s = append(s, seg{false, mysqlPacket(1, append([]byte{0xff, 0x7a, 0x04, '#'}, "42S02Table 'shop.nosuch' doesn't exist"...))})
	s = append(s, seg{true, mysqlPacket(0, []byte{comQuit})})
	return s
}

func capturePcap(t *testing.T, data []byte, port int) ([]*Record, *Capturer, error) {
	t.Helper()
	var got []*Record
	c := NewCapturer(func(r *Record) error { got = append(got, r); return nil })
	err := c.Run(context.Background(), []Source{{Name: "app.pcap", Format: "pcap", R: bytes.NewReader(data), Port: port}})
	return got, c, err
}

func TestPcapSession(t *testing.T) {
	data := writePcap(t, 3306, appSegments())
	got, c, err := capturePcap(t, data, 3306)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("got %d records, want 4: %+v", len(got), got)
	}
	want := []struct {
		sql      string
		prepared bool
		params   []any
		rows     int64
		errCode  int
		kind     string
	}{
		{"SELECT id FROM t WHERE v = 'x'", false, nil, 2, 0, ""},
		{"SELECT id FROM t WHERE a = ? AND b = ? AND c = ?", true, []any{int64(7), "héllo", 2.5}, 1, 0, ""},
		{"SELECT * FROM nosuch", false, nil, 0, 1146, ""},
		{"", false, nil, 0, 0, KindQuit},
	}
	for i, w := range want {
		r := got[i]
		if r.Session != "42" {
			t.Errorf("record %d: session got %q, want 42 (the connection id)", i, r.Session)
		}
		if r.SQL != w.sql || r.Prepared != w.prepared || r.Error != w.errCode || r.Kind != w.kind {
			t.Errorf("record %d: got sql %q prepared %v error %d kind %q, want %q %v %d %q", i, r.SQL, r.Prepared, r.Error, r.Kind, w.sql, w.prepared, w.errCode, w.kind)
		}
		if w.kind == "" {
			if r.DB != "shop" {
				t.Errorf("record %d: db got %q, want shop", i, r.DB)
			}
			if r.RowsSent == nil || *r.RowsSent != w.rows {
				t.Errorf("record %d: rows sent got %v, want %d", i, r.RowsSent, w.rows)
			}
			if r.DurationUS == nil || *r.DurationUS <= 0 {
				t.Errorf("record %d: got no duration", i)
			}
		}
		if len(r.Params) != len(w.params) {
			t.Errorf("record %d: params got %v, want %v", i, r.Params, w.params)
			continue
		}
		for j := range w.params {
			if r.Params[j] != w.params[j] {
				t.Errorf("record %d param %d: got %#v, want %#v", i, j, r.Params[j], w.params[j])
			}
		}
	}
	if c.Stats.Sessions != 1 || c.Stats.Statements != 3 {
		t.Errorf("stats: got %d sessions %d statements, want 1 and 3", c.Stats.Sessions, c.Stats.Statements)
	}
}

func TestPcapWithoutMySQLTraffic(t *testing.T) {
	data := writePcap(t, 3306, appSegments())
	_, _, err := capturePcap(t, data, 3307)
	if !errors.Is(err, ErrNoTraffic) {
		t.Fatalf("got %v, want ErrNoTraffic", err)
	}
	if want := "port 3307"; !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Errorf("got %q, want it to name %s", err, want)
	}
}
