package slap

import (
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/clock"
)

// TestTrackerTotals: the status line knows the queries of the whole test
// ahead, so that it can say the time left.
func TestTrackerTotals(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int64
	}{
		{"number of queries shared by the clients", []string{"--query=SELECT 1", "--concurrency=4,8", "--iterations=3", "--number-of-queries=800"}, 3*800 + 3*800},
		{"one pass each", []string{"--query=SELECT 1;SELECT 2", "--delimiter=;", "--concurrency=5", "--iterations=2"}, 2 * 5 * 2},
		{"engines multiply", []string{"--query=SELECT 1", "--concurrency=2", "--number-of-queries=10", "--engine=innodb,myisam"}, 2 * 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Load(parse(t, tc.args...), noEnv)
			if err != nil {
				t.Fatal(err)
			}
			if got := b.newTracker(nil, false, clock.Real{}).total; got != tc.want {
				t.Errorf("got %d queries, want %d", got, tc.want)
			}
		})
	}
}

// TestTrackerLine: a test that is not on a terminal gets a plain status
// line every 10 s with the queries done, the pace and the time left; on a
// terminal the line is rewritten every second in place and taken away at
// the end.
func TestTrackerLine(t *testing.T) {
	b, err := Load(parse(t, "--query=SELECT 1", "--concurrency=4", "--iterations=2", "--number-of-queries=500"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		live bool
		want string
	}{
		{"plain", false, "slap: concurrency 4, iteration 1 of 2: 250 of 1000 queries, 25 qps, elapsed 0:10, ~0:30 left\n"},
		{"live", true, "\r\033[Kslap: concurrency 4, iteration 1 of 2: 25 of 1000 queries, 25 qps, elapsed 0:01, ~0:39 left"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			clk := clock.NewFake(start)
			var out strings.Builder
			tr := b.newTracker(&out, tc.live, clk)
			tr.at("concurrency %d, iteration %d of %d", 4, 1, 2)
			for s := 1; s <= 10; s++ {
				for range 25 {
					tr.count()
				}
				clk.Advance(time.Second)
				tr.tick(clk.Now())
			}
			tr.line.Clear()
			got := out.String()
			if tc.live {
				if n := strings.Count(got, "\r\033[Kslap: "); n != 10 || !strings.HasPrefix(got, tc.want) || !strings.HasSuffix(got, "\r\033[K") {
					t.Errorf("got %q (%d lines), want 10 lines in place starting %q, taken away at the end", got, n, tc.want)
				}
				return
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
