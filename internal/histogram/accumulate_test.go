package histogram

import (
	"math/rand/v2"
	"testing"
	"time"
)

// Adding snapshots with an Accumulator gives exactly the histogram that
// merging them does: every bucket, the count, sum, minimum and maximum.
func TestAccumulatorMatchesMerge(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		name  string
		parts int
		each  int
		scale float64 // microseconds
	}{
		{"empty", 3, 0, 100},
		{"one", 1, 1000, 500},
		{"many small", 50, 200, 300},
		{"wide", 8, 5000, 5e6}, // up to hours, the top bucket
	} {
		t.Run(tc.name, func(t *testing.T) {
			merged := New()
			var acc Accumulator
			for range tc.parts {
				h := New()
				for range tc.each {
					h.Record(time.Duration(rnd.ExpFloat64()*tc.scale*float64(time.Microsecond)) + time.Microsecond)
				}
				s, err := h.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				if err := acc.Add(s); err != nil {
					t.Fatal(err)
				}
				merged.Merge(h)
			}
			got := acc.Histogram()
			if got.Count() != merged.Count() || got.Sum() != merged.Sum() || got.Min() != merged.Min() || got.Max() != merged.Max() {
				t.Errorf("got count %d sum %v min %v max %v, want %d %v %v %v", got.Count(), got.Sum(), got.Min(), got.Max(),
					merged.Count(), merged.Sum(), merged.Min(), merged.Max())
			}
			gb, mb := got.Buckets(), merged.Buckets()
			if len(gb) != len(mb) {
				t.Fatalf("got %d buckets, want %d", len(gb), len(mb))
			}
			for i := range gb {
				if gb[i] != mb[i] {
					t.Fatalf("bucket %d: got %+v, want %+v", i, gb[i], mb[i])
				}
			}
			for _, p := range []float64{50, 95, 99, 99.9} {
				if g, w := got.Percentile(p), merged.Percentile(p); g != w {
					t.Errorf("p%g: got %v, want %v", p, g, w)
				}
			}
			acc.Reset()
			if acc.Count() != 0 || acc.Histogram().Count() != 0 {
				t.Errorf("after Reset: got %d values, want 0", acc.Count())
			}
		})
	}
}

func TestAccumulatorRefusesOthers(t *testing.T) {
	var acc Accumulator
	for _, bad := range []Snapshot{
		{Encoded: "not base64!", Count: 1},
		{Encoded: "AAAA", Count: 1},
	} {
		if err := acc.Add(bad); err == nil {
			t.Errorf("Add(%q): got no error, want one", bad.Encoded)
		}
	}
}

// FuzzAccumulator: whatever a stored snapshot holds, Add returns an error
// or adds counts; it never panics.
func FuzzAccumulator(f *testing.F) {
	h := New()
	h.Record(3 * time.Millisecond)
	h.Record(time.Second)
	s, _ := h.Snapshot()
	f.Add(s.Encoded)
	f.Add("HISFHAAAACN4nJNpmSzMwMDAxwABzFCaEUzOmQURAAA5FQKl")
	f.Add("")
	f.Fuzz(func(t *testing.T, enc string) {
		var acc Accumulator
		_ = acc.Add(Snapshot{Encoded: enc, Count: 1})
	})
}
