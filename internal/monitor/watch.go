package monitor

import (
	"context"
	"database/sql"
	"runtime"
	"time"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/target"
)

// Watch reads s every interval, count times (0: until ctx ends), after a
// first reading kept as the baseline, and hands each sample to write with
// the time its interval was due to end: the line's label is that, not
// when the reading came back, which a loaded server delays. A reading
// that fails is skipped. The end of ctx is how watching normally ends:
// it returns nil.
func Watch(ctx context.Context, s *Sampler, interval time.Duration, count int, write func(result.Sample, time.Time) error) error {
	read := func() (result.Sample, bool) {
		rctx, cancel := context.WithTimeout(ctx, 5*interval+5*time.Second)
		defer cancel()
		return s.Next(rctx)
	}
	read() // the baseline
	start := time.Now()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for n := 0; count == 0 || n < count; n++ {
		var due time.Time
		select {
		case <-ctx.Done():
			return nil
		case due = <-tick.C:
		}
		smp, ok := read()
		if !ok {
			continue
		}
		smp.AtS = float64(smp.At().Sub(start).Round(time.Millisecond)) / float64(time.Second)
		if err := write(smp, due.Round(interval)); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
	return nil
}

// WatchSampler is the sampler watch reads q with, q being a session on
// the target's first endpoint; the target's other hosts, over which a
// load spreads, are read beside it and summed (the caller closes the
// sampler, which closes their connections). For a server on this machine it finds the
// server's process, for its CPU and memory, and sizes the CPU limits to
// this machine's cores; cores >= 0 says how many the server has instead.
// pid is the server process found (0: none); local says whether the
// host columns are there.
func WatchSampler(ctx context.Context, q Querier, tgt *target.Target, cores int) (s *Sampler, pid int, local bool) {
	eps := tgt.Endpoints()
	ep := eps[0]
	opt := Options{}
	var nodes []*sql.DB
	for _, e := range eps[1:] {
		if db, err := tgt.OpenNoDB(e, 1); err == nil {
			db.SetMaxOpenConns(1)
			nodes = append(nodes, db)
			opt.Nodes, opt.NodeNames = append(opt.Nodes, db), append(opt.NodeNames, e.String())
		}
	}
	defer func() { s.closers = nodes }()
	local = ep.Local()
	if local {
		pid, _ = FindServerPID("/proc", ep.Port, PIDFile(ctx, q))
		opt.Host = &HostOptions{ServerPID: pid}
		opt.Limits.Cores = runtime.NumCPU()
	}
	if cores >= 0 {
		opt.Limits.Cores = cores
	}
	opt.MetricsPort = metricsPort(ctx, q, ep)
	return NewSampler(q, opt), pid, local
}

// metricsPort is the status port of a server whose flavour keeps its
// figures there (TiDB), as the server says, or "".
func metricsPort(ctx context.Context, q Querier, ep target.Endpoint) string {
	fq, ok := q.(flavour.Querier)
	if !ok {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, f, err := flavour.Detect(ctx, fq)
	if err != nil || f.StatusCounters() {
		return ""
	}
	return flavour.StatusEndpoint(ctx, f, fq, ep.Host)
}
