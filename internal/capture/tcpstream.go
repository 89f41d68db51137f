package capture

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"time"
)

// Reasons for skipping packets, commands or connections of a packet
// capture, as the capture's report counts them.
const (
	skipTLS          = "connections encrypted with TLS"
	skipCompressed   = "connections using the compressed protocol"
	skipAuthFailed   = "connections whose login failed"
	skipPreparedOld  = "executions of statements prepared before the capture began (text unknown)"
	skipParams       = "executions whose parameters could not be decoded"
	skipQueryAttrs   = "queries whose query attributes could not be read"
	skipGap          = "gaps in a TCP stream (bytes the capture lost)"
	skipResync       = "segments skipped until a connection seen mid-stream reached a packet boundary"
	skipOldResponse  = "response packets of commands sent before the capture began"
	skipOverflow     = "out-of-order segments given up on (too many buffered)"
	skipNotPort      = "packets not TCP to or from the server's port"
	skipUnreadable   = "packets that could not be decoded"
	skipSnapTruncate = "packets cut short by the capture's snapshot length"
)

// PacketStats count what a packet capture held and what of it was not read.
type PacketStats struct {
	Packets     int64 // packets read
	Segments    int64 // TCP segments to or from the server's port
	Connections int64
	// MidStream counts connections already open when the capture began.
	MidStream int64
	// Skipped counts what was not read, by reason.
	Skipped map[string]int64
}

func (ps *PacketStats) skip(reason string, n int64) {
	if ps.Skipped == nil {
		ps.Skipped = map[string]int64{}
	}
	ps.Skipped[reason] += n
}

// since is what was counted after old was.
func (ps *PacketStats) since(old PacketStats) *PacketStats {
	d := &PacketStats{
		Packets: ps.Packets - old.Packets, Segments: ps.Segments - old.Segments,
		Connections: ps.Connections - old.Connections, MidStream: ps.MidStream - old.MidStream,
	}
	for r, n := range ps.Skipped {
		if n > old.Skipped[r] {
			d.skip(r, n-old.Skipped[r])
		}
	}
	return d
}

func (ps *PacketStats) clone() PacketStats {
	c := *ps
	c.Skipped = make(map[string]int64, len(ps.Skipped))
	for r, n := range ps.Skipped {
		c.Skipped[r] = n
	}
	return c
}

// String lists what was skipped, most first, on one line.
func (ps *PacketStats) String() string {
	reasons := make([]string, 0, len(ps.Skipped))
	for r := range ps.Skipped {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		a, b := ps.Skipped[reasons[i]], ps.Skipped[reasons[j]]
		if a != b {
			return a > b
		}
		return reasons[i] < reasons[j]
	})
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%d %s", ps.Skipped[r], r)
	}
	return fmt.Sprintf("%d packets, %d TCP segments of %d connections (%d open before the capture began); skipped: %s",
		ps.Packets, ps.Segments, ps.Connections, ps.MidStream, orNone(strings.Join(parts, ", ")))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// Bounds of the bytes buffered per direction while a gap waits to be
// filled by a retransmission or a reordered segment.
const (
	maxOutOfOrderSegs  = 128
	maxOutOfOrderBytes = 4 << 20
)

// tcpSegment is what the reassembler needs of one TCP segment.
type tcpSegment struct {
	src, dst         netip.AddrPort
	seq              uint32
	syn, fin, rst    bool
	payload          []byte
	ts               time.Time
	truncatedPayload bool
}

// tcpReader puts the TCP connections to or from one port back together, in
// the order of the capture, and hands each direction's bytes to the
// connection's protocol decoder. Everything happens in the caller's
// goroutine and no map is iterated in an order that matters, so the same
// input always gives the same records.
type tcpReader struct {
	c     *Capturer
	port  uint16
	conns map[[2]netip.AddrPort]*tcpConn // by client, server
	n     int64                          // connections made, for their order
	// clock is the latest time seen: a packet stamped earlier than one
	// before it in the file (captures on several CPUs do that) is taken as
	// of that time, so that the file's order is kept.
	clock time.Time
	stats *PacketStats
}

func newTCPReader(c *Capturer, port uint16) *tcpReader {
	return &tcpReader{c: c, port: port, conns: map[[2]netip.AddrPort]*tcpConn{}, stats: &c.Stats.Packets}
}

// tcpConn is one TCP connection: both directions and their decoder.
type tcpConn struct {
	order      int64
	key        [2]netip.AddrPort
	last       time.Time
	mc         *mysqlConn
	in, out    direction // to the server, to the client
	finIn, fin bool
}

// direction puts one direction's segments back in sequence order.
type direction struct {
	synced bool
	next   uint32
	ooo    []oooSeg // out of order, sorted by sequence number
	bytes  int
}

type oooSeg struct {
	seq  uint32
	data []byte
	ts   time.Time
}

// segment takes one TCP segment to or from the port.
func (tr *tcpReader) segment(s *tcpSegment) error {
	toServer := s.dst.Port() == tr.port
	key := [2]netip.AddrPort{s.src, s.dst}
	if !toServer {
		key = [2]netip.AddrPort{s.dst, s.src}
	}
	tr.stats.Segments++
	if s.ts.Before(tr.clock) {
		s.ts = tr.clock
	}
	tr.clock = s.ts
	tc := tr.conns[key]
	if tc != nil && s.syn && toServer && (tc.in.synced || tc.out.synced) && !(tc.in.synced && s.seq+1 == tc.in.next) {
		// The client port was used again for a new connection (not the
		// SYN sent again).
		if err := tr.close(tc); err != nil {
			return err
		}
		tc = nil
	}
	if tc == nil {
		if !s.syn && len(s.payload) == 0 {
			return nil // an ACK, or the end of a connection already closed
		}
		tr.n++
		tr.stats.Connections++
		tc = &tcpConn{order: tr.n, key: key}
		tc.mc = newMySQLConn(tr.c, key[0].String())
		if !s.syn {
			tr.stats.MidStream++
			// Both directions start at a packet boundary that is still to
			// be found.
			tc.mc.in.lost, tc.mc.out.lost = true, true
			tc.mc.midStream = true
		}
		tr.conns[key] = tc
	}
	tc.last = s.ts
	d := &tc.out
	if toServer {
		d = &tc.in
	}
	if s.truncatedPayload {
		tr.stats.skip(skipSnapTruncate, 1)
	}
	if err := tc.take(d, toServer, s); err != nil {
		return err
	}
	if err := tc.mc.advance(tc.complete(s.ts)); err != nil {
		return err
	}
	if s.rst || (tc.finIn && tc.fin) {
		return tr.close(tc)
	}
	return nil
}

// complete is the time up to which both directions have been handed over:
// now, or just before the oldest segment waiting for a gap to be filled.
func (tc *tcpConn) complete(now time.Time) time.Time {
	for _, d := range []*direction{&tc.in, &tc.out} {
		for _, o := range d.ooo {
			if !o.ts.After(now) {
				now = o.ts.Add(-time.Nanosecond)
			}
		}
	}
	return now
}

// take puts one segment's bytes in place.
func (tc *tcpConn) take(d *direction, toServer bool, s *tcpSegment) error {
	seq, data := s.seq, s.payload
	if s.syn {
		d.synced, d.next = true, seq+1
		seq++
	}
	if len(data) > 0 {
		if !d.synced {
			d.synced, d.next = true, seq
		}
		if err := tc.place(d, toServer, seq, data, s.ts); err != nil {
			return err
		}
	}
	if s.fin {
		if toServer {
			tc.finIn = true
		} else {
			tc.fin = true
		}
	}
	return nil
}

func (tc *tcpConn) place(d *direction, toServer bool, seq uint32, data []byte, ts time.Time) error {
	diff := int32(seq - d.next)
	if diff < 0 {
		if int(-diff) >= len(data) {
			return nil // a retransmission of what was read already
		}
		data = data[-diff:]
		diff = 0
	}
	if diff > 0 {
		tc.buffer(d, seq, data, ts)
		if len(d.ooo) <= maxOutOfOrderSegs && d.bytes <= maxOutOfOrderBytes {
			return nil
		}
		// The missing bytes are not coming: go on after the gap.
		tc.mc.c.Stats.Packets.skip(skipOverflow, 1)
		return tc.drain(d, toServer, true)
	}
	if len(d.ooo) > 0 && d.ooo[0].ts.Before(ts) {
		// It fills a gap: it was sent before what waited behind it.
		ts = d.ooo[0].ts
	}
	if err := tc.mc.feed(toServer, data, ts); err != nil {
		return err
	}
	d.next += uint32(len(data))
	return tc.drain(d, toServer, false)
}

// buffer keeps a segment that came before the bytes that precede it.
func (tc *tcpConn) buffer(d *direction, seq uint32, data []byte, ts time.Time) {
	i := sort.Search(len(d.ooo), func(i int) bool { return int32(d.ooo[i].seq-seq) >= 0 })
	if i < len(d.ooo) && d.ooo[i].seq == seq {
		if len(d.ooo[i].data) >= len(data) {
			return
		}
		d.bytes -= len(d.ooo[i].data)
		d.ooo[i].data = append([]byte(nil), data...)
		d.bytes += len(data)
		return
	}
	d.ooo = append(d.ooo, oooSeg{})
	copy(d.ooo[i+1:], d.ooo[i:])
	d.ooo[i] = oooSeg{seq: seq, data: append([]byte(nil), data...), ts: ts}
	d.bytes += len(data)
}

// drain hands on the buffered segments that now follow in order; with
// jump it first jumps over the gap before the oldest one.
func (tc *tcpConn) drain(d *direction, toServer bool, jump bool) error {
	for len(d.ooo) > 0 {
		o := d.ooo[0]
		diff := int32(o.seq - d.next)
		if diff > 0 {
			if !jump {
				return nil
			}
			tc.mc.c.Stats.Packets.skip(skipGap, 1)
			if err := tc.mc.lost(toServer); err != nil {
				return err
			}
			d.next = o.seq
			diff = 0
			jump = false
		}
		d.ooo = d.ooo[1:]
		d.bytes -= len(o.data)
		data := o.data
		if int(-diff) >= len(data) {
			continue
		}
		data = data[-diff:]
		if err := tc.mc.feed(toServer, data, o.ts); err != nil {
			return err
		}
		d.next += uint32(len(data))
	}
	d.ooo = nil
	return nil
}

// close hands on what is still buffered, across any gap, and ends the
// connection.
func (tr *tcpReader) close(tc *tcpConn) error {
	delete(tr.conns, tc.key)
	for len(tc.in.ooo) > 0 || len(tc.out.ooo) > 0 {
		// The older segment first, so that commands meet their responses.
		d, toServer := &tc.in, true
		if len(tc.in.ooo) == 0 || (len(tc.out.ooo) > 0 && tc.out.ooo[0].ts.Before(tc.in.ooo[0].ts)) {
			d, toServer = &tc.out, false
		}
		one := d.ooo[:1:1]
		rest := d.ooo[1:]
		d.ooo = one
		if err := tc.drain(d, toServer, true); err != nil {
			return err
		}
		d.ooo = rest
	}
	return tc.mc.close()
}

// closeAll ends every connection still open at the end of the capture, in
// the order they began.
func (tr *tcpReader) closeAll() error {
	open := make([]*tcpConn, 0, len(tr.conns))
	for _, tc := range tr.conns {
		open = append(open, tc)
	}
	return tr.closeInOrder(open)
}

// closeIdle ends connections that sent nothing for a long time of capture
// time, so that memory stays flat over a long capture with connections
// whose end was not captured.
func (tr *tcpReader) closeIdle(now time.Time) error {
	var idle []*tcpConn
	for _, tc := range tr.conns {
		if now.Sub(tc.last) > idleConn {
			idle = append(idle, tc)
		}
	}
	return tr.closeInOrder(idle)
}

// closeInOrder ends conns in the order they began, so that the records of
// connections ended together come out the same on every run.
func (tr *tcpReader) closeInOrder(conns []*tcpConn) error {
	sort.Slice(conns, func(i, j int) bool { return conns[i].order < conns[j].order })
	for _, tc := range conns {
		if err := tr.close(tc); err != nil {
			return err
		}
	}
	return nil
}

// idleConn is how long a connection may send nothing before it is ended.
const idleConn = 10 * time.Minute
