package histogram

import (
	"math"
	"sync"
	"testing"
	"time"
)

func TestPercentilesWithinThreeDigits(t *testing.T) {
	h := New()
	for i := 1; i <= 100000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	cases := []struct {
		name string
		p    float64
		want time.Duration
	}{
		{"p50", 50, 50 * time.Millisecond},
		{"p95", 95, 95 * time.Millisecond},
		{"p99", 99, 99 * time.Millisecond},
		{"p99.9", 99.9, 99900 * time.Microsecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := h.Percentile(tc.p)
			if rel := math.Abs(float64(got-tc.want)) / float64(tc.want); rel > 0.001 {
				t.Errorf("got %v, want %v within 0.1%%", got, tc.want)
			}
		})
	}
	if got, want := h.Min(), time.Microsecond; got != want {
		t.Errorf("min: got %v, want %v", got, want)
	}
	if got, want := h.Max(), 100*time.Millisecond; got != want {
		t.Errorf("max: got %v, want %v", got, want)
	}
	if got, want := h.Mean(), 50000500*time.Nanosecond; got != want {
		t.Errorf("mean: got %v, want %v (exact)", got, want)
	}
}

func TestRangeOneMicrosecondToOneHour(t *testing.T) {
	h := New()
	h.Record(300 * time.Nanosecond)
	h.Record(2 * time.Hour)
	if got := h.Count(); got != 2 {
		t.Fatalf("count: got %d, want 2", got)
	}
	if got, want := h.Max(), 2*time.Hour; got != want {
		t.Errorf("exact max kept beyond the range: got %v, want %v", got, want)
	}
	if got, want := h.Min(), 300*time.Nanosecond; got != want {
		t.Errorf("exact min: got %v, want %v", got, want)
	}
	top := h.Percentile(99)
	if top < 59*time.Minute {
		t.Errorf("p99 of a clamped value: got %v, want about 1h", top)
	}
}

func TestMergeAndSnapshotRoundTrip(t *testing.T) {
	a, b := New(), New()
	for i := 1; i <= 1000; i++ {
		a.Record(time.Duration(i) * time.Millisecond)
		b.Record(time.Duration(i) * time.Microsecond)
	}
	a.Merge(b)
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	c, err := FromSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	if c.Count() != 2000 || c.Sum() != a.Sum() || c.Min() != time.Microsecond || c.Max() != time.Second {
		t.Errorf("round trip: got count %d sum %v min %v max %v, want 2000 %v 1µs 1s", c.Count(), c.Sum(), c.Min(), c.Max(), a.Sum())
	}
	for _, p := range []float64{50, 95, 99.9} {
		if got, want := c.Percentile(p), a.Percentile(p); got != want {
			t.Errorf("p%v after decode: got %v, want %v", p, got, want)
		}
	}
	if _, err := FromSnapshot(Snapshot{Encoded: "not base64!"}); err == nil {
		t.Error("decoding garbage: got nil error, want one")
	}
}

func TestRecordersFeedSink(t *testing.T) {
	s := NewSink()
	var wg sync.WaitGroup
	recs := make([]*Recorder, 8)
	for i := range recs {
		recs[i] = NewRecorder(s)
		wg.Add(1)
		go func(r *Recorder) {
			defer wg.Done()
			for j := 0; j < 1000; j++ {
				r.Record(time.Millisecond)
			}
		}(recs[i])
	}
	wg.Wait()
	for _, r := range recs {
		r.Flush()
	}
	h := s.Take(nil)
	if got := h.Count(); got != 8000 {
		t.Errorf("got %d values, want 8000", got)
	}
	if got := s.Take(nil).Count(); got != 0 {
		t.Errorf("after Take: got %d values, want 0", got)
	}
}

func TestBarsCoverEveryValue(t *testing.T) {
	h := New()
	for i := 1; i <= 500; i++ {
		h.Record(time.Duration(i*i) * time.Microsecond)
	}
	var n int64
	for _, b := range h.Bars() {
		n += b.Count
	}
	if n != 500 {
		t.Errorf("bars hold %d values, want 500", n)
	}
}

func TestBucketsHoldEveryValue(t *testing.T) {
	h := New()
	vals := []time.Duration{time.Microsecond, 1500 * time.Microsecond, 1500 * time.Microsecond, 70 * time.Millisecond, 20 * time.Second}
	for _, v := range vals {
		h.Record(v)
	}
	var n int64
	prev := time.Duration(-1)
	for _, b := range h.Buckets() {
		if b.From > b.To || b.From <= prev || b.Count <= 0 {
			t.Errorf("bucket %+v after %s: want From <= To, increasing, non-empty", b, prev)
		}
		prev = b.To
		n += b.Count
	}
	if n != int64(len(vals)) {
		t.Errorf("buckets hold %d values, want %d", n, len(vals))
	}
	if got := h.Buckets()[1]; got.From != 1500*time.Microsecond || got.Count != 2 {
		t.Errorf("second bucket: got %+v, want 1.5ms x 2", got)
	}
}

// Buckets reads the HDR counts array itself; it must agree with the
// library's own walk of it everywhere from 1 µs to an hour.
func TestBucketsAgreeWithDistribution(t *testing.T) {
	h := New()
	for v := time.Microsecond; v < time.Hour; v = v*1013/1000 + time.Microsecond {
		h.Record(v)
	}
	h.Record(time.Hour)
	var want []Bucket
	for _, b := range h.h.Distribution() {
		if b.Count > 0 {
			want = append(want, Bucket{From: time.Duration(b.From) * time.Microsecond, To: time.Duration(b.To) * time.Microsecond, Count: b.Count})
		}
	}
	got := h.Buckets()
	if len(got) != len(want) {
		t.Fatalf("got %d buckets, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("bucket %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}
