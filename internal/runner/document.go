package runner

import (
	"cmp"
	"math"
	"strconv"
	"time"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stats"
)

// The stored document belongs to package result, which imports no
// producer; the runner converts what it measured into it here, so that a
// change to the runner's types cannot change the document unseen.

// Document makes the stored document from what the runner measured.
func (o *Outcome) Document(workload string, threads int, pct float64) (*result.Result, error) {
	sec := o.Elapsed.Seconds()
	per := func(n int64) float64 {
		if sec <= 0 {
			return 0
		}
		return float64(n) / sec
	}
	r := &result.Result{
		SchemaVersion: result.SchemaVersion,
		Workload:      workload,
		Threads:       threads,
		TimeS:         stats.Round(sec, 4),
		Interrupted:   o.Interrupted,
		Queries:       result.Queries{Read: o.Reads, Write: o.Writes, Other: o.Others, Total: o.Queries()},
		Transactions:  o.Events,
		Errors:        result.Errors{Total: o.ErrorCount(), ByCode: map[string]int64{}},
		Reconnects:    o.Reconnects,
		QPS:           stats.Round(per(o.Queries()), 2),
		TPS:           stats.Round(per(o.Events), 2),
		Percentile:    pct,
		Intervals:     make([]result.Interval, len(o.Intervals)),
	}
	for i, iv := range o.Intervals {
		r.Intervals[i] = iv.Stored()
	}
	if o.Err != nil {
		r.Error = o.Err.Error()
	}
	if a := o.Availability; a.ReconnectAttempts > 0 || a.ReconnectFailures > 0 {
		r.Degraded = o.Degraded()
		r.Availability = &result.Availability{ReconnectAttempts: a.ReconnectAttempts, ReconnectFailures: a.ReconnectFailures,
			UnavailableS: stats.Round(a.Unavailable.Seconds(), 3)}
		if a.FirstError != nil {
			r.Availability.FirstError = a.FirstError.Error()
		}
	}
	for code, n := range o.Errors {
		r.Errors.ByCode[strconv.Itoa(int(code))] = n
	}
	r.LatencyMS = result.LatencyOf(o.Latency, pct)
	snap, err := o.Latency.Snapshot()
	if err != nil {
		return nil, err
	}
	r.Histogram = snap
	r.Fairness = o.fairness()
	r.Client = o.Client.Stored()
	o.connectAndStatements(r)
	return r, nil
}

func (o *Outcome) fairness() result.Fairness {
	n := float64(len(o.ThreadEvents))
	if n == 0 {
		return result.Fairness{}
	}
	var se, st float64
	for i := range o.ThreadEvents {
		se += float64(o.ThreadEvents[i])
		st += o.ThreadTime[i].Seconds()
	}
	me, mt := se/n, st/n
	var ve, vt float64
	for i := range o.ThreadEvents {
		ve += sq(float64(o.ThreadEvents[i]) - me)
		vt += sq(o.ThreadTime[i].Seconds() - mt)
	}
	return result.Fairness{
		EventsAvg: stats.Round(me, 4), EventsStddev: stats.Round(math.Sqrt(ve/n), 2),
		TimeAvgS: stats.Round(mt, 4), TimeStddevS: stats.Round(math.Sqrt(vt/n), 2),
	}
}

func sq(x float64) float64 { return x * x }

// connectAndStatements adds the connect figures (when the run opened
// connections while measuring) and the per-statement figures to r.
func (o *Outcome) connectAndStatements(r *result.Result) {
	sec := o.Elapsed.Seconds()
	per := func(n int64) float64 {
		if sec <= 0 {
			return 0
		}
		return stats.Round(float64(n)/sec, 2)
	}
	if o.ConnectMode != Persistent || o.Connects > 0 {
		h := o.ConnectLatency
		if h == nil {
			h = histogram.New()
		}
		r.Connect = &result.ConnectStats{
			Mode:      o.ConnectMode.String(),
			Count:     o.Connects,
			PerSec:    per(o.Connects),
			LatencyMS: result.LatencyOf(h, r.Percentile),
		}
	}
	for _, s := range o.Statements {
		n := s.Latency.Count()
		r.Statements = append(r.Statements, result.StatementStats{
			Name:      s.Name,
			Count:     n,
			QPS:       per(n),
			Errors:    result.ErrorsOf(s.Errors),
			LatencyMS: result.LatencyOf(s.Latency, r.Percentile),
		})
	}
}

// KeepHistograms adds the connect and per-statement histograms of o to r,
// which a merge of split runners needs.
func (o *Outcome) KeepHistograms(r *result.Result) error {
	if r.Connect != nil && o.ConnectLatency != nil {
		s, err := o.ConnectLatency.Snapshot()
		if err != nil {
			return err
		}
		r.Connect.Histogram = &s
	}
	for i, st := range o.Statements {
		if i >= len(r.Statements) || st.Latency == nil {
			break
		}
		s, err := st.Latency.Snapshot()
		if err != nil {
			return err
		}
		r.Statements[i].Histogram = &s
	}
	return nil
}

// Stored is the stored form of the interval.
func (iv Interval) Stored() result.Interval {
	return result.Interval{
		AtS: iv.AtS, Threads: iv.Threads, TPS: iv.TPS, QPS: iv.QPS,
		ReadQPS: iv.ReadQPS, WriteQPS: iv.WriteQPS, OtherQPS: iv.OtherQPS,
		LatencyPct: iv.LatencyPct, LatencyAvg: iv.LatencyAvg, LatencyMax: iv.LatencyMax,
		ErrorsPS: iv.ErrorsPS, ReconnPS: iv.ReconnPS, ConnPS: iv.ConnPS, Queue: iv.Queue,
	}
}

// HDR records the interval exactly, while its latency histogram is valid
// (during OnInterval or OnLastInterval).
func (iv Interval) HDR() (result.IntervalHDR, error) {
	h := result.IntervalHDR{
		StartUS: iv.Began.UnixMicro(), EndUS: iv.Ended.UnixMicro(), Threads: iv.Threads,
		Events: iv.Events, Reads: iv.Reads, Writes: iv.Writes, Others: iv.Others, Errors: iv.Errors, Reconnects: iv.Reconnects,
	}
	lat := iv.Latency
	if lat == nil {
		lat = histogram.New()
	}
	snap, err := lat.Snapshot()
	if err != nil {
		return result.IntervalHDR{}, err
	}
	h.Latency = snap
	return h, nil
}

// Rates are the client's rates of the intervals, for a cross-check with
// the server's counters.
func Rates(ivs []Interval) []result.Rate {
	out := make([]result.Rate, len(ivs))
	for i, iv := range ivs {
		out[i] = result.Rate{At: iv.At, QPS: iv.QPS}
	}
	return out
}

// StoredIO is how p drives a load of threads, as a result records it
// (result.Client.IO): the tuning only where a benchmark set some.
func StoredIO(p client.IOPlan, threads int) *result.ClientIO {
	io := &result.ClientIO{Asked: cmp.Or(p.Mode, "auto"), Mode: "polled"}
	switch {
	case p.IO.Looped:
		io.Mode, io.Loops, io.Held, io.BoundToCPUs = "loop", min(p.Loops, threads), p.Hold, p.Bind(threads)
	case p.IO.Blocking:
		io.Mode = "blocking"
	}
	if t := p.Tuning; t != (client.IOTuning{}) {
		io.Tuning = &result.IOTuning{Loops: t.Loops, Bind: t.Bind.String(), Burst: t.Burst, Watch: t.Watch.String()}
		if t.HoldOff {
			io.Tuning.Hold = "off"
		}
	}
	return io
}

// Stored is the stored form of the client's figures; nil when the runner
// measured nothing (no span).
func (c ClientLoad) Stored() *result.Client {
	if c.Wall <= 0 {
		return nil
	}
	return &result.Client{
		Bound:          c.Bound(),
		CPUPct:         stats.Round(c.CPUShare()*100, 1),
		CPUS:           stats.Round(c.CPU.Seconds(), 3),
		WaitPct:        stats.Round((c.DemandShare()-c.CPUShare())*100, 1),
		Cores:          c.Cores,
		LagP50MS:       result.Millis(c.Lag),
		LagP99MS:       result.Millis(c.LagP99),
		ReplyLagMS:     result.Millis(c.ReplyLag),
		QueryLatencyMS: stats.Round(float64(c.QueryLatency)/float64(time.Millisecond), 4),
		QueueLagS:      stats.Round(c.QueueLag.Seconds(), 3),
	}
}
