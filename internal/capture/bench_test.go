package capture

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
	"time"
)

// benchLog makes a log of about size bytes in the given format: 8 sessions
// of point selects, ranges, sums and updates, as scripts/bench-capture.sh
// makes them.
func benchLog(format string, size int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	ts := int64(1700654400)
	for i := 0; b.Len() < size; i++ {
		id := i%8 + 1
		a := rng.IntN(99900) + 1
		var q string
		switch r := rng.IntN(10); {
		case r < 4:
			q = fmt.Sprintf("SELECT c FROM sbtest1 WHERE id = %d", a)
		case r < 7:
			q = fmt.Sprintf("SELECT id, k FROM sbtest1 WHERE id BETWEEN %d AND %d ORDER BY id", a, a+9)
		case r < 9:
			q = fmt.Sprintf("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN %d AND %d", a, a+99)
		default:
			q = fmt.Sprintf("UPDATE sbtest1 SET k = k + 1 WHERE id = %d", a)
		}
		if i%50 == 0 {
			ts++
		}
		switch format {
		case "slow":
			fmt.Fprintf(&b, "# Time: %s\n# User@Host: app[app] @ localhost []  Id: %d\n# Query_time: 0.000%03d  Lock_time: 0.000001 Rows_sent: 1  Rows_examined: 10\nSET timestamp=%d;\n%s;\n",
				time.Unix(ts, int64(i%1000)*1000).UTC().Format("2006-01-02T15:04:05.000000Z"), id, rng.IntN(1000), ts, q)
		default:
			fmt.Fprintf(&b, "%s\t%5d Query\t%s\n", time.Unix(ts, int64(i%1000)*1000).UTC().Format("2006-01-02T15:04:05.000000Z"), id, q)
		}
	}
	return b.Bytes()
}

func benchCapture(b *testing.B, format string) {
	data := benchLog(format, 32<<20)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		w, err := NewWriter(io.Discard, []string{"x"}, time.Unix(0, 0))
		if err != nil {
			b.Fatal(err)
		}
		sum := NewSummary()
		c := NewCapturer(w.Write)
		c.OnRecord = sum.Add
		if err := c.Run(context.Background(), []Source{{Name: "x", Format: format, R: bytes.NewReader(data)}}); err != nil {
			b.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCaptureSlow and BenchmarkCaptureGeneral read 32 MB of log into a
// capture, as "shakedown capture LOG -o FILE --summary" does; MB/s is the
// figure to watch (scripts/bench-capture.sh times the command itself).
func BenchmarkCaptureSlow(b *testing.B)    { benchCapture(b, "slow") }
func BenchmarkCaptureGeneral(b *testing.B) { benchCapture(b, "general") }
