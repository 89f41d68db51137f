package result

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/stats"
)

// CrossCheck compares the client's throughput with what the server counted
// over the same seconds.
type CrossCheck struct {
	// FromS and ToS bound the compared span, in seconds from the start of
	// measurement: the server samples that lie wholly inside it, so that
	// neither side's ramp-up or wind-down skews the comparison.
	FromS float64 `json:"from_s"`
	ToS   float64 `json:"to_s"`
	// ClientQPS is the client's statements per second over the span.
	ClientQPS float64 `json:"client_qps"`
	// ServerQPS is the rate of the server's Questions over the span, the
	// sampler's own statements left out.
	ServerQPS float64 `json:"server_qps"`
	// Ratio is ServerQPS / ClientQPS.
	Ratio float64 `json:"ratio"`
	// Mismatch is set when they differ by more than noise (Tolerance).
	Mismatch bool   `json:"mismatch"`
	Note     string `json:"note"`
	// Counter is the server counter compared with: Questions unless the
	// workload says another matches what it sends.
	Counter string `json:"counter,omitempty"`
	// NotApplicable is set when no server counter matches what the
	// workload sends: nothing was compared, and Note says why.
	NotApplicable bool `json:"not_applicable,omitempty"`
}

// Rate is the client's rate over one interval that ends At after the start
// of measurement (exactly, not rounded as Interval.AtS is).
type Rate struct {
	At  time.Duration
	QPS float64
}

// NoCounter is RunConfig.Counter for a workload whose statements no
// server counter matches: the cross-check does not apply.
const NoCounter = "-"

// counterKeys maps the server counters a cross-check can use to the
// sample figure that holds their rate.
var counterKeys = map[string]string{"": "qps", "Questions": "qps", "Com_admin_commands": "admin_commands"}

// CheckCounter cross-checks the client's intervals against the rate of the
// named server counter ("" or Questions: the statements, less the
// sampler's own). With NoCounter, or a counter the sampler does not
// follow, it says the check does not apply. It returns nil when either
// side is missing.
func CheckCounter(s *Series, intervals []Rate, counter string) *CrossCheck {
	if s == nil || len(intervals) == 0 {
		return nil
	}
	key, ok := counterKeys[counter]
	if counter == NoCounter || !ok {
		return &CrossCheck{NotApplicable: true, Note: "does not apply: no server counter matches what this workload sends"}
	}
	cc := checkKey(s, intervals, key)
	if counter != "" && counter != "Questions" {
		cc.Counter = counter
		cc.Note = strings.Replace(cc.Note, "statements", counter, 1)
	}
	return cc
}

// Tolerance is how far apart client and server QPS may be before the
// cross-check flags them: sampling edges and the interval clocks of two
// processes differ by a few tenths of a percent on a steady load, so 5% is
// well clear of noise and still catches another client or a proxy.
const Tolerance = 0.05

// maxTolerance bounds how far an unsteady load widens Tolerance: a proxy,
// a cache or another client usually shows as more than that.
const maxTolerance = 0.25

// tolerance is how far apart the two sides may be for a load whose
// per-second client rates are these: Tolerance for a steady load; for an
// unsteady one (CV above 10%) wider by half the CV, up to maxTolerance,
// because the server's samples and the client's intervals do not start
// and end at the same instant, and a rate that moves a lot from second to
// second makes that edge matter. It also returns the CV.
func tolerance(rates []float64) (tol, cv float64) {
	if len(rates) < 2 {
		return Tolerance, 0
	}
	var mean, v float64
	for _, r := range rates {
		mean += r
	}
	mean /= float64(len(rates))
	for _, r := range rates {
		v += (r - mean) * (r - mean)
	}
	if mean <= 0 {
		return Tolerance, 0
	}
	cv = math.Sqrt(v/float64(len(rates)-1)) / mean
	if cv <= 0.10 {
		return Tolerance, cv
	}
	return math.Min(maxTolerance, Tolerance+cv/2), cv
}

// minQPSDiff keeps near-idle runs from being flagged over a handful of
// statements.
const minQPSDiff = 2.0

// CheckQPS cross-checks the client's intervals (from the runner, times from
// the start of measurement) against the server series (shifted to the same
// origin). It returns nil when either side is missing.
func CheckQPS(s *Series, intervals []Rate) *CrossCheck {
	if s == nil || len(intervals) == 0 {
		return nil
	}
	return checkKey(s, intervals, "qps")
}

// checkKey compares the client's QPS with the sample figure key.
func checkKey(s *Series, intervals []Rate, key string) *CrossCheck {
	end := intervals[len(intervals)-1].At.Seconds()
	from, to := math.Inf(1), math.Inf(-1)
	var sq, st float64
	for _, smp := range s.Samples {
		v, ok := smp.Values[key]
		lo := smp.AtS - smp.ElapsedS
		if !ok || smp.ElapsedS <= 0 || lo < 0 || smp.AtS > end {
			continue
		}
		from, to = math.Min(from, lo), math.Max(to, smp.AtS)
		sq += v * smp.ElapsedS
		st += smp.ElapsedS
	}
	if st <= 0 {
		return &CrossCheck{Note: "run too short to cross-check: no server sample lies wholly inside the measured time"}
	}
	cc := &CrossCheck{FromS: stats.Round(from, 3), ToS: stats.Round(to, 3), ServerQPS: stats.Round(sq/st, 2)}
	var cq, ct float64
	var rates []float64
	prev := 0.0
	for _, iv := range intervals {
		at := iv.At.Seconds()
		lo, hi := math.Max(prev, from), math.Min(at, to)
		prev = at
		if hi <= lo {
			continue
		}
		cq += iv.QPS * (hi - lo)
		ct += hi - lo
		rates = append(rates, iv.QPS)
	}
	if ct <= 0 {
		cc.Note = "no client interval overlaps the server samples"
		return cc
	}
	cc.ClientQPS = stats.Round(cq/ct, 2)
	if cc.ClientQPS > 0 {
		cc.Ratio = stats.Round(cc.ServerQPS/cc.ClientQPS, 3)
	}
	diff := cc.ServerQPS - cc.ClientQPS
	tol, cv := tolerance(rates)
	switch {
	case cc.ClientQPS > 0 && math.Abs(diff)/cc.ClientQPS <= tol:
		cc.Note = fmt.Sprintf("agree within %.0f%%", tol*100)
		if tol > Tolerance {
			cc.Note += fmt.Sprintf(" (the client's rate varied, per-second CV %.0f%%, so the edges of the samples blur the check)", cv*100)
		}
	case math.Abs(diff) <= minQPSDiff:
		// A ratio of two near-idle rates says nothing.
		cc.Note = fmt.Sprintf("too few statements to cross-check: %.2f a second from the client, %.2f at the server", cc.ClientQPS, cc.ServerQPS)
	case diff > 0:
		cc.Mismatch = true
		cc.Note = "the server ran more statements than this client sent: another client is loading it, or it counts statements the client does not see"
	default:
		cc.Mismatch = true
		cc.Note = "the server counted fewer statements than this client sent: a proxy, pooler or cache answers some, or this is not the server the load reaches"
	}
	return cc
}
