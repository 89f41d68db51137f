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
	"strings"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/runner"
)

// RunInfo labels the run an Exporter reports on.
type RunInfo struct {
	Workload string
	Target   string // the target's display name; never a URL with a password
	Threads  int
}

// Exporter holds the latest client and server figures and writes them in
// the Prometheus text exposition format (version 0.0.4). Client counters
// are cumulative over every run it has seen, so one Exporter can serve a
// whole sweep. It is safe for concurrent use.
type Exporter struct {
	mu sync.Mutex

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

	sample    Sample
	hasSample bool
	sources   []SourceStatus
}

// NewExporter returns an empty exporter.
func NewExporter() *Exporter {
	return &Exporter{errorsByCode: map[string]float64{}, latency: histogram.New(), live: histogram.New()}
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
func (e *Exporter) ObserveSample(s Sample, sources []SourceStatus) {
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
// histogram.
var latencyBuckets = []float64{
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10,
}

// ServeHTTP writes the exposition.
func (e *Exporter) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	e.Write(w)
}

// Write writes the exposition to w.
func (e *Exporter) Write(w io.Writer) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := &promWriter{w: w}

	running := 0.0
	if e.running {
		running = 1
	}
	p.family("shakedown_run_info", "gauge", "the run being measured (1), labelled by workload, target and threads")
	if e.runs > 0 {
		p.sample("shakedown_run_info", labels("workload", e.info.Workload, "target", e.info.Target, "threads", strconv.Itoa(e.info.Threads)), 1)
	}
	p.family("shakedown_run_running", "gauge", "1 while a run is in progress")
	p.sample("shakedown_run_running", "", running)
	p.family("shakedown_runs_started_total", "counter", "runs started by this process")
	p.sample("shakedown_runs_started_total", "", float64(e.runs))

	p.family("shakedown_client_queries_total", "counter", "statements the client completed, by sysbench's classification")
	for i, t := range []string{"read", "write", "other"} {
		p.sample("shakedown_client_queries_total", labels("type", t), e.queries[i])
	}
	p.family("shakedown_client_transactions_total", "counter", "events (transactions) the client completed")
	p.sample("shakedown_client_transactions_total", "", e.transactions)
	p.family("shakedown_client_errors_total", "counter", "errors the client counted, every code, updated each interval")
	p.sample("shakedown_client_errors_total", "", e.errors)
	p.family("shakedown_client_errors_by_code_total", "counter", "errors by MySQL error code, updated when a run ends")
	codes := make([]string, 0, len(e.errorsByCode))
	for c := range e.errorsByCode {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		p.sample("shakedown_client_errors_by_code_total", labels("code", c), e.errorsByCode[c])
	}
	p.family("shakedown_client_reconnects_total", "counter", "connections the client had to open again")
	p.sample("shakedown_client_reconnects_total", "", e.reconnects)

	if e.hasIV {
		iv := e.iv
		p.family("shakedown_client_threads", "gauge", "client threads running in the latest interval")
		p.sample("shakedown_client_threads", "", float64(iv.Threads))
		p.family("shakedown_client_queries_per_second", "gauge", "client statements per second in the latest interval")
		p.sample("shakedown_client_queries_per_second", "", iv.QPS)
		p.family("shakedown_client_transactions_per_second", "gauge", "client transactions per second in the latest interval")
		p.sample("shakedown_client_transactions_per_second", "", iv.TPS)
		p.family("shakedown_client_interval_latency_seconds", "gauge", "event latency in the latest interval: avg, max and the run's --percentile")
		p.sample("shakedown_client_interval_latency_seconds", labels("stat", "avg"), iv.LatencyAvg/1000)
		p.sample("shakedown_client_interval_latency_seconds", labels("stat", "max"), iv.LatencyMax/1000)
		p.sample("shakedown_client_interval_latency_seconds", labels("stat", "percentile"), iv.LatencyPct/1000)
	}

	p.family("shakedown_client_latency_seconds", "histogram", "event latency, updated every interval")
	all := histogram.New()
	all.Merge(e.latency)
	all.Merge(e.live)
	bars := all.Bars()
	var cum int64
	bi := 0
	for _, le := range latencyBuckets {
		for bi < len(bars) && bars[bi].Value.Seconds() <= le {
			cum += bars[bi].Count
			bi++
		}
		p.sample("shakedown_client_latency_seconds_bucket", labels("le", formatFloat(le)), float64(cum))
	}
	p.sample("shakedown_client_latency_seconds_bucket", labels("le", "+Inf"), float64(all.Count()))
	p.sample("shakedown_client_latency_seconds_sum", "", all.Sum().Seconds())
	p.sample("shakedown_client_latency_seconds_count", "", float64(all.Count()))

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
			p.family(c.Prom, "gauge", help)
			p.sample(c.Prom, "", v)
		}
		p.family("shakedown_monitor_source_up", "gauge", "1 when the source was read at the latest sample, 0 when it failed")
		for _, st := range e.sources {
			up := 1.0
			if _, failed := e.sample.Failed[st.Name]; failed {
				up = 0
			}
			p.sample("shakedown_monitor_source_up", labels("source", st.Name), up)
		}
		p.family("shakedown_monitor_sample_seconds", "gauge", "length of the latest server sample's interval")
		p.sample("shakedown_monitor_sample_seconds", "", e.sample.ElapsedS)
	}
	return p.err
}

// promWriter writes families; the first error sticks.
type promWriter struct {
	w   io.Writer
	err error
}

func (p *promWriter) family(name, typ, help string) {
	if p.err != nil {
		return
	}
	_, p.err = fmt.Fprintf(p.w, "# HELP %s %s\n# TYPE %s %s\n", name, escapeHelp(help), name, typ)
}

func (p *promWriter) sample(name, labels string, v float64) {
	if p.err != nil {
		return
	}
	_, p.err = fmt.Fprintf(p.w, "%s%s %s\n", name, labels, formatFloat(v))
}

// labels formats name/value pairs as {a="x",b="y"}.
func labels(kv ...string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		b.WriteString(escapeLabel(kv[i+1]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(s) }

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// MetricsServer serves an Exporter over HTTP at /metrics.
type MetricsServer struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
}

// ServeMetrics listens on addr (HOST:PORT; port 0 picks a free one) and
// serves e at /metrics until Close.
func ServeMetrics(addr string, e *Exporter) (*MetricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for metrics on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", e)
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
