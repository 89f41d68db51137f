package capture

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// The fixtures under testdata/pcap were recorded by TestRecordPcapFixtures
// from a MariaDB sandbox: session (every connection from its start) and
// midstream (connections open, and a statement prepared, before the
// capture began; taken on "any"), each as pcap, pcapng, and tcpdump -x and
// -xx text. NAME.json lists the statements the application sent while the
// capture ran.

func fixturePort(t testing.TB) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "pcap", "port"))
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "pcap", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readSent(t *testing.T, name string) []sentStatement {
	t.Helper()
	var out []sentStatement
	sc := bufio.NewScanner(bytes.NewReader(readFixture(t, name+".json")))
	for sc.Scan() {
		var s sentStatement
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// captureBytes runs a capture of data as format and returns its records,
// the capture file it writes, and the Capturer.
func captureBytes(t testing.TB, data []byte, format string, port int) ([]*Record, []byte, *Capturer, error) {
	t.Helper()
	var file bytes.Buffer
	w, err := NewWriter(&file, []string{"f"}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var got []*Record
	c := NewCapturer(func(r *Record) error { got = append(got, r); return w.Write(r) })
	runErr := c.Run(context.Background(), []Source{{Name: "f", Format: format, R: bytes.NewReader(data), Port: port}})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return got, file.Bytes(), c, runErr
}

func TestPcapFixtures(t *testing.T) {
	port := fixturePort(t)
	for _, tc := range []struct {
		file, format string
		// want: the share of the statements sent that are captured with
		// the same text, at least; old: executions of statements prepared
		// before the capture, counted as such.
		want float64
		old  int64
	}{
		{"session.pcap", "pcap", 0.95, 0},
		{"session.pcapng", "pcap", 0.95, 0},
		{"session.x.txt", "tcpdump-text", 0.90, 0},
		{"session.xx.txt", "tcpdump-text", 0.90, 0},
		{"midstream.pcap", "pcap", 0.95, 8},
		{"midstream.pcapng", "pcap", 0.95, 8},
		{"midstream.x.txt", "tcpdump-text", 0.90, 8},
		{"midstream.xx.txt", "tcpdump-text", 0.90, 8},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data := readFixture(t, tc.file)
			if got, err := Detect(data[:min(len(data), 64<<10)]); got != tc.format || err != nil {
				t.Fatalf("detect: got %q, %v, want %q", got, err, tc.format)
			}
			got, _, c, err := captureBytes(t, data, tc.format, port)
			if err != nil {
				t.Fatal(err)
			}
			sent := readSent(t, strings.SplitN(tc.file, ".", 2)[0])
			// Statements are matched by text and by how they were sent.
			key := func(sql string, prepared bool) string { return fmt.Sprint(prepared, " ", sql) }
			left := map[string]int{}
			for _, r := range got {
				if r.Kind == "" {
					left[key(r.SQL, r.Prepared)]++
				}
			}
			var same, knowable int
			for _, s := range sent {
				if !s.Old {
					knowable++
				}
				if k := key(s.SQL, s.Prepared); left[k] > 0 {
					left[k]--
					same++
				}
			}
			for k, n := range left {
				if n > 0 {
					t.Errorf("captured %d times a statement not sent: %s", n, k)
				}
			}
			for _, r := range got {
				// A connection still open at the end quits at its last
				// statement's time, never at the zero time.
				if r.TS <= 0 {
					t.Errorf("%s %s #%d: got ts %d, want its time", r.Session, r.Kind, r.Seq, r.TS)
				}
			}
			share := float64(same) / float64(len(sent))
			t.Logf("%d of %d statements sent captured with the same text (%.1f%%); %d were executions of statements prepared before the capture", same, len(sent), 100*share, len(sent)-knowable)
			if same != knowable {
				t.Errorf("got %d statements with the same text, want every one whose text can be known: %d", same, knowable)
			}
			if share < tc.want && knowable == len(sent) {
				t.Errorf("got %.1f%% of the statements, want >= %.0f%%", 100*share, 100*tc.want)
			}
			if n := c.Stats.Packets.Skipped[skipPreparedOld]; n != tc.old {
				t.Errorf("executions of statements prepared before the capture: got %d, want %d (%s)", n, tc.old, &c.Stats.Packets)
			}
			// The source's line and the packet line agree.
			if src := c.Stats.Sources[0]; src.SkippedCount() != c.Stats.Packets.Skipped[skipPreparedOld] {
				t.Errorf("source's skipped entries: got %d (%s), want the %d executions of statements prepared before the capture", src.SkippedCount(), src.SkipText(), tc.old)
			}
			if c.Stats.Statements != int64(same) {
				t.Errorf("statements counted: got %d, want %d", c.Stats.Statements, same)
			}
		})
	}
}

// TestPcapSameEveryTime reads each fixture 20 times: the capture file is the
// same, byte for byte, every time.
func TestPcapSameEveryTime(t *testing.T) {
	port := fixturePort(t)
	for _, tc := range []struct{ file, format string }{
		{"session.pcap", "pcap"},
		{"midstream.pcap", "pcap"},
		{"midstream.x.txt", "tcpdump-text"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data := readFixture(t, tc.file)
			_, first, _, err := captureBytes(t, data, tc.format, port)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Count(first, []byte("\n")) < 10 {
				t.Fatalf("got %d lines, want a capture of the fixture's statements", bytes.Count(first, []byte("\n")))
			}
			for i := 2; i <= 20; i++ {
				_, again, _, err := captureBytes(t, data, tc.format, port)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(again, first) {
					t.Fatalf("read %d: got a different capture (%d bytes, want %d)", i, len(again), len(first))
				}
			}
		})
	}
}

// cutPcap writes a pcap of the packets of data that keep(i, packet) keeps,
// i counting from 0.
func cutPcap(t *testing.T, data []byte, keep func(i int, pkt gopacket.Packet) bool) []byte {
	t.Helper()
	r, err := pcapgo.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := pcapgo.NewWriter(&out)
	if err := w.WriteFileHeader(r.Snaplen(), r.LinkType()); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		b, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		pkt := gopacket.NewPacket(b, r.LinkType(), gopacket.Default)
		pkt.Metadata().CaptureInfo = ci
		if keep(i, pkt) {
			if err := w.WritePacket(ci, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out.Bytes()
}

// TestPcapCutHandshake cuts the first connection's handshake and first
// packets out of a capture: every statement it sent later is still read,
// prepared ones included, with the same figures; the executions of the
// statement it prepared in the part cut out are counted as prepared before
// the capture.
func TestPcapCutHandshake(t *testing.T) {
	port := fixturePort(t)
	data := readFixture(t, "session.pcap")
	full, _, _, err := captureBytes(t, data, "pcap", port)
	if err != nil {
		t.Fatal(err)
	}
	// The first connection: its client port, from the first SYN.
	var client layers.TCPPort
	cutPcap(t, data, func(i int, pkt gopacket.Packet) bool {
		if tl, ok := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP); ok && client == 0 && tl.SYN {
			client = tl.SrcPort
		}
		return true
	})
	const byID = "SELECT name, price FROM items WHERE id = ?"
	for _, cut := range []int{3, 4, 8, 11, 20, 33, 47, 60, 62, 64, 66} {
		t.Run(fmt.Sprintf("first %d packets", cut), func(t *testing.T) {
			var n int
			var until time.Time
			// From the client's commands cut out: whether byID's PREPARE
			// was, and a PREPARE whose EXECUTE was not.
			prepCut, pendingPrep := false, ""
			cutData := cutPcap(t, data, func(i int, pkt gopacket.Packet) bool {
				tl, ok := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
				if !ok || (tl.SrcPort != client && tl.DstPort != client) {
					return true
				}
				n++
				if n > cut {
					return true
				}
				until = pkt.Metadata().Timestamp
				if p := tl.Payload; tl.SrcPort == client && len(p) > 4 && p[3] == 0 {
					switch p[4] {
					case comStmtPrepare:
						pendingPrep = string(p[5:])
						prepCut = prepCut || pendingPrep == byID
					case comStmtExecute:
						pendingPrep = ""
					}
				}
				return false
			})
			got, _, c, err := captureBytes(t, cutData, "pcap", port)
			if err != nil {
				t.Fatal(err)
			}
			// The first connection's session in the whole capture.
			sessionA := ""
			for _, r := range full {
				if r.Kind == "" && r.SQL == byID {
					sessionA = r.Session
					break
				}
			}
			var want []*Record
			var old int64
			for _, r := range full {
				if r.Session != sessionA {
					want = append(want, r)
					continue
				}
				if r.Kind != "" || r.TS <= until.UnixMicro() {
					continue
				}
				if r.Prepared && ((r.SQL == byID && prepCut) || r.SQL == pendingPrep) {
					// Prepared in the part cut out.
					old++
					if r.SQL == pendingPrep {
						pendingPrep = ""
					}
					continue
				}
				want = append(want, r)
			}
			var gotStmts []*Record
			for _, r := range got {
				if r.Kind == "" {
					gotStmts = append(gotStmts, r)
				}
			}
			var wantStmts []*Record
			for _, r := range want {
				if r.Kind == "" {
					wantStmts = append(wantStmts, r)
				}
			}
			if len(gotStmts) != len(wantStmts) {
				for _, r := range gotStmts {
					t.Logf("got  %s", recJSON(r))
				}
				for _, r := range wantStmts {
					t.Logf("want %s", recJSON(r))
				}
				t.Fatalf("got %d statements, want %d (%s)", len(gotStmts), len(wantStmts), &c.Stats.Packets)
			}
			for i, w := range wantStmts {
				g := gotStmts[i]
				if g.SQL != w.SQL || g.Prepared != w.Prepared || fmt.Sprint(g.Params) != fmt.Sprint(w.Params) || g.TS != w.TS ||
					fmt.Sprint(deref(g.DurationUS), deref(g.RowsSent)) != fmt.Sprint(deref(w.DurationUS), deref(w.RowsSent)) || g.Error != w.Error {
					t.Errorf("statement %d: got %s, want %s", i, recJSON(g), recJSON(w))
				}
			}
			sessions := map[string]bool{}
			for _, r := range gotStmts {
				sessions[r.Session] = true
			}
			if len(sessions) != 2 {
				t.Errorf("got %d sessions, want 2", len(sessions))
			}
			if got := c.Stats.Packets.Skipped[skipPreparedOld]; got != old {
				t.Errorf("executions of statements prepared before the capture: got %d, want %d", got, old)
			}
			if c.Stats.Packets.MidStream != 1 {
				t.Errorf("connections open before the capture: got %d, want 1", c.Stats.Packets.MidStream)
			}
		})
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func recJSON(r *Record) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// TestProtocolDirectionsInAnyOrder hands a connection's two directions
// over in different orders: commands still meet their responses.
func TestProtocolDirectionsInAnyOrder(t *testing.T) {
	base := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	type chunk struct {
		toServer bool
		data     []byte
		ts       time.Time
	}
	var chunks []chunk
	for i, s := range appSegments() {
		chunks = append(chunks, chunk{s.toServer, s.data, base.Add(time.Duration(i) * time.Millisecond)})
	}
	run := func(order []chunk) string {
		var got []string
		c := NewCapturer(func(r *Record) error { got = append(got, recJSON(r)); return nil })
		mc := newMySQLConn(c, "127.0.0.1:50000")
		for _, ch := range order {
			if err := mc.feed(ch.toServer, ch.data, ch.ts); err != nil {
				t.Fatal(err)
			}
		}
		if err := mc.close(); err != nil {
			t.Fatal(err)
		}
		return strings.Join(got, "\n")
	}
	inOrder := run(chunks)
	if strings.Count(inOrder, `"sql"`) != 3 {
		t.Fatalf("in order: got %s, want 3 statements", inOrder)
	}
	var client, server []chunk
	for _, ch := range chunks {
		if ch.toServer {
			client = append(client, ch)
		} else {
			server = append(server, ch)
		}
	}
	for _, tc := range []struct {
		name  string
		order []chunk
	}{
		{"client first", append(append([]chunk(nil), client...), server...)},
		{"server first", append(append([]chunk(nil), server...), client...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(tc.order); got != inOrder {
				t.Errorf("got\n%s\nwant\n%s", got, inOrder)
			}
		})
	}
}

// TestPcapNothingRead: a capture with MySQL traffic but no statement that
// can be read fails, saying why.
func TestPcapNothingRead(t *testing.T) {
	segs := appSegments()
	// The client asks for TLS: nothing after can be read.
	resp := append([]byte(nil), segs[1].data...)
	resp[4+1] |= capSSL >> 8
	segs[1].data = resp
	_, _, _, err := captureBytes(t, writePcap(t, 3306, segs), "pcap", 3306)
	if !errors.Is(err, ErrNoTraffic) {
		t.Fatalf("got %v, want ErrNoTraffic", err)
	}
	if want := "1 " + skipTLS; !strings.Contains(err.Error(), want) {
		t.Errorf("got %q, want it to say %q", err, want)
	}
	// After a source that was read, the message counts its own packets.
	c := NewCapturer(func(*Record) error { return nil })
	err = c.Run(context.Background(), []Source{
		{Name: "good", Format: "pcap", R: bytes.NewReader(writePcap(t, 3306, appSegments())), Port: 3306},
		{Name: "tls", Format: "pcap", R: bytes.NewReader(writePcap(t, 3306, segs)), Port: 3306},
	})
	if !errors.Is(err, ErrNoTraffic) || !strings.HasPrefix(err.Error(), "tls: ") || !strings.Contains(err.Error(), "of 1 connections") {
		t.Errorf("got %v, want the second source's ErrNoTraffic counting its one connection", err)
	}
}
