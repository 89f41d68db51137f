package capture

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/shakedown/shakedown/internal/sqlsplit"
)

// resegment rewrites a pcap of Ethernet, IPv4 and TCP packets: each TCP
// payload is cut into segments of at most size bytes, and change may
// reorder or repeat the segments of each packet.
func resegment(t *testing.T, data []byte, size int, step time.Duration, change func([]gopacket.Packet) []gopacket.Packet) []byte {
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
	for {
		b, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		pkt := gopacket.NewPacket(b, r.LinkType(), gopacket.Default)
		eth, _ := pkt.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
		ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		tl, _ := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if eth == nil || ip == nil || tl == nil || len(tl.Payload) <= size {
			if err := w.WritePacket(ci, b); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var parts []gopacket.Packet
		payload := tl.Payload
		for off := 0; off < len(payload); off += size {
			seg := *tl
			seg.Seq = tl.Seq + uint32(off)
			if err := seg.SetNetworkLayerForChecksum(ip); err != nil {
				t.Fatal(err)
			}
			sb := gopacket.NewSerializeBuffer()
			part := payload[off:min(off+size, len(payload))]
			if err := gopacket.SerializeLayers(sb, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, &seg, gopacket.Payload(part)); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, gopacket.NewPacket(append([]byte(nil), sb.Bytes()...), r.LinkType(), gopacket.Default))
		}
		if change != nil {
			parts = change(parts)
		}
		for i, p := range parts {
			pci := ci
			pci.Timestamp = ci.Timestamp.Add(time.Duration(i) * step)
			pci.CaptureLength, pci.Length = len(p.Data()), len(p.Data())
			if err := w.WritePacket(pci, p.Data()); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out.Bytes()
}

// TestPcapResegmented reads a capture whose segments are small, out of
// order or sent twice: the statements are the same.
func TestPcapResegmented(t *testing.T) {
	port := fixturePort(t)
	data := readFixture(t, "session.pcap")
	full, _, _, err := captureBytes(t, data, "pcap", port)
	if err != nil {
		t.Fatal(err)
	}
	summary := func(recs []*Record) []string {
		var out []string
		for _, r := range recs {
			if r.Kind == "" {
				out = append(out, fmt.Sprint(r.Session, r.SQL, r.Params, deref(r.RowsSent), r.Error, r.DB))
			}
		}
		return out
	}
	want := summary(full)
	for _, tc := range []struct {
		name   string
		size   int
		step   time.Duration // between the segments of one packet
		change func([]gopacket.Packet) []gopacket.Packet
	}{
		{"segments of 100 bytes", 100, 0, nil},
		{"segments of 7 bytes", 7, 0, nil},
		// A long statement's last segment is stamped after its response.
		{"segments of 7 bytes, times out of order", 7, time.Microsecond, nil},
		{"last segment first", 100, 0, func(p []gopacket.Packet) []gopacket.Packet {
			return append([]gopacket.Packet{p[len(p)-1]}, p[:len(p)-1]...)
		}},
		{"pairs swapped", 50, 0, func(p []gopacket.Packet) []gopacket.Packet {
			for i := 0; i+1 < len(p); i += 2 {
				p[i], p[i+1] = p[i+1], p[i]
			}
			return p
		}},
		{"each segment twice", 100, 0, func(p []gopacket.Packet) []gopacket.Packet {
			var out []gopacket.Packet
			for _, s := range p {
				out = append(out, s, s)
			}
			return out
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, c, err := captureBytes(t, resegment(t, data, tc.size, tc.step, tc.change), "pcap", port)
			if err != nil {
				t.Fatal(err)
			}
			g := summary(got)
			if strings.Join(g, "\n") != strings.Join(want, "\n") {
				t.Errorf("got %d statements, want %d the same as the capture as recorded (%s)", len(g), len(want), &c.Stats.Packets)
				for i := range min(len(g), len(want)) {
					if g[i] != want[i] {
						t.Errorf("first difference, statement %d: got %s, want %s", i, sqlsplit.Short(g[i], 200), sqlsplit.Short(want[i], 200))
						break
					}
				}
			}
		})
	}
}

// TestTcpdumpTextShapes reads the text tcpdump prints of the same pcap with
// the flags users give it: the statements are those of the pcap.
func TestTcpdumpTextShapes(t *testing.T) {
	bin, err := exec.LookPath("tcpdump")
	if err != nil {
		t.Fatalf("tcpdump not found: %v (scripts/deps.sh installs it)", err)
	}
	for _, tc := range []struct {
		v6    bool
		flags string
	}{
		{false, "-x -nn -q -tttt"},
		{false, "-xx -nn -q -tttt"},
		{false, "-x -nn -tt"},
		{false, "-X -n"},
		{false, "-XX -nn -q -ttttt"},
		{false, "-x -v -nn"},
		{true, "-x -nn -q -tttt"},
		{true, "-xx -nn -q -tttt"},
	} {
		name := tc.flags
		if tc.v6 {
			name = "IPv6 " + name
		}
		t.Run(name, func(t *testing.T) {
			flags := tc.flags
			pcap := filepath.Join(t.TempDir(), "app.pcap")
			if err := os.WriteFile(pcap, writePcapIP(t, 3306, appSegments(), tc.v6), 0o644); err != nil {
				t.Fatal(err)
			}
			want, _, _, err := captureBytes(t, readFile(t, pcap), "pcap", 3306)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != 4 {
				t.Fatalf("the pcap gives %d records, want 4", len(want))
			}
			out, err := exec.Command(bin, append([]string{"-r", pcap}, strings.Fields(flags)...)...).Output()
			if err != nil {
				t.Fatalf("tcpdump %s: %v", flags, err)
			}
			if got, err := Detect(out); got != "tcpdump-text" || err != nil {
				t.Fatalf("detect: got %q, %v, want tcpdump-text", got, err)
			}
			got, _, c, err := captureBytes(t, out, "tcpdump-text", 3306)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("got %d records, want %d (%s)", len(got), len(want), &c.Stats.Packets)
			}
			for i := range want {
				g, w := got[i], want[i]
				if g.SQL != w.SQL || fmt.Sprint(g.Params) != fmt.Sprint(w.Params) || g.Session != w.Session || g.Error != w.Error ||
					fmt.Sprint(deref(g.RowsSent)) != fmt.Sprint(deref(w.RowsSent)) {
					t.Errorf("record %d: got %s, want %s", i, recJSON(g), recJSON(w))
				}
			}
		})
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
