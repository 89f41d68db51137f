package segment

import (
	"math"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/usage"
)

func mustParse(t *testing.T, s string) Segment {
	t.Helper()
	g, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return g
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in  string
		want      string // String() of the result
		wantLabel string
	}{
		{"first of four", "1/4", "0:1/4", "1/4"},
		{"last of four", "4/4", "3/4:1", "4/4"},
		{"alone", "1/1", "0:1", "1/1"},
		{"from to fractions", "1/4:1/2", "1/4:1/2", "2/4"},
		{"from to decimals", "0.25:0.5", "1/4:1/2", "2/4"},
		{"from to percent", "0%:50%", "0:1/2", "1/2"},
		{"unequal", "0:2/3", "0:2/3", "0:2/3"},
		{"unequal middle", "1/3:3/4", "1/3:3/4", "1/3:3/4"},
		{"lowest terms", "2/8:4/8", "1/4:1/2", "2/4"},
		{"spaces", " 1/4 : 1/2 ", "1/4:1/2", "2/4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := mustParse(t, tc.in)
			if got := g.String(); got != tc.want {
				t.Errorf("String: got %s, want %s", got, tc.want)
			}
			if got := Around(g).Label(g); got != tc.wantLabel {
				t.Errorf("Label: got %s, want %s", got, tc.wantLabel)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"zero index", "0/4", "I must be 1..4 (segments count from 1)"},
		{"index past N", "5/4", "I must be 1..4"},
		{"zero parts", "1/0", "N must be 1.."},
		{"no separator", "2", "no / or :"},
		{"words", "a/b", "whole numbers"},
		{"backwards", "1/2:1/4", "FROM must be below TO"},
		{"empty", "1/2:1/2", "FROM must be below TO"},
		{"above one", "1/2:3/2", "outside 0..1"},
		{"negative", "-1/4:1/2", "not a fraction"},
		{"exponent", "1e-1:1", "not a fraction"},
		{"too fine", "0:1/2000000", "finer than"},
		{"empty boundary", ":1", "empty boundary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !usage.Is(err) {
				t.Fatalf("Parse(%q): got %v, want a usage error containing %q", tc.in, err, tc.want)
			}
			if !strings.Contains(err.Error(), "--segment") {
				t.Errorf("got %q, want the flag named", err)
			}
		})
	}
}

// For every N in 1..64 and every count v in a range, the shares of i/N for
// i = 1..N add up to v exactly, each differs from v/N by less than one, and
// the ranges tile 0..v.
func TestSharesAddUp(t *testing.T) {
	counts := []int64{0, 1, 2, 3, 7, 63, 64, 65, 100, 999, 1000, 1001, 4096, 1 << 40, math.MaxInt64 / 2}
	for v := int64(0); v <= 300; v++ {
		counts = append(counts, v)
	}
	for n := int64(1); n <= 64; n++ {
		q := Equal(n)
		segs := make([]Segment, n)
		for i := int64(1); i <= n; i++ {
			g, err := Nth(i, n)
			if err != nil {
				t.Fatal(err)
			}
			if k, err := q.Index(g); err != nil || k != int(i-1) {
				t.Fatalf("Equal(%d).Index(%s): got %d, %v, want %d", n, g, k, err, i-1)
			}
			segs[i-1] = g
		}
		for _, v := range counts {
			var sum, next int64
			for i, g := range segs {
				share := g.Share(v)
				sum += share
				// |share - v/n| < 1, in integers.
				if d := share*n - v; d <= -n || d >= n {
					t.Errorf("%d/%d of %d: got %d, want within 1 of %d/%d", i+1, n, v, share, v, n)
				}
				lo, hi := g.Range(v)
				if v > 0 && lo != next {
					t.Fatalf("%d/%d of %d: range starts at %d, want %d (where %d/%d ended)", i+1, n, v, lo, next, i, n)
				}
				next = hi
			}
			if sum != v {
				t.Fatalf("N=%d v=%d: shares add up to %d, want %d", n, v, sum, v)
			}
			if v > 0 && next != v {
				t.Fatalf("N=%d v=%d: ranges end at %d, want %d", n, v, next, v)
			}
		}
	}
}

// Unequal sequences add up too.
func TestSequenceSharesAddUp(t *testing.T) {
	for _, seq := range []string{"0,1/3,2/3,1", "0,1/7,1/2,0.9,1", "0,10%,35%,1", "0,1"} {
		q, err := ParseSequence(seq)
		if err != nil {
			t.Fatal(err)
		}
		for v := int64(0); v <= 2000; v++ {
			var sum int64
			for _, g := range q.Segments() {
				sum += g.Share(v)
			}
			if sum != v {
				t.Fatalf("%s, v=%d: got %d, want %d", seq, v, sum, v)
			}
		}
		var rate float64
		for _, g := range q.Segments() {
			rate += g.Rate(1000)
		}
		if math.Abs(rate-1000) > 1e-9 {
			t.Errorf("%s: rates add up to %g, want 1000", seq, rate)
		}
	}
}

func TestShareExamples(t *testing.T) {
	for _, tc := range []struct {
		seg  string
		v    int64
		want int64
	}{
		{"1/4", 10, 3}, // round(2.5) - 0
		{"2/4", 10, 2}, // round(5) - round(2.5)
		{"3/4", 10, 3}, // round(7.5) - 5
		{"4/4", 10, 2}, // 10 - round(7.5)
		{"1/3", 1, 0},
		{"2/3", 1, 1},
		{"3/3", 1, 0},
		{"0:1", 17, 17},
	} {
		if got := mustParse(t, tc.seg).Share(tc.v); got != tc.want {
			t.Errorf("%s of %d: got %d, want %d", tc.seg, tc.v, got, tc.want)
		}
	}
	if got := mustParse(t, "1/4:1/2").Rate(100); got != 25 {
		t.Errorf("rate: got %g, want 25", got)
	}
}

func TestParseSequence(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"overlap", "0,1/2,1/4,1", "overlap 1/4:1/2"},
		{"gap at the end", "0,1/4,1/2", "gap 1/2:1"},
		{"gap at the start", "1/4,1/2,1", "gap 0:1/4"},
		{"repeated", "0,1/2,1/2,1", "1/2 appears twice"},
		{"one boundary", "0", "at least two boundaries"},
		{"bad boundary", "0,x,1", `"x" is not a fraction`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSequence(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !usage.Is(err) {
				t.Fatalf("got %v, want a usage error containing %q", err, tc.want)
			}
		})
	}
	q, err := ParseSequence("0, 0.25, 50%, 1")
	if err != nil {
		t.Fatal(err)
	}
	if got := q.String(); got != "0,1/4,1/2,1" {
		t.Errorf("got %s, want 0,1/4,1/2,1", got)
	}
	if _, err := q.Index(mustParse(t, "1/4:3/4")); err == nil || !strings.Contains(err.Error(), "overlaps 1/4:1/2 and 1/2:1") {
		t.Errorf("Index of a segment not in the sequence: got %v, want the overlap named", err)
	}
	if _, err := q.At(3); err == nil || !strings.Contains(err.Error(), "from 0 to 2") {
		t.Errorf("At(3): got %v, want an index error", err)
	}
}

func TestCover(t *testing.T) {
	segs := func(ss ...string) []Segment {
		out := make([]Segment, len(ss))
		for i, s := range ss {
			out[i] = mustParse(t, s)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		segs []Segment
		want string // "" for no error
	}{
		{"complete", segs("2/4", "1/4", "4/4", "3/4"), ""},
		{"unequal", segs("0:1/3", "1/3:1"), ""},
		{"missing middle", segs("1/4", "2/4", "4/4"), "gap 1/2:3/4"},
		{"missing end", segs("1/3", "2/3"), "gap 2/3:1"},
		{"missing start", segs("2/2"), "gap 0:1/2"},
		{"twice", segs("1/2", "1/2", "2/2"), "segments 0:1/2 and 0:1/2 overlap on 0:1/2"},
		{"overlap", segs("0:1/2", "1/4:1"), "overlap on 1/4:1/2"},
		{"nested", segs("0:1", "1/4:1/2"), "overlap on 1/4:1/2"},
		{"none", nil, "gap 0:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Cover(tc.segs)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %v, want no error", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !usage.Is(err)):
				t.Errorf("got %v, want a usage error containing %q", err, tc.want)
			}
		})
	}
}

// Every tick of the global schedule is fired by exactly one runner, each
// runner owns its share of every period, and the spread is even: after any
// number of ticks no runner is more than one tick off its pace.
func TestStripe(t *testing.T) {
	for _, seq := range []string{"0,1", "0,1/2,1", "0,1/4,1/2,3/4,1", "0,1/3,1/2,1", "0,1/7,3/5,1"} {
		q, err := ParseSequence(seq)
		if err != nil {
			t.Fatal(err)
		}
		st, err := q.Stripe()
		if err != nil {
			t.Fatal(err)
		}
		p := st.Period()
		segs := q.Segments()
		owned := make([]int64, len(segs))
		for tick := int64(0); tick < 3*p; tick++ {
			k := st.Owner(tick)
			owned[k]++
			for j, g := range segs {
				pace := float64(tick+1) * g.Rate(1)
				if d := float64(owned[j]) - pace; d <= -1 || d >= 1 {
					t.Fatalf("%s: after %d ticks segment %s has %d, want within 1 of %.2f", seq, tick+1, g, owned[j], pace)
				}
			}
		}
		for j, g := range segs {
			if want := 3 * g.Share(p); owned[j] != want {
				t.Errorf("%s: segment %s owns %d of 3 periods of %d, want %d", seq, g, owned[j], p, want)
			}
		}
	}
	q := Equal(4)
	st, _ := q.Stripe()
	var got []int
	for tick := range int64(8) {
		got = append(got, st.Owner(tick))
	}
	if want := []int{0, 1, 2, 3, 0, 1, 2, 3}; !equalInts(got, want) {
		t.Errorf("4 equal segments: got owners %v, want %v", got, want)
	}
	if _, err := (Sequence{{0, 1}, {1, 999983}, {1, 999979}, {1, 1}}).Stripe(); err == nil {
		t.Errorf("huge common denominator: got no error, want one")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestAround(t *testing.T) {
	for in, want := range map[string]string{
		"2/4":     "0,1/4,1/2,3/4,1",
		"0:2/5":   "0,2/5,1",
		"1/3:3/4": "0,1/3,3/4,1",
		"2/3:1":   "0,1/3,2/3,1", // the last of three equal parts
		"0:2/3":   "0,2/3,1",
	} {
		q := Around(mustParse(t, in))
		if q.String() != want {
			t.Errorf("Around(%s): got %s, want %s", in, q, want)
		}
		if _, err := q.Index(mustParse(t, in)); err != nil {
			t.Errorf("Around(%s) = %s does not hold it: %v", in, q, err)
		}
	}
}
