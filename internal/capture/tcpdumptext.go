package capture

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/shakedown/shakedown/internal/sqlsplit"
)

// The text tcpdump prints with -x (from the network header) or -xx (from
// the link header), as pt-query-digest asks for it:
//
//	tcpdump -s 65535 -x -nn -q -tttt -i any port 3306
//
// Each packet is a line that starts with its time, then lines of hex:
//
//	2026-11-25 19:49:17.729626 IP 127.0.0.1.35386 > 127.0.0.1.44569: tcp 0
//		0x0000:  4500 003c 9daf 4000 4006 9f0a 7f00 0001
//
// The addresses, ports and TCP fields are read from the hex, so any of
// tcpdump's header styles will do; the time may be -tttt's date and time,
// -tt's seconds since the epoch or the default time of day. Times are taken
// as UTC: the text does not say its time zone.

// readTcpdumpText reads a tcpdump -x or -xx text dump of MySQL traffic to
// port.
func (c *Capturer) readTcpdumpText(ctx context.Context, r io.Reader, port int) error {
	lr := newLineReader(r)
	pr := c.newPacketReader(port)
	var (
		hex    []byte // the current packet's bytes
		head   int64  // the line of its header; 0 if none
		bad    bool   // a line of it could not be read
		ts     time.Time
		day    = time.Unix(0, 0).UTC() // for times of day: the day they fall on
		lastTS time.Time
	)
	end := func() error {
		if head == 0 {
			return nil
		}
		defer func() { hex, head, bad = hex[:0], 0, false }()
		if bad {
			pr.stats.Packets++
			pr.stats.skip(skipUnreadable, 1)
			return nil
		}
		if len(hex) == 0 {
			c.bad(head, "packet without hex bytes (run tcpdump with -x or -xx)")
			pr.stats.Packets++
			pr.stats.skip(skipUnreadable, 1)
			return nil
		}
		pkt, cut := decodeIP(hex)
		if pkt == nil {
			pr.stats.Packets++
			pr.stats.skip(skipNotPort, 1)
			return nil
		}
		return pr.packet(pkt, ts, cut)
	}
	for {
		if lr.line%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if len(line) == 0 {
			continue
		}
		indented := line[0] == ' ' || line[0] == '\t'
		t := bytes.TrimLeft(line, " \t")
		if indented && !bytes.HasPrefix(t, []byte("0x")) {
			if pt, nd, ok := packetTime(t, day, lastTS); ok {
				// -ttttt's time, after a space, starts a packet.
				if err := end(); err != nil {
					return err
				}
				head, ts, day, lastTS = lr.line, pt, nd, pt
			}
			continue // tcpdump's decoded fields, with -v
		}
		if indented {
			if head == 0 {
				c.bad(lr.line, "hex bytes without a packet line before them")
				continue
			}
			if !bad {
				var ok bool
				if hex, ok = appendHexLine(hex, t); !ok {
					c.bad(lr.line, "unreadable hex: %q", sqlsplit.Short(string(line), 80))
					bad = true
				}
			}
			continue
		}
		if err := end(); err != nil {
			return err
		}
		head = lr.line
		var ok bool
		if ts, day, ok = packetTime(line, day, lastTS); !ok {
			ts = lastTS // no time: keep the order
		}
		lastTS = ts
	}
	if err := end(); err != nil {
		return err
	}
	return pr.end()
}

// appendHexLine adds the bytes of one hex line ("0x0010:  4500 003c ...",
// without its indent) to b. An ASCII column (-X) after two spaces is left.
func appendHexLine(b, line []byte) ([]byte, bool) {
	i := bytes.IndexByte(line, ':')
	if i < 0 {
		return b, false
	}
	rest := bytes.TrimLeft(line[i+1:], " ")
	if j := bytes.Index(rest, []byte("  ")); j >= 0 {
		rest = rest[:j]
	}
	for _, tok := range bytes.Fields(rest) {
		if len(tok)%2 != 0 || len(tok) > 4 {
			return b, false
		}
		for k := 0; k < len(tok); k += 2 {
			hi, ok1 := unhex(tok[k])
			lo, ok2 := unhex(tok[k+1])
			if !ok1 || !ok2 {
				return b, false
			}
			b = append(b, hi<<4|lo)
		}
	}
	return b, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// packetTime reads the time a packet line starts with. A time of day is
// put on day, which moves on by one when the time goes back by more than
// twelve hours (midnight passed).
func packetTime(line []byte, day, last time.Time) (ts, newDay time.Time, ok bool) {
	f := strings.Fields(string(line[:min(len(line), 64)]))
	if len(f) == 0 {
		return ts, day, false
	}
	if len(f) >= 2 && len(f[0]) == 10 && f[0][4] == '-' {
		t, err := time.Parse("2006-01-02 15:04:05.999999999", f[0]+" "+f[1])
		return t, day, err == nil
	}
	if strings.Count(f[0], ":") == 2 {
		t, err := time.Parse("15:04:05.999999999", f[0])
		if err != nil {
			return ts, day, false
		}
		t = day.Add(t.Sub(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)))
		if !last.IsZero() && last.Sub(t) > 12*time.Hour {
			day = day.AddDate(0, 0, 1)
			t = t.AddDate(0, 0, 1)
		}
		return t, day, true
	}
	if sec, frac, found := strings.Cut(f[0], "."); found {
		s, err1 := strconv.ParseInt(sec, 10, 64)
		us, err2 := strconv.ParseInt((frac + "000000")[:6], 10, 64)
		if err1 == nil && err2 == nil && s > 0 {
			return time.Unix(s, us*1000).UTC(), day, true
		}
	}
	return ts, day, false
}

// linkHeaderSizes are where the network header may start in -xx output:
// none, Ethernet, Linux cooked (v1, v2), BSD loopback, Ethernet with VLAN.
var linkHeaderSizes = []int{0, 14, 16, 20, 4, 18}

// decodeIP finds the IPv4 or IPv6 header in a packet's bytes and decodes
// the packet from it; cut says the capture kept only the packet's start.
func decodeIP(b []byte) (gopacket.Packet, bool) {
	for _, off := range linkHeaderSizes {
		if off >= len(b) {
			break
		}
		ip := b[off:]
		switch ip[0] >> 4 {
		case 4:
			hl := int(ip[0]&0x0f) * 4
			if hl < 20 || len(ip) < hl || ip[9] != 6 || !ipv4Checksum(ip[:hl]) {
				continue
			}
			total := int(binary.BigEndian.Uint16(ip[2:]))
			if total < hl+20 {
				continue
			}
			return gopacket.NewPacket(ip, layers.LayerTypeIPv4, gopacket.DecodeOptions{Lazy: true, NoCopy: true}), total > len(ip)
		case 6:
			if len(ip) < 40 || ip[6] != 6 || int(binary.BigEndian.Uint16(ip[4:]))+40 < len(ip) {
				continue
			}
			total := int(binary.BigEndian.Uint16(ip[4:])) + 40
			return gopacket.NewPacket(ip, layers.LayerTypeIPv6, gopacket.DecodeOptions{Lazy: true, NoCopy: true}), total > len(ip)
		}
	}
	return nil, false
}

// ipv4Checksum reports whether an IPv4 header's checksum holds. A checksum
// of 0 is taken as right: some captures see packets before the network
// card fills it in.
func ipv4Checksum(h []byte) bool {
	if h[10] == 0 && h[11] == 0 {
		return true
	}
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		sum += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return sum == 0xffff
}

// looksTcpdumpText reports whether text holds a packet line followed by the
// first line of its hex dump (with -v, a line of decoded fields between).
func looksTcpdumpText(text string) bool {
	var prev [2]string
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimLeft(line, " \t")
		if len(t) < len(line) && strings.HasPrefix(t, "0x0000:") {
			for _, p := range prev {
				if strings.Contains(p, " IP ") || strings.Contains(p, " IP6 ") {
					return true
				}
			}
			return false
		}
		prev[0], prev[1] = prev[1], line
	}
	return false
}
