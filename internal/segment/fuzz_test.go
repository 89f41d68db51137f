package segment

import "testing"

// FuzzParse: whatever --segment is given, Parse returns a segment inside
// 0..1 that reads back the same from its String and its Label, or an error;
// it never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"1/4", "4/4", "0:1", "1/4:1/2", "0.25:50%", "0/0", "1/", ":", "9223372036854775807/9223372036854775807", "1e9:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := Parse(s)
		if err != nil {
			return
		}
		if g.From.Cmp(g.To) >= 0 || g.From.Num < 0 || g.To.Num > g.To.Den {
			t.Fatalf("Parse(%q) = %s: want 0 <= FROM < TO <= 1", s, g)
		}
		for _, text := range []string{g.String(), Around(g).Label(g)} {
			back, err := Parse(text)
			if err != nil || back != g {
				t.Fatalf("Parse(%q) = %s, but Parse(%q) = %v, %v", s, g, text, back, err)
			}
		}
		rest := []Segment{g}
		if g.From.Num != 0 {
			rest = append(rest, Segment{From: Frac{0, 1}, To: g.From})
		}
		if g.To.Num != g.To.Den {
			rest = append(rest, Segment{From: g.To, To: Frac{1, 1}})
		}
		if err := Cover(rest); err != nil {
			t.Fatalf("%s with its complement: %v", g, err)
		}
		for _, v := range []int64{0, 1, 7, 1000, 1 << 50} {
			var sum int64
			for _, r := range rest {
				sum += r.Share(v)
			}
			if sum != v {
				t.Fatalf("%s and its complement share %d as %d", g, v, sum)
			}
		}
	})
}

// FuzzParseSequence: an accepted sequence covers 0..1 exactly once and
// reads back the same from its String.
func FuzzParseSequence(f *testing.F) {
	for _, s := range []string{"0,1", "0,1/4,1/2,3/4,1", "0,0.5,1", "0,1/2,1/4,1", "0,1/2", "1/4,1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseSequence(s)
		if err != nil {
			return
		}
		if err := Cover(q.Segments()); err != nil {
			t.Fatalf("ParseSequence(%q) = %s, which does not cover: %v", s, q, err)
		}
		back, err := ParseSequence(q.String())
		if err != nil || back.String() != q.String() {
			t.Fatalf("ParseSequence(%q) = %s, read back as %v, %v", s, q, back, err)
		}
	})
}
