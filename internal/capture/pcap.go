package capture

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/gopacket/gopacket/tcpassembly"
)

// ErrNoTraffic means a pcap holds no TCP traffic to or from the port.
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
	if port == 0 {
		port = DefaultPort
	}
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
	f := &streamFactory{c: c, port: uint16(port), conns: map[string]*mysqlConn{}}
	asm := tcpassembly.NewAssembler(tcpassembly.NewStreamPool(f))
	// Bounded buffering of out-of-order segments: memory stays flat on a
	// long capture with losses.
	asm.MaxBufferedPagesPerConnection = 64
	asm.MaxBufferedPagesTotal = 16384
	var seen, packets int64
	var last time.Time
	for {
		if packets%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		data, ci, err := src.ReadPacketData()
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			if err != io.EOF {
				c.bad(packets+1, "truncated packet at the end of the pcap")
			}
			break
		}
		if err != nil {
			c.bad(packets+1, "unreadable packet: %v", err)
			break
		}
		packets++
		pkt := gopacket.NewPacket(data, src.LinkType(), gopacket.DecodeOptions{Lazy: true, NoCopy: true})
		tl, _ := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if tl == nil || pkt.NetworkLayer() == nil {
			continue
		}
		if uint16(tl.SrcPort) != f.port && uint16(tl.DstPort) != f.port {
			continue
		}
		seen++
		last = ci.Timestamp
		asm.AssembleWithTimestamp(pkt.NetworkLayer().NetworkFlow(), tl, ci.Timestamp)
		if f.err != nil {
			return f.err
		}
		if seen%65536 == 0 {
			// Streams idle for a minute of capture time are given up on.
			asm.FlushOlderThan(last.Add(-time.Minute))
		}
	}
	asm.FlushAll()
	if f.err != nil {
		return f.err
	}
	if seen == 0 {
		return fmt.Errorf("%w: no TCP packet to or from port %d in %d packets (name the server's port with --port)", ErrNoTraffic, port, packets)
	}
	for _, mc := range f.conns {
		if err := mc.close(); err != nil {
			return err
		}
	}
	return nil
}

// streamFactory pairs the two directions of each TCP connection.
type streamFactory struct {
	c     *Capturer
	port  uint16
	conns map[string]*mysqlConn // by client address
	err   error                 // the first error handing on a record
}

func (f *streamFactory) New(netFlow, tcpFlow gopacket.Flow) tcpassembly.Stream {
	toServer := tcpFlow.Dst().String() == strconv.Itoa(int(f.port))
	client := netFlow.Src().String() + ":" + tcpFlow.Src().String()
	if !toServer {
		client = netFlow.Dst().String() + ":" + tcpFlow.Dst().String()
	}
	mc := f.conns[client]
	if mc == nil {
		mc = newMySQLConn(f, client)
		f.conns[client] = mc
	}
	return &halfStream{mc: mc, toServer: toServer}
}

// halfStream is one direction of a connection.
type halfStream struct {
	mc       *mysqlConn
	toServer bool
}

func (h *halfStream) Reassembled(rs []tcpassembly.Reassembly) {
	for _, r := range rs {
		if r.Skip != 0 {
			h.mc.lost(h.toServer)
		}
		if err := h.mc.feed(h.toServer, r.Bytes, r.Seen); err != nil && h.mc.f.err == nil {
			h.mc.f.err = err
		}
	}
}

func (h *halfStream) ReassemblyComplete() {
	mc := h.mc
	if mc.f.conns[mc.client] != mc {
		return
	}
	delete(mc.f.conns, mc.client)
	if err := mc.close(); err != nil && mc.f.err == nil {
		mc.f.err = err
	}
}
