// Package histogram records latencies in HDR histograms: 3 significant digits
// from 1 µs to 1 h, with the exact count, sum, minimum and maximum kept beside
// the buckets so the mean is exact and results can be merged later.
//
// Workers record through a Recorder, one per worker, which batches values and
// hands them to a shared Sink; a reporter drains the Sink once per interval.
package histogram

import (
	"encoding/base64"
	"fmt"
	"math"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

const (
	lowestUS  = 1
	highestUS = int64(time.Hour / time.Microsecond)
	sigFigs   = 3
)

// Histogram is a latency distribution. It is not safe for concurrent use.
type Histogram struct {
	h     *hdr.Histogram
	count int64
	sum   time.Duration
	min   time.Duration
	max   time.Duration
}

// New returns an empty histogram.
func New() *Histogram {
	return &Histogram{h: hdr.New(lowestUS, highestUS, sigFigs)}
}

// Record adds one latency. Values beyond one hour land in the top bucket; the
// exact maximum is still kept.
func (h *Histogram) Record(d time.Duration) {
	us := int64(d / time.Microsecond)
	if us < lowestUS {
		us = lowestUS
	} else if us > highestUS {
		us = highestUS
	}
	_ = h.h.RecordValue(us) // in range by construction
	if h.count == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.count++
	h.sum += d
}

// Merge adds every value of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.count == 0 {
		return
	}
	h.h.Merge(o.h)
	if h.count == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.count += o.count
	h.sum += o.sum
}

// Reset empties h.
func (h *Histogram) Reset() {
	h.h.Reset()
	h.count, h.sum, h.min, h.max = 0, 0, 0, 0
}

// Count is the number of values recorded.
func (h *Histogram) Count() int64 { return h.count }

// Sum is the exact sum of the values.
func (h *Histogram) Sum() time.Duration { return h.sum }

// Min is the exact smallest value, 0 when empty.
func (h *Histogram) Min() time.Duration { return h.min }

// Max is the exact largest value, 0 when empty.
func (h *Histogram) Max() time.Duration { return h.max }

// Mean is the exact mean, 0 when empty.
func (h *Histogram) Mean() time.Duration {
	if h.count == 0 {
		return 0
	}
	return h.sum / time.Duration(h.count)
}

// Percentile returns the value at or below which p percent of the values
// fall (p in [0, 100]), capped by the exact maximum.
func (h *Histogram) Percentile(p float64) time.Duration {
	if h.count == 0 {
		return 0
	}
	if p >= 100 {
		return h.max
	}
	v := time.Duration(h.h.ValueAtPercentile(p)) * time.Microsecond
	if v > h.max {
		v = h.max
	}
	if v < h.min {
		v = h.min
	}
	return v
}

// Bar is one bucket of a printed distribution.
type Bar struct {
	Value time.Duration // upper edge of the bucket
	Count int64
}

// Bars returns the distribution in buckets about 1% wide, empty ones left out,
// for printing the way sysbench's --histogram does.
func (h *Histogram) Bars() []Bar {
	var bars []Bar
	const step = 1.01
	var edge float64 = 1
	var acc int64
	for _, b := range h.h.Distribution() {
		if b.Count == 0 {
			continue
		}
		v := float64(b.To)
		if v > edge {
			if acc > 0 {
				bars = append(bars, Bar{Value: time.Duration(edge * float64(time.Microsecond)), Count: acc})
				acc = 0
			}
			edge = math.Pow(step, math.Ceil(math.Log(v)/math.Log(step)))
		}
		acc += b.Count
	}
	if acc > 0 {
		bars = append(bars, Bar{Value: time.Duration(edge * float64(time.Microsecond)), Count: acc})
	}
	return bars
}

// Bucket is one bucket of the HDR histogram: Count values from From to To,
// both included (1 µs wide below about 2 ms, then a thousandth of the value).
type Bucket struct {
	From, To time.Duration
	Count    int64
}

// Buckets returns the non-empty buckets in increasing order, for exporting
// the distribution at full resolution. It reads the counts array once
// (Distribution would build a slice of every bucket, empty or not).
func (h *Histogram) Buckets() []Bucket {
	var out []Bucket
	for idx, n := range h.h.Export().Counts {
		if n == 0 {
			continue
		}
		from, width := bucketAt(idx)
		out = append(out, Bucket{From: time.Duration(from) * time.Microsecond, To: time.Duration(from+width-1) * time.Microsecond, Count: n})
	}
	return out
}

// subBucketHalfMag is log2 of half the sub-buckets of a bucket: 3
// significant digits need 2048 sub-buckets (2^11), so 10.
const subBucketHalfMag = 10

// bucketAt is the lowest value and the width of the HDR counts array's
// slot idx, for a histogram whose lowest value is 1 (unit magnitude 0):
// the first 2048 slots are 1 wide; after that each group of 1024 slots
// is twice as wide as the one before.
func bucketAt(idx int) (from, width int64) {
	const half = 1 << subBucketHalfMag
	if idx < 2*half {
		return int64(idx), 1
	}
	b := idx>>subBucketHalfMag - 1
	sub := int64(idx&(half-1)) + half
	return sub << b, 1 << b
}

// Snapshot is the serialisable form of a Histogram.
type Snapshot struct {
	// Encoded is the HDR histogram in its standard compressed base64 form,
	// values in microseconds.
	Encoded string `json:"hdr_base64"`
	Count   int64  `json:"count"`
	SumNS   int64  `json:"sum_ns"`
	MinNS   int64  `json:"min_ns"`
	MaxNS   int64  `json:"max_ns"`
}

// Snapshot encodes h.
func (h *Histogram) Snapshot() (Snapshot, error) {
	b, err := h.h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return Snapshot{}, fmt.Errorf("encode histogram: %w", err)
	}
	return Snapshot{
		Encoded: string(b),
		Count:   h.count,
		SumNS:   int64(h.sum),
		MinNS:   int64(h.min),
		MaxNS:   int64(h.max),
	}, nil
}

// FromSnapshot decodes s.
func FromSnapshot(s Snapshot) (*Histogram, error) {
	if _, err := base64.StdEncoding.DecodeString(s.Encoded); err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	h, err := hdr.Decode([]byte(s.Encoded))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return &Histogram{
		h:     h,
		count: s.Count,
		sum:   time.Duration(s.SumNS),
		min:   time.Duration(s.MinNS),
		max:   time.Duration(s.MaxNS),
	}, nil
}

// Sink is a histogram shared by many Recorders. It is safe for concurrent use.
type Sink struct {
	mu sync.Mutex
	h  *Histogram
}

// NewSink returns an empty Sink.
func NewSink() *Sink { return &Sink{h: New()} }

// Take returns everything recorded since the last Take and starts afresh.
// The caller owns the returned histogram. Flush the Recorders first to
// include their pending values.
func (s *Sink) Take(spare *Histogram) *Histogram {
	if spare == nil {
		spare = New()
	} else {
		spare.Reset()
	}
	s.mu.Lock()
	h := s.h
	s.h = spare
	s.mu.Unlock()
	return h
}

func (s *Sink) add(vals []time.Duration) {
	s.mu.Lock()
	for _, v := range vals {
		s.h.Record(v)
	}
	s.mu.Unlock()
}

// recorderBatch is how many values a Recorder holds before it flushes on its
// own: large enough that the Sink lock is rare, small enough to stay in cache.
const recorderBatch = 256

// Recorder is one worker's handle onto a Sink. Record is called by the worker;
// Flush may be called by anyone.
type Recorder struct {
	mu   sync.Mutex
	vals []time.Duration
	sink *Sink
}

// NewRecorder returns a Recorder feeding s.
func NewRecorder(s *Sink) *Recorder {
	return &Recorder{vals: make([]time.Duration, 0, recorderBatch), sink: s}
}

// Record adds one latency.
func (r *Recorder) Record(d time.Duration) {
	r.mu.Lock()
	r.vals = append(r.vals, d)
	if len(r.vals) == cap(r.vals) {
		r.sink.add(r.vals)
		r.vals = r.vals[:0]
	}
	r.mu.Unlock()
}

// Flush hands pending values to the Sink.
func (r *Recorder) Flush() {
	r.mu.Lock()
	if len(r.vals) > 0 {
		r.sink.add(r.vals)
		r.vals = r.vals[:0]
	}
	r.mu.Unlock()
}

// Discard drops pending values (the end of a warm-up).
func (r *Recorder) Discard() {
	r.mu.Lock()
	r.vals = r.vals[:0]
	r.mu.Unlock()
}
