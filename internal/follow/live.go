package follow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/shakedown/shakedown/internal/monitor"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/progress"
	"github.com/shakedown/shakedown/internal/target"
)

// Live is a follower's outputs while it runs: the progress line (through
// set), JSON lines and Prometheus metrics, as Flags ask.
type Live struct {
	set     func(string)
	mu      sync.Mutex
	json    io.Writer
	closeFn func() error
	metrics *monitor.MetricsServer
	gauges  map[string]prometheus.Gauge
	lastErr error
}

// Start opens what fl asks for: set receives the progress line (nil:
// none), stdout is where --json - writes.
func (fl *Flags) Start(stdout io.Writer, set func(string)) (*Live, error) {
	l := &Live{set: set}
	switch fl.JSON {
	case "":
	case "-":
		l.json = stdout
	default:
		if err := outfile.Check(outfile.File{Flag: "--json", Path: fl.JSON}); err != nil {
			return nil, err
		}
		f, err := os.Create(fl.JSON)
		if err != nil {
			return nil, outfile.PlainPathError(err)
		}
		l.json, l.closeFn = f, f.Close
	}
	if fl.MetricsAddr != "" {
		reg := prometheus.NewRegistry()
		l.gauges = map[string]prometheus.Gauge{}
		for name, help := range map[string]string{
			"lag_seconds":    "seconds the target is behind the source, from the last applied event's time",
			"lag_bytes":      "bytes of the source's binary log not yet applied (-1: in another file)",
			"events":         "binary log events read",
			"transactions":   "transactions applied",
			"rows":           "row changes applied",
			"skipped":        "events of tables not followed",
			"ddl":            "DDL statements applied",
			"reconnects":     "streams or batches started again after a failure",
			"position":       "the offset of the saved position in its binary log file",
			"rows_per_sec":   "row changes applied per second over the last interval",
			"events_per_sec": "events read per second over the last interval",
		} {
			g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "shakedown", Subsystem: "follow", Name: name, Help: help})
			reg.MustRegister(g)
			l.gauges[name] = g
		}
		m, err := monitor.ServeMetrics(fl.MetricsAddr, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		if err != nil {
			l.Close()
			return nil, err
		}
		l.metrics = m
	}
	return l, nil
}

// MetricsURL is where the metrics are served ("" when they are not).
func (l *Live) MetricsURL() string {
	if l.metrics == nil {
		return ""
	}
	return l.metrics.URL()
}

// Update takes the follower's latest figures (Options.OnProgress).
func (l *Live) Update(s Stats) {
	if l.set != nil {
		l.set(s.String())
	}
	if l.gauges != nil {
		for name, v := range map[string]float64{
			"lag_seconds": s.Lag, "lag_bytes": float64(s.LagBytes), "events": float64(s.Events),
			"transactions": float64(s.Txns), "rows": float64(s.Rows), "skipped": float64(s.Skipped),
			"ddl": float64(s.DDL), "reconnects": float64(s.Reconnects), "position": float64(s.Position.Pos),
			"rows_per_sec": s.RowsPerSec, "events_per_sec": s.EventsPerSec,
		} {
			l.gauges[name].Set(v)
		}
	}
	l.line(map[string]any{"progress": s})
}

func (l *Live) line(v any) {
	if l.json == nil {
		return
	}
	b, err := json.Marshal(v)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		_, err = fmt.Fprintf(l.json, "%s\n", b)
	}
	if err != nil && l.lastErr == nil {
		l.lastErr = fmt.Errorf("--json: %w", err)
	}
}

// Close writes the summary line (sum may be nil) and closes what Start
// opened; it returns the first write error.
func (l *Live) Close(sum ...*Summary) error {
	if len(sum) > 0 && sum[0] != nil {
		l.line(map[string]any{"summary": sum[0]})
	}
	if l.metrics != nil {
		l.metrics.Close()
	}
	if l.closeFn != nil {
		if err := l.closeFn(); err != nil && l.lastErr == nil {
			l.lastErr = err
		}
	}
	return l.lastErr
}

// Run runs a follower with the live outputs fl asks for, and prints its
// summary on stdout (unless the JSON lines go there).
func (fl *Flags) Run(ctx context.Context, stdout, stderr io.Writer, src, dst *target.Target, opts Options) error {
	var line *progress.Line // nil: no progress line
	set := func(string) {}
	if fl.Progress > 0 {
		line = progress.New(stderr, progress.IsTerminal(stderr), fl.Progress, time.Now)
		set = line.Set
	}
	live, err := fl.Start(stdout, set)
	if err != nil {
		return err
	}
	if u := live.MetricsURL(); u != "" {
		fmt.Fprintln(stderr, "follow: metrics at", u)
	}
	opts.OnProgress, opts.Log = live.Update, stderr
	var v *verifier
	if fl.VerifyEvery > 0 {
		v = &verifier{every: fl.VerifyEvery, src: src, dst: dst, pairs: pairsOf(src, dst, opts.Databases), print: set}
		if line != nil {
			v.print = line.Println
		}
		opts.OnProgress = func(s Stats) { live.Update(s); v.progress(s) }
		vctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { v.loop(vctx); close(done) }()
		defer func() { stop(); <-done }()
	}
	sum, err := Run(ctx, src, dst, opts)
	if v != nil && sum != nil {
		v.mu.Lock()
		sum.Verifies = v.runs
		v.mu.Unlock()
	}
	line.Clear()
	err = errors.Join(err, live.Close(sum))
	if sum != nil && fl.JSON != "-" {
		fmt.Fprint(stdout, sum.Text())
	}
	if err == nil && sum != nil && len(sum.Verifies) > 0 && !sum.Verifies[len(sum.Verifies)-1].Equal {
		return ErrDiffers
	}
	return err
}

// pairsOf is the databases followed: pairs, or the URLs' databases.
func pairsOf(src, dst *target.Target, pairs []Pair) []Pair {
	if len(pairs) > 0 {
		return pairs
	}
	d := dst.DB
	if d == "" {
		d = src.DB
	}
	return []Pair{{src.DB, d}}
}
