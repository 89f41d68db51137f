package slap

import (
	"context"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/target"
)

// Results are the concurrency levels the last Run measured, in order, as
// result documents (for --json and --store): QPS as slap prints it
// (queries over the summed time of the iterations), latency over every
// statement, per-statement figures and connect times. Transactions are not
// counted (mysqlslap has no notion of them), so TPS is 0. Empty unless
// --json or --store was given.
func (b *Bench) Results() []*result.Result { return b.levels }

// wantResults says whether any option asks for result documents.
func (b *Bench) wantResults() bool { return b.o.JSON != "" || b.o.Store != "" }

// server finds what the main connection talks to, for result documents.
func (s *session) server(ctx context.Context) target.Server {
	srv, err := target.Detect(ctx, s.main)
	if err != nil {
		return target.Server{}
	}
	return srv
}

// levelResult makes lv a result document.
func (s *session) levelResult(lv *levelStats, started time.Time, srv target.Server) (*result.Result, error) {
	b, o := s.b, s.b.o
	var total time.Duration
	for _, t := range lv.times {
		total += t
	}
	sec := total.Seconds()
	per := func(n int64) float64 {
		if sec <= 0 {
			return 0
		}
		return math.Round(float64(n)/sec*100) / 100
	}
	name := o.Name
	if name == "" {
		name = b.tgt.Redacted()
	}
	r := &result.Result{
		SchemaVersion: result.SchemaVersion,
		Workload:      "slap",
		Options:       s.options(lv),
		Target:        result.Target{Name: name, URL: b.tgt.Redacted(), Version: srv.Version, Flavour: string(srv.Flavour)},
		Threads:       lv.clients,
		StartedAt:     started.UTC().Truncate(time.Second),
		TimeS:         math.Round(sec*1e4) / 1e4,
		Queries:       result.Queries{Total: lv.queries},
		QPS:           per(lv.queries),
		Percentile:    95,
		Client:        lv.client,
	}
	r.Target.SetConnection(result.ClientWire, s.dialer.TLS())
	if lv.stopped != nil {
		r.Error = lv.stopped.Error()
		r.Interrupted = errors.Is(lv.stopped, ErrInterrupted)
	}
	if c := lv.dataCheck; c != nil {
		// In the document too, so that a stored level is failed.
		r.DataCheck = c
		if f := c.Finding(); f != "" && r.Error == "" {
			r.Error = f
		} else if f != "" {
			r.Error += "; " + f
		}
	}
	all := histogram.New()
	errs := map[uint16]int64{}
	for _, st := range lv.outcome() {
		all.Merge(st.Latency)
		for c, n := range st.Errors {
			errs[c] += n
		}
		r.Statements = append(r.Statements, result.StatementStats{
			Name: st.Name, Count: st.Latency.Count(), QPS: per(st.Latency.Count()),
			Errors: result.ErrorsOf(st.Errors), LatencyMS: result.LatencyOf(st.Latency, 95),
		})
	}
	for c, n := range lv.errors {
		errs[c] += n
	}
	r.Errors = result.ErrorsOf(errs)
	r.LatencyMS = result.LatencyOf(all, 95)
	snap, err := all.Snapshot()
	if err != nil {
		return nil, err
	}
	r.Histogram = snap
	if lv.connects > 0 {
		r.Connect = &result.ConnectStats{Mode: "iteration", Count: lv.connects, PerSec: per(lv.connects), LatencyMS: result.LatencyOf(lv.connLat, 95)}
	}
	return r, nil
}

// options are the level's mysqlslap options that shape the load.
func (s *session) options(lv *levelStats) map[string]string {
	o := s.b.o
	m := map[string]string{
		"concurrency":       strconv.Itoa(lv.clients),
		"iterations":        strconv.Itoa(o.Iterations),
		"number-of-queries": strconv.FormatUint(o.NumberOfQueries, 10),
		"create-schema":     o.CreateSchema,
	}
	if o.Query != "" {
		m["query"] = o.Query
	}
	if o.AutoGenerate {
		m["auto-generate-sql-load-type"] = o.LoadType
	}
	if lv.engine != "" {
		m["engine"] = lv.engine
	}
	if o.Commit > 0 {
		m["commit"] = strconv.Itoa(o.Commit)
	}
	return m
}
