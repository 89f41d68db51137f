package monitor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runner"
)

// RunInfo labels the run an Exporter reports on.
type RunInfo struct {
	Workload string
	Target   string // the target's display name; never a URL with a password
	Threads  int
	// Segment is the runner's part of a load split over many processes
	// (I/N or FROM:TO); every metric carries it as the "segment" label.
	// Empty for a process that drives the whole load.
	Segment string
}

// Exporter holds the latest client and server figures and exposes them to
// Prometheus. Client counters and the latency histogram are cumulative over
// every run it has seen, so one Exporter can serve a whole sweep, and a
// Prometheus scraping many runners can add them up. The runner feeds it
// once per interval, never per query. It is safe for concurrent use.
type Exporter struct {
	mu sync.Mutex

	reg     *prometheus.Registry
	handler http.Handler
	created time.Time // when the cumulative figures started

	info    RunInfo
	running bool
	runs    int
	lastAt  time.Duration

	queries      [3]float64 // read, write, other
	transactions float64
	errors       float64
	reconnects   float64
	errorsByCode map[string]float64
	iv           runner.Interval
	hasIV        bool
	latency      *histogram.Histogram
	live         *histogram.Histogram // the running run's intervals so far

	sample    result.Sample
	hasSample bool
	sources   []result.SourceStatus
}

// NewExporter returns an empty exporter.
func NewExporter() *Exporter {
	e := &Exporter{errorsByCode: map[string]float64{}, latency: histogram.New(), live: histogram.New(), created: time.Now()}
	e.reg = prometheus.NewRegistry()
	e.reg.MustRegister(e)
	e.handler = promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return e
}

// StartRun says a run began.
func (e *Exporter) StartRun(info RunInfo) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.info = info
	e.running = true
	e.runs++
	e.lastAt = 0
	e.hasIV = false
}

// ObserveInterval adds one of the runner's intervals to the client counters.
func (e *Exporter) ObserveInterval(iv runner.Interval) {
	e.mu.Lock()
	defer e.mu.Unlock()
	sec := (iv.At - e.lastAt).Seconds()
	e.lastAt = iv.At
	if sec <= 0 {
		return
	}
	e.queries[0] += math.Round(iv.ReadQPS * sec)
	e.queries[1] += math.Round(iv.WriteQPS * sec)
	e.queries[2] += math.Round(iv.OtherQPS * sec)
	e.transactions += math.Round(iv.TPS * sec)
	e.errors += math.Round(iv.ErrorsPS * sec)
	e.reconnects += math.Round(iv.ReconnPS * sec)
	if iv.Latency != nil {
		e.live.Merge(iv.Latency)
	}
	iv.Latency = nil
	e.iv = iv
	e.hasIV = true
}

// ObserveSample sets the latest server sample and how the sources fare.
func (e *Exporter) ObserveSample(s result.Sample, sources []result.SourceStatus) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sample = s
	e.hasSample = true
	e.sources = sources
}

// EndRun says the run ended, with its errors by code and its latency
// histogram (merged into the exported one; nil adds nothing).
func (e *Exporter) EndRun(errorsByCode map[string]int64, latency *histogram.Histogram) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.running = false
	for code, n := range errorsByCode {
		e.errorsByCode[code] += float64(n)
	}
	// The run's whole histogram replaces what its intervals brought (the
	// last, partial interval is only in the whole).
	if latency != nil {
		e.latency.Merge(latency)
	} else {
		e.latency.Merge(e.live)
	}
	e.live.Reset()
}

// latencyBuckets are the upper bounds, in seconds, of the exported latency
// histogram's classic buckets, for a Prometheus that does not take native
// histograms.
var latencyBuckets = []float64{
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10,
}

// nativeSchema is the resolution of the exported native histogram: schema
// 4 puts 16 buckets in every doubling, each about 4.4% wide, so a quantile
// Prometheus computes over any number of runners is within about 2% of the
// exact one. Native buckets have the same bounds in every runner, which is
// what lets Prometheus add them.
const nativeSchema = 4

// ServeHTTP writes the exposition in the format the scraper asks for: the
// protocol-buffer format carries the native histogram, the text format
// only its classic buckets.
func (e *Exporter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.handler.ServeHTTP(w, r)
}

// Write writes the exposition to w in the text format (version 0.0.4).
func (e *Exporter) Write(w io.Writer) error {
	mfs, err := e.reg.Gather()
	if err != nil {
		return fmt.Errorf("gather metrics: %w", err)
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return fmt.Errorf("write metrics: %w", err)
		}
	}
	return nil
}

// Describe sends nothing: which families exist depends on what the
// exporter has seen, so it is an unchecked collector.
func (e *Exporter) Describe(chan<- *prometheus.Desc) {}

// Collect sends the current figures. The registry calls it at each scrape.
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var cl prometheus.Labels
	if e.info.Segment != "" {
		cl = prometheus.Labels{"segment": e.info.Segment}
	}
	p := &collector{ch: ch, labels: cl}

	running := 0.0
	if e.running {
		running = 1
	}
	if e.runs > 0 {
		p.gauge("shakedown_run_info", "the run being measured (1), labelled by workload, target and threads", 1,
			"workload", e.info.Workload, "target", e.info.Target, "threads", strconv.Itoa(e.info.Threads))
	}
	p.gauge("shakedown_run_running", "1 while a run is in progress", running)
	p.counter("shakedown_runs_started_total", "runs started by this process", float64(e.runs))

	for i, t := range []string{"read", "write", "other"} {
		p.counter("shakedown_client_queries_total", "statements the client completed, by sysbench's classification", e.queries[i], "type", t)
	}
	p.counter("shakedown_client_transactions_total", "events (transactions) the client completed", e.transactions)
	p.counter("shakedown_client_errors_total", "errors the client counted, every code, updated each interval", e.errors)
	codes := make([]string, 0, len(e.errorsByCode))
	for c := range e.errorsByCode {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		p.counter("shakedown_client_errors_by_code_total", "errors by MySQL error code, updated when a run ends", e.errorsByCode[c], "code", c)
	}
	p.counter("shakedown_client_reconnects_total", "connections the client had to open again", e.reconnects)

	if e.hasIV {
		iv := e.iv
		p.gauge("shakedown_client_threads", "client threads running in the latest interval", float64(iv.Threads))
		p.gauge("shakedown_client_queries_per_second", "client statements per second in the latest interval", iv.QPS)
		p.gauge("shakedown_client_transactions_per_second", "client transactions per second in the latest interval", iv.TPS)
		const help = "event latency in the latest interval: avg, max and the run's --percentile"
		p.gauge("shakedown_client_interval_latency_seconds", help, iv.LatencyAvg/1000, "stat", "avg")
		p.gauge("shakedown_client_interval_latency_seconds", help, iv.LatencyMax/1000, "stat", "max")
		p.gauge("shakedown_client_interval_latency_seconds", help, iv.LatencyPct/1000, "stat", "percentile")
	}

	all := histogram.New()
	all.Merge(e.latency)
	all.Merge(e.live)
	p.send(latencyMetric(prometheus.NewDesc("shakedown_client_latency_seconds",
		"event latency, updated every interval; a native histogram (schema 4) with classic buckets beside it", nil, cl), all, e.created))

	if e.hasSample {
		for _, c := range columns {
			v, ok := e.sample.Values[c.Key]
			if !ok {
				continue
			}
			help := c.Help
			if c.Unit == "%" {
				help += " (percent)"
			}
			if c.PromScale != 0 {
				v *= c.PromScale
			}
			p.gauge(c.Prom, help, v)
		}
		for _, st := range e.sources {
			up := 1.0
			if _, failed := e.sample.Failed[st.Name]; failed {
				up = 0
			}
			p.gauge("shakedown_monitor_source_up", "1 when the source was read at the latest sample, 0 when it failed", up, "source", st.Name)
		}
		p.gauge("shakedown_monitor_sample_seconds", "length of the latest server sample's interval", e.sample.ElapsedS)
	}
}

// collector sends const metrics, each with the exporter's constant labels.
type collector struct {
	ch     chan<- prometheus.Metric
	labels prometheus.Labels
}

func (p *collector) gauge(name, help string, v float64, kv ...string) {
	p.metric(name, help, prometheus.GaugeValue, v, kv)
}

func (p *collector) counter(name, help string, v float64, kv ...string) {
	p.metric(name, help, prometheus.CounterValue, v, kv)
}

// metric sends one sample; kv are its own label names and values, in pairs.
func (p *collector) metric(name, help string, typ prometheus.ValueType, v float64, kv []string) {
	var names, values []string
	for i := 0; i+1 < len(kv); i += 2 {
		names = append(names, kv[i])
		values = append(values, kv[i+1])
	}
	desc := prometheus.NewDesc(name, help, names, p.labels)
	m, err := prometheus.NewConstMetric(desc, typ, v, values...)
	if err != nil {
		m = prometheus.NewInvalidMetric(desc, err)
	}
	p.send(m)
}

func (p *collector) send(m prometheus.Metric) { p.ch <- m }

// latencyMetric is h as one histogram with both a native and a classic
// representation: Prometheus keeps the native one when it takes native
// histograms, and the classic buckets otherwise. Each HDR bucket goes
// whole to the native and classic buckets its lowest value falls in; an HDR
// bucket is at most a thousandth of its value wide, far finer than either.
func latencyMetric(desc *prometheus.Desc, h *histogram.Histogram, created time.Time) prometheus.Metric {
	native := map[int]int64{}
	classic := make([]uint64, len(latencyBuckets))
	for _, b := range h.Buckets() {
		sec := b.From.Seconds()
		native[nativeIndex(sec)] += b.Count
		for i, le := range latencyBuckets {
			if sec <= le {
				classic[i] += uint64(b.Count)
			}
		}
	}
	m, err := prometheus.NewConstNativeHistogram(desc, uint64(h.Count()), h.Sum().Seconds(), native, nil, 0,
		nativeSchema, prometheus.DefNativeHistogramZeroThreshold, created)
	if err != nil {
		return prometheus.NewInvalidMetric(desc, err)
	}
	buckets := make([]*dto.Bucket, len(latencyBuckets))
	for i, le := range latencyBuckets {
		buckets[i] = &dto.Bucket{UpperBound: proto.Float64(le), CumulativeCount: proto.Uint64(classic[i])}
	}
	return withClassic{Metric: m, buckets: buckets}
}

// nativeIndex is the native histogram bucket of v > 0 at nativeSchema:
// bucket i holds (2^((i-1)/16), 2^(i/16)].
func nativeIndex(v float64) int {
	return int(math.Ceil(math.Log2(v) * (1 << nativeSchema)))
}

// withClassic adds classic buckets to a native histogram.
type withClassic struct {
	prometheus.Metric
	buckets []*dto.Bucket
}

func (w withClassic) Write(out *dto.Metric) error {
	if err := w.Metric.Write(out); err != nil {
		return err
	}
	out.Histogram.Bucket = w.buckets
	return nil
}

// MetricsServer serves metrics over HTTP at /metrics: an Exporter's, or
// another handler's (the follower's).
type MetricsServer struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
}

// ServeMetrics listens on addr (HOST:PORT; port 0 picks a free one) and
// serves h (an Exporter, or promhttp's handler of a registry) at /metrics
// until Close.
func ServeMetrics(addr string, h http.Handler) (*MetricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for metrics on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "shakedown: metrics at /metrics")
	})
	m := &MetricsServer{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		_ = m.srv.Serve(ln) // returns when Close shuts it down
	}()
	return m, nil
}

// Addr is the address it listens on.
func (m *MetricsServer) Addr() string { return m.ln.Addr().String() }

// URL is where the metrics are.
func (m *MetricsServer) URL() string { return "http://" + m.Addr() + "/metrics" }

// Close stops serving, letting a scrape in progress finish for up to a
// second.
func (m *MetricsServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := m.srv.Shutdown(ctx)
	<-m.done
	if errors.Is(err, context.DeadlineExceeded) {
		err = m.srv.Close()
	}
	return err
}
