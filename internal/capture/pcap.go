package capture

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// ErrNoTraffic means a packet capture holds no MySQL traffic to or from the
// port, or none that could be read.
var ErrNoTraffic = errors.New("no MySQL traffic")

// DefaultPort is the MySQL port looked for in a pcap without --port.
const DefaultPort = 3306

// packetSource is pcapgo's classic or next-generation reader.
type packetSource interface {
	ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	LinkType() layers.LinkType
}

// readPcap reads a pcap (or pcapng) file of MySQL traffic to port: TCP
// streams are put back together and the client protocol is decoded.
func (c *Capturer) readPcap(ctx context.Context, r io.Reader, port int) error {
	br := bufio.NewReaderSize(r, 1<<20)
	magic, err := br.Peek(4)
	if err != nil {
		return fmt.Errorf("read pcap: %w", err)
	}
	var src packetSource
	if string(magic) == "\x0a\x0d\x0d\x0a" {
		ng, err := pcapgo.NewNgReader(br, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			return fmt.Errorf("read pcapng: %w", err)
		}
		src = ng
	} else {
		pr, err := pcapgo.NewReader(br)
		if err != nil {
			return fmt.Errorf("read pcap: %w", err)
		}
		src = pr
	}
	pr := c.newPacketReader(port)
	for {
		if pr.stats.Packets%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		data, ci, err := src.ReadPacketData()
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			if err != io.EOF {
				c.bad(pr.stats.Packets+1, "truncated packet at the end of the pcap")
			}
			break
		}
		if err != nil {
			c.bad(pr.stats.Packets+1, "unreadable packet: %v", err)
			break
		}
		if err := pr.packet(gopacket.NewPacket(data, src.LinkType(), gopacket.DecodeOptions{Lazy: true, NoCopy: true}), ci.Timestamp, ci.CaptureLength < ci.Length); err != nil {
			return err
		}
	}
	return pr.end()
}

// packetReader takes decoded packets, keeps the TCP segments to or from the
// port and counts the rest.
type packetReader struct {
	c          *Capturer
	port       int
	tr         *tcpReader
	stats      *PacketStats
	statements int64       // the capture's statement count when the source began
	before     PacketStats // and its packet counts
	last       time.Time
}

func (c *Capturer) newPacketReader(port int) *packetReader {
	if port == 0 {
		port = DefaultPort
	}
	return &packetReader{c: c, port: port, tr: newTCPReader(c, uint16(port)), stats: &c.Stats.Packets,
		statements: c.Stats.Statements, before: c.Stats.Packets.clone()}
}

// packet takes one decoded packet; cut says the capture kept only its start.
func (pr *packetReader) packet(pkt gopacket.Packet, ts time.Time, cut bool) error {
	pr.stats.Packets++
	tl, _ := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
	nl := pkt.NetworkLayer()
	if tl == nil || nl == nil {
		if el := pkt.ErrorLayer(); el != nil {
			pr.stats.skip(skipUnreadable, 1)
		} else {
			pr.stats.skip(skipNotPort, 1)
		}
		return nil
	}
	if int(tl.SrcPort) != pr.port && int(tl.DstPort) != pr.port {
		pr.stats.skip(skipNotPort, 1)
		return nil
	}
	var srcIP, dstIP netip.Addr
	switch ip := nl.(type) {
	case *layers.IPv4:
		srcIP, _ = netip.AddrFromSlice(ip.SrcIP.To4())
		dstIP, _ = netip.AddrFromSlice(ip.DstIP.To4())
	case *layers.IPv6:
		srcIP, _ = netip.AddrFromSlice(ip.SrcIP)
		dstIP, _ = netip.AddrFromSlice(ip.DstIP)
	default:
		pr.stats.skip(skipNotPort, 1)
		return nil
	}
	s := &tcpSegment{
		src: netip.AddrPortFrom(srcIP, uint16(tl.SrcPort)), dst: netip.AddrPortFrom(dstIP, uint16(tl.DstPort)),
		seq: tl.Seq, syn: tl.SYN, fin: tl.FIN, rst: tl.RST, payload: tl.Payload, ts: ts,
		truncatedPayload: cut || pkt.Metadata().Truncated,
	}
	if ts.After(pr.last) {
		pr.last = ts
	}
	if err := pr.tr.segment(s); err != nil {
		return err
	}
	if pr.stats.Segments%65536 == 0 {
		return pr.tr.closeIdle(pr.last)
	}
	return nil
}

// end closes the connections still open and says why, if the source gave
// no statement.
func (pr *packetReader) end() error {
	if err := pr.tr.closeAll(); err != nil {
		return err
	}
	this := pr.stats.since(pr.before)
	if this.Segments == 0 {
		return fmt.Errorf("%w: no TCP packet to or from port %d in %d packets (name the server's port with --port)", ErrNoTraffic, pr.port, this.Packets)
	}
	if pr.c.Stats.Statements == pr.statements {
		return fmt.Errorf("%w: no statement read from port %d: %s", ErrNoTraffic, pr.port, this)
	}
	return nil
}
