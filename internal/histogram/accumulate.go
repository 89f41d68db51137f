package histogram

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Accumulator adds many snapshots into one histogram, fast: it reads each
// snapshot's encoded counts straight into one counts array, where decoding
// every snapshot into a histogram of its own would allocate and clear a
// counts array per snapshot. Merging the runners of a long split run adds
// thousands of interval snapshots. The zero value is ready to use; it is
// not safe for concurrent use.
type Accumulator struct {
	counts               []int64
	count                int64
	sum, minimum, maxi   time.Duration
	raw, payload, header []byte
	zr                   io.ReadCloser
	br                   bytes.Reader
}

// V2 compressed encoding, as HdrHistogram writes it: a cookie and the
// length of a zlib stream, whose contents are a 40-byte header (cookie,
// payload length, normalizing offset, significant digits, lowest and
// highest trackable value, conversion ratio) and the counts, zig-zag
// LEB128, a negative number being a run of empty buckets.
const (
	v2Cookie           = 0x1c849303
	v2CompressedCookie = 0x1c849304
	v2HeaderSize       = 40
)

// Add adds the values of s.
func (a *Accumulator) Add(s Snapshot) error {
	if s.Count == 0 {
		return nil
	}
	if a.counts == nil {
		a.counts = make([]int64, countsLen())
	}
	if err := a.addCounts(s.Encoded); err != nil {
		return fmt.Errorf("decode histogram: %w", err)
	}
	mn, mx := time.Duration(s.MinNS), time.Duration(s.MaxNS)
	if a.count == 0 || mn < a.minimum {
		a.minimum = mn
	}
	if mx > a.maxi {
		a.maxi = mx
	}
	a.count += s.Count
	a.sum += time.Duration(s.SumNS)
	return nil
}

func (a *Accumulator) addCounts(encoded string) error {
	n := base64.StdEncoding.DecodedLen(len(encoded))
	if cap(a.raw) < n {
		a.raw = make([]byte, n)
	}
	n, err := base64.StdEncoding.Decode(a.raw[:n], []byte(encoded))
	if err != nil {
		return err
	}
	raw := a.raw[:n]
	if len(raw) < 8 || binary.BigEndian.Uint32(raw)&^0xf0 != v2CompressedCookie {
		return errors.New("not a V2 compressed histogram")
	}
	clen := int(binary.BigEndian.Uint32(raw[4:]))
	if clen < 0 || clen > len(raw)-8 {
		return errors.New("truncated histogram")
	}
	a.br.Reset(raw[8 : 8+clen])
	if a.zr == nil {
		if a.zr, err = zlib.NewReader(&a.br); err != nil {
			return err
		}
	} else if err := a.zr.(zlib.Resetter).Reset(&a.br, nil); err != nil {
		return err
	}
	if a.header == nil {
		a.header = make([]byte, v2HeaderSize)
	}
	if _, err := io.ReadFull(a.zr, a.header); err != nil {
		return err
	}
	h := a.header
	plen := int(int32(binary.BigEndian.Uint32(h[4:])))
	sig := int32(binary.BigEndian.Uint32(h[12:]))
	low := int64(binary.BigEndian.Uint64(h[16:]))
	high := int64(binary.BigEndian.Uint64(h[24:]))
	if binary.BigEndian.Uint32(h)&^0xf0 != v2Cookie || sig != sigFigs || low != lowestUS || high != highestUS {
		return fmt.Errorf("histogram of another shape (%d significant digits, %d to %d)", sig, low, high)
	}
	if plen < 0 || plen > len(a.counts)*9 {
		return errors.New("corrupt histogram payload length")
	}
	if cap(a.payload) < plen {
		a.payload = make([]byte, plen)
	}
	p := a.payload[:plen]
	if _, err := io.ReadFull(a.zr, p); err != nil {
		return err
	}
	idx := 0
	for len(p) > 0 {
		v, k := zigzag(p)
		if k <= 0 {
			return errors.New("corrupt histogram payload")
		}
		p = p[k:]
		if v < 0 {
			if -v > int64(len(a.counts)-idx) {
				return errors.New("corrupt histogram payload: past the last bucket")
			}
			idx += int(-v)
			continue
		}
		if idx >= len(a.counts) {
			return errors.New("corrupt histogram payload: past the last bucket")
		}
		a.counts[idx] += v
		idx++
	}
	return nil
}

// zigzag reads one zig-zag LEB128 number of at most 9 bytes; k <= 0 when
// it is cut short.
func zigzag(b []byte) (v int64, k int) {
	var u uint64
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, -1
		}
		if i == 8 {
			u |= uint64(b[i]) << 56
			k = 9
			break
		}
		u |= uint64(b[i]&0x7f) << (7 * i)
		if b[i]&0x80 == 0 {
			k = i + 1
			break
		}
	}
	return int64(u>>1) ^ -int64(u&1), k
}

// Count is the number of values added.
func (a *Accumulator) Count() int64 { return a.count }

// Histogram returns what was added as a Histogram of its own.
func (a *Accumulator) Histogram() *Histogram {
	if a.count == 0 {
		return New()
	}
	h := hdr.Import(&hdr.Snapshot{LowestTrackableValue: lowestUS, HighestTrackableValue: highestUS, SignificantFigures: sigFigs, Counts: a.counts})
	return &Histogram{h: h, count: a.count, sum: a.sum, min: a.minimum, max: a.maxi}
}

// Reset empties the accumulator, keeping its buffers.
func (a *Accumulator) Reset() {
	clear(a.counts)
	a.count, a.sum, a.minimum, a.maxi = 0, 0, 0, 0
}

// countsLen is the length of the counts array of New's histograms.
func countsLen() int {
	return len(New().h.Export().Counts)
}
