package monitor

import (
	"bytes"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/runner"
)

// runnerExporter is one runner's exporter after one run whose latencies
// are vals.
func runnerExporter(segment string, vals []time.Duration) *Exporter {
	e := NewExporter()
	e.StartRun(RunInfo{Workload: "oltp_point_select", Target: "db", Threads: 4, Segment: segment})
	h := histogram.New()
	for _, v := range vals {
		h.Record(v)
	}
	e.ObserveInterval(runner.Interval{At: time.Second, Threads: 4, QPS: float64(len(vals)), ReadQPS: float64(len(vals)), Latency: h})
	e.EndRun(nil, h)
	return e
}

// latencies makes n values spread from about 100 µs to 50 ms, as a
// long-tailed load would, different for every seed.
func latencies(n int, seed uint64) []time.Duration {
	out := make([]time.Duration, n)
	x := seed*2654435761 + 1
	for i := range out {
		x = x*6364136223846793005 + 1442695040888963407
		u := float64(x>>11) / (1 << 53)
		out[i] = time.Duration(100e3 * math.Exp(u*u*6.2)) // 100 µs .. ~50 ms
	}
	return out
}

// scrape fetches e's metrics in the protocol-buffer format, as a
// Prometheus with native histograms does.
func scrape(t *testing.T, e *Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	m, err := ServeMetrics("127.0.0.1:0", e)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	req, _ := http.NewRequest("GET", m.URL(), nil)
	req.Header.Set("Accept", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/vnd.google.protobuf") {
		t.Fatalf("content type: got %q, want the protocol-buffer format", ct)
	}
	body, _ := io.ReadAll(resp.Body)
	dec := expfmt.NewDecoder(bytes.NewReader(body), expfmt.NewFormat(expfmt.TypeProtoDelim))
	out := map[string]*dto.MetricFamily{}
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		out[mf.GetName()] = &mf
	}
	return out
}

// nativeBuckets expands a native histogram's spans and deltas into counts
// by bucket index.
func nativeBuckets(t *testing.T, h *dto.Histogram) map[int]int64 {
	t.Helper()
	out := map[int]int64{}
	idx, di := int32(0), 0
	var count int64
	for _, sp := range h.GetPositiveSpan() {
		idx += sp.GetOffset()
		for range sp.GetLength() {
			count += h.GetPositiveDelta()[di]
			di++
			if count > 0 {
				out[int(idx)] = count
			}
			idx++
		}
	}
	return out
}

// The native histogram holds every value, and the latencies of several
// runners added bucket by bucket, as Prometheus's sum() does, are exactly
// the native histogram of one process that saw every value.
func TestNativeHistogramsAdd(t *testing.T) {
	parts := [][]time.Duration{latencies(5000, 1), latencies(3000, 2), latencies(7000, 3)}
	var all []time.Duration
	sum := map[int]int64{}
	var count uint64
	for i, vals := range parts {
		all = append(all, vals...)
		mf := scrape(t, runnerExporter([]string{"1/3", "2/3", "3/3"}[i], vals))["shakedown_client_latency_seconds"]
		if mf == nil || mf.GetType() != dto.MetricType_HISTOGRAM {
			t.Fatalf("runner %d: no latency histogram in the scrape", i+1)
		}
		h := mf.GetMetric()[0].GetHistogram()
		if h.GetSchema() != nativeSchema {
			t.Errorf("schema: got %d, want %d", h.GetSchema(), nativeSchema)
		}
		if len(h.GetBucket()) != len(latencyBuckets) {
			t.Errorf("classic buckets: got %d, want %d beside the native ones", len(h.GetBucket()), len(latencyBuckets))
		}
		var inBuckets int64
		for k, n := range nativeBuckets(t, h) {
			sum[k] += n
			inBuckets += n
		}
		if inBuckets != int64(len(vals)) || h.GetSampleCount() != uint64(len(vals)) {
			t.Errorf("runner %d: got %d values in buckets and count %d, want %d", i+1, inBuckets, h.GetSampleCount(), len(vals))
		}
		count += h.GetSampleCount()
	}
	whole := scrape(t, runnerExporter("", all))["shakedown_client_latency_seconds"].GetMetric()[0].GetHistogram()
	want := nativeBuckets(t, whole)
	if len(want) != len(sum) || count != whole.GetSampleCount() {
		t.Fatalf("runners added: got %d buckets and count %d, want %d and %d", len(sum), count, len(want), whole.GetSampleCount())
	}
	for k, n := range want {
		if sum[k] != n {
			t.Errorf("bucket %d: runners add up to %d, want %d", k, sum[k], n)
		}
	}

	// The p99 read from the added buckets is within a bucket of the exact
	// p99 of every value.
	exact := histogram.New()
	for _, v := range all {
		exact.Record(v)
	}
	p99 := nativeQuantile(sum, 0.99)
	ex := exact.Percentile(99).Seconds()
	if rel := math.Abs(p99-ex) / ex; rel > 0.045 {
		t.Errorf("p99 from the added buckets: got %gs, want within 4.5%% (one bucket) of the exact %gs", p99, ex)
	}
}

// nativeQuantile is the upper bound of the bucket that holds quantile q.
func nativeQuantile(b map[int]int64, q float64) float64 {
	var total int64
	lo, hi := math.MaxInt, math.MinInt
	for k, n := range b {
		total += n
		lo, hi = min(lo, k), max(hi, k)
	}
	rank := int64(math.Ceil(q * float64(total)))
	var seen int64
	for k := lo; k <= hi; k++ {
		seen += b[k]
		if seen >= rank {
			return math.Exp2(float64(k) / (1 << nativeSchema))
		}
	}
	return math.NaN()
}

func TestSegmentLabel(t *testing.T) {
	var b bytes.Buffer
	if err := runnerExporter("2/4", latencies(10, 1)).Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.Contains(line, `segment="2/4"`) {
			t.Errorf("got %q, want every sample labelled segment=\"2/4\"", line)
		}
	}
	b.Reset()
	if err := runnerExporter("", latencies(10, 1)).Write(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "segment=") {
		t.Errorf("a process with the whole load: got a segment label, want none")
	}
}

func TestNativeIndex(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want int
	}{
		{1, 0}, {2, 16}, {0.5, -16}, {1.01, 1}, {math.Exp2(3.0 / 16), 3}, {math.Exp2(3.0/16) * 1.0001, 4},
	} {
		if got := nativeIndex(tc.v); got != tc.want {
			t.Errorf("nativeIndex(%g): got %d, want %d", tc.v, got, tc.want)
		}
	}
}

// BenchmarkExporterInterval is the exporter's cost per interval: the
// runner hands it one merged histogram a second, never a query.
func BenchmarkExporterInterval(b *testing.B) {
	e := NewExporter()
	e.StartRun(RunInfo{Workload: "oltp_point_select", Threads: 64})
	iv := histogram.New()
	for _, v := range latencies(20000, 1) {
		iv.Record(v)
	}
	b.ResetTimer()
	for i := range b.N {
		e.ObserveInterval(runner.Interval{At: time.Duration(i+1) * time.Second, QPS: 20000, Latency: iv})
	}
}

// BenchmarkExporterScrape is the cost of one scrape (text format).
func BenchmarkExporterScrape(b *testing.B) {
	e := runnerExporter("1/4", latencies(200000, 1))
	var buf bytes.Buffer
	b.ResetTimer()
	for range b.N {
		buf.Reset()
		if err := e.Write(&buf); err != nil {
			b.Fatal(err)
		}
	}
}
