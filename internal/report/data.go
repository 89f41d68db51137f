package report

import (
	"encoding/csv"
	"io"
	"strconv"
	"time"

	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/stats"
)

// JSONSchemaVersion is the version of the JSON report's layout. Version 2
// added each figure's comparison (interval, p-value, state), the method,
// A/A noise, drift and unsteady runs; every field of version 1 is kept.
const JSONSchemaVersion = 2

// jsonReport is the JSON report. Field names are stable.
type jsonReport struct {
	SchemaVersion int            `json:"schema_version"`
	Sweep         jsonSweep      `json:"sweep"`
	Targets       []jsonTarget   `json:"targets"`
	Rows          []jsonRow      `json:"rows"`
	Peaks         []jsonPeak     `json:"peaks"`
	Unfinished    []jsonRun      `json:"unfinished"`
	Differing     []jsonVariable `json:"differing_variables"`
	VerdictRule   string         `json:"verdict_rule"`
	Method        jsonMethod     `json:"method"`
	AA            []AANoise      `json:"aa_pairs"`
	Drift         jsonDrift      `json:"control_drift"`
	Unsteady      []jsonUnsteady `json:"unsteady_runs"`
	// Splits are the steps merged from split loads' runners (version 2,
	// added without changing any other field).
	Splits []jsonSplit `json:"split_loads"`
	// MachineChanged, in a comparison with a baseline, lists the figures
	// that moved only as far as every other target beside them (added
	// without changing any other field).
	MachineChanged []string `json:"machine_changed,omitempty"`
	// DrivenDifferently lists the compared cells in which the client drove
	// the control's runs and the candidate's in different ways (added
	// without changing any other field).
	DrivenDifferently []string `json:"driven_differently,omitempty"`
	// DataNotes say what the sweep did to the data besides its steps, and
	// RunAgain how many earlier runs of steps run again are left out
	// (added without changing any other field).
	DataNotes []string `json:"data_notes,omitempty"`
	RunAgain  int      `json:"runs_run_again,omitempty"`
	// Scalability is the Universal Scalability Law fitted to each target's
	// QPS, for workloads of at least 6 thread levels (added without
	// changing any other field).
	Scalability []jsonScaling `json:"scalability,omitempty"`
	// HostDifferences are the host settings that differ between the
	// targets' first runs, and Stalls the runs' stall captures (added
	// without changing any other field).
	HostDifferences []jsonHostDiff `json:"host_differences,omitempty"`
	Stalls          []jsonStall    `json:"stalls,omitempty"`
	// HostCounters are the host's counters during each target's runs
	// (added without changing any other field).
	HostCounters []HostCounters `json:"host_counters,omitempty"`
}

type jsonMethod struct {
	NoiseThreshold float64 `json:"noise_threshold"`
	Confidence     float64 `json:"confidence"`
	Ratio          string  `json:"ratio"`
	Interval       string  `json:"interval"`
	Test           string  `json:"test"`
	MinRuns        int     `json:"min_runs_for_a_verdict"`
}

type jsonDrift struct {
	stats.Trend
	Drifting bool `json:"drifting"`
}

type jsonUnsteady struct {
	Step     int    `json:"step"`
	Target   string `json:"target"`
	Workload string `json:"workload"`
	Threads  int    `json:"threads"`
	Repeat   int    `json:"repeat"`
	stats.Steadiness
}

// jsonComparison is one figure of a candidate against the control.
type jsonComparison struct {
	Ratio         *float64 `json:"ratio"`
	Low           *float64 `json:"ci_low"`
	High          *float64 `json:"ci_high"`
	Confidence    *float64 `json:"ci_confidence"`
	P             *float64 `json:"p_value"`
	State         string   `json:"state"`
	Note          string   `json:"note"`
	ControlRuns   int      `json:"control_runs"`
	CandidateRuns int      `json:"candidate_runs"`
	// RunsNeeded estimates the runs per side that would settle an
	// inconclusive comparison.
	RunsNeeded int `json:"runs_needed,omitempty"`
}

func newJSONComparison(c stats.Comparison) *jsonComparison {
	j := &jsonComparison{State: string(c.State), Note: c.Note(), ControlRuns: c.Control.N, CandidateRuns: c.Candidate.N, RunsNeeded: c.Needed}
	if c.Ratio > 0 {
		j.Ratio = ptr(stats.Round(c.Ratio, 4))
	}
	if c.Interval {
		j.Low, j.High, j.Confidence = ptr(stats.Round(c.Low, 4)), ptr(stats.Round(c.High, 4)), ptr(stats.Round(c.Confidence, 4))
	}
	if c.State != stats.NoVerdict {
		j.P = ptr(stats.Round(c.P, 5))
	}
	return j
}

type jsonSweep struct {
	ID         int64     `json:"id"`
	Name       string    `json:"name"`
	Status     string    `json:"status"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Steps      int       `json:"steps"`
	ClientHost string    `json:"client_host"`
	Tool       string    `json:"tool"`
	TimeS      int       `json:"time_s"`
	Events     int64     `json:"events,omitempty"`
	WarmupS    int       `json:"warmup_s"`
	Repeats    int       `json:"repeats"`
	Auto       bool      `json:"repeats_auto,omitempty"`
	MaxRepeats int       `json:"max_repeats,omitempty"`
	CooldownS  int       `json:"cooldown_s"`
	Order      string    `json:"order"`
}

type jsonTarget struct {
	Name    string `json:"name"`
	Role    string `json:"role"`
	URL     string `json:"url"`
	Version string `json:"server_version"`
	Flavour string `json:"flavour"`
	// Connection is the client path and TLS, when the results recorded them.
	Connection string `json:"connection,omitempty"`
}

type jsonLatency struct {
	Avg float64 `json:"avg"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

type jsonRow struct {
	Target      string `json:"target"`
	Role        string `json:"role"`
	Workload    string `json:"workload"`
	Threads     int    `json:"threads"`
	Runs        int    `json:"runs"`
	Failed      int    `json:"failed_runs"`
	Interrupted int    `json:"interrupted_runs"`
	// LostUpdates counts the runs whose data check found lost updates
	// (among the failed): comparisons with the row are "wrong: lost
	// updates".
	LostUpdates int `json:"lost_update_runs,omitempty"`
	Unsteady    int `json:"unsteady_runs"`
	// ClientBound counts the runs the client limited: comparisons with
	// the row are inconclusive (client-bound).
	ClientBound int         `json:"client_bound_runs,omitempty"`
	QPS         *float64    `json:"qps"`
	QPSMin      *float64    `json:"qps_min"`
	QPSMax      *float64    `json:"qps_max"`
	QPSCVPct    *float64    `json:"qps_cv_pct"`
	TPS         *float64    `json:"tps"`
	LatencyMS   jsonLatency `json:"latency_ms"`
	Errors      int64       `json:"errors"`
	// ErrorsByCode is keyed by the MySQL error number, as in the result
	// document.
	ErrorsByCode map[string]int64 `json:"errors_by_code,omitempty"`
	// Ratio and Verdict are set for candidates only; Ratio is null when
	// either side has no data. They are QPS's, as in VsControl.
	Ratio   *float64 `json:"ratio_vs_control,omitempty"`
	Verdict string   `json:"verdict,omitempty"`
	AA      bool     `json:"aa,omitempty"`
	// VsControl holds each figure's comparison, for candidates only.
	VsControl map[string]*jsonComparison `json:"vs_control,omitempty"`
}

type jsonPeak struct {
	Workload string  `json:"workload"`
	Target   string  `json:"target"`
	QPS      float64 `json:"qps"`
	Threads  int     `json:"threads"`
}

type jsonRun struct {
	Step     int    `json:"step"`
	Target   string `json:"target"`
	Workload string `json:"workload"`
	Threads  int    `json:"threads"`
	Repeat   int    `json:"repeat"`
	Status   string `json:"status"`
	Degraded bool   `json:"degraded,omitempty"`
	Error    string `json:"error"`
}

type jsonVariable struct {
	Name   string            `json:"name"`
	Values map[string]string `json:"values"`
}

func ptr(x float64) *float64 { return &x }

func (r *Report) jsonRows() []jsonRow {
	var rows []jsonRow
	for _, w := range r.Workloads {
		for _, row := range w.Rows {
			jr := jsonRow{Target: row.Target, Role: row.Role, Workload: w.Name, Threads: row.Threads,
				Runs: row.QPS.N, Failed: row.Failed, Interrupted: row.Interrupted, LostUpdates: row.LostUpdates, Unsteady: len(row.Unsteady), ClientBound: len(row.ClientBound), Errors: row.Errors, ErrorsByCode: row.ErrorsByCode}
			if row.QPS.N > 0 {
				jr.QPS, jr.QPSMin, jr.QPSMax = ptr(stats.Round(row.QPS.Median, 2)), ptr(stats.Round(row.QPS.Min, 2)), ptr(stats.Round(row.QPS.Max, 2))
				jr.QPSCVPct = ptr(stats.Round(row.QPS.CV*100, 2))
				jr.TPS = ptr(stats.Round(row.TPS, 2))
				jr.LatencyMS = jsonLatency{Avg: stats.Round(row.LatAvg, 3), P95: stats.Round(row.LatP95, 3), P99: stats.Round(row.LatP99, 3), Max: stats.Round(row.LatMax, 3)}
			}
			if c := row.Compared; c != nil {
				jr.Verdict = string(c.Verdict)
				if c.Verdict == Wrong {
					jr.Verdict = c.QPS.Note() // "wrong: lost updates"
				}
				if c.Verdict != stats.NoData && c.Verdict != Wrong {
					jr.Ratio = ptr(stats.Round(c.Ratio, 4))
				}
				_, jr.AA = r.AAPairs[row.Target]
				jr.VsControl = map[string]*jsonComparison{"qps": newJSONComparison(c.QPS), "tps": newJSONComparison(c.TPS),
					"p95_ms": newJSONComparison(c.P95), "p99_ms": newJSONComparison(c.P99)}
			}
			rows = append(rows, jr)
		}
	}
	return rows
}

// WriteJSON writes the report as one JSON document: a row per target,
// workload and thread level, with ratio_vs_control and verdict for
// candidates.
func WriteJSON(w io.Writer, r *Report) error {
	sw := r.Sweep
	s := sw.Settings
	doc := jsonReport{
		SchemaVersion: JSONSchemaVersion,
		Sweep: jsonSweep{ID: sw.ID, Name: sw.Name, Status: sw.Status, StartedAt: sw.StartedAt, FinishedAt: sw.FinishedAt,
			Steps: sw.Steps, ClientHost: sw.ClientHost, Tool: sw.Tool, TimeS: s.TimeS, Events: s.Events, WarmupS: s.WarmupS,
			Repeats: s.Repeats, Auto: s.AutoRepeats, MaxRepeats: s.MaxRepeats, CooldownS: s.CooldownS, Order: s.Order},
		Rows:        r.jsonRows(),
		Targets:     []jsonTarget{},
		Peaks:       []jsonPeak{},
		Unfinished:  []jsonRun{},
		Differing:   []jsonVariable{},
		VerdictRule: r.rule(),
		Method: jsonMethod{NoiseThreshold: r.Threshold, Confidence: r.Confidence, Ratio: "candidate median / control median",
			Interval: "exact distribution-free interval of the ratio (Moses, from the Mann-Whitney U distribution, on the logarithms)",
			Test:     "Mann-Whitney U, two-sided", MinRuns: stats.MinRuns},
		AA:                r.AA(),
		Drift:             jsonDrift{Trend: r.Drift, Drifting: r.Drift.Drifting(r.Threshold)},
		Unsteady:          []jsonUnsteady{},
		Splits:            r.jsonSplits(),
		MachineChanged:    r.Moved,
		DrivenDifferently: r.drivenCells(),
		Scalability:       r.jsonScaling(),
	}
	if doc.AA == nil {
		doc.AA = []AANoise{}
	}
	for _, u := range r.unsteadyRuns() {
		doc.Unsteady = append(doc.Unsteady, jsonUnsteady{Step: u.Run.Step, Target: u.Run.Target, Workload: u.Run.Workload,
			Threads: u.Run.Threads, Repeat: u.Run.Repeat, Steadiness: u.Steady})
	}
	if doc.Rows == nil {
		doc.Rows = []jsonRow{}
	}
	for _, t := range r.Targets {
		doc.Targets = append(doc.Targets, jsonTarget{Name: t.Name, Role: t.Role, URL: t.URL, Version: t.Version, Flavour: t.Flavour,
			Connection: r.Connections[t.Name]})
	}
	for _, w := range r.Workloads {
		for _, p := range w.Peaks {
			doc.Peaks = append(doc.Peaks, jsonPeak{Workload: w.Name, Target: p.Target, QPS: stats.Round(p.QPS, 2), Threads: p.Threads})
		}
	}
	for _, run := range r.Unfinished {
		doc.Unfinished = append(doc.Unfinished, jsonRun{Step: run.Step, Target: run.Target, Workload: run.Workload,
			Threads: run.Threads, Repeat: run.Repeat, Status: run.Status, Degraded: run.Degraded, Error: run.Error})
	}
	doc.DataNotes, doc.RunAgain = r.dataLines(), len(r.RunAgain)
	for _, k := range r.Differing {
		v := jsonVariable{Name: k, Values: map[string]string{}}
		for _, t := range r.Targets {
			v.Values[t.Name] = t.Variables[k]
		}
		doc.Differing = append(doc.Differing, v)
	}
	doc.HostDifferences, doc.Stalls = r.jsonHost()
	if r.Host != nil {
		doc.HostCounters = r.Host.Counters
	}
	return outfile.WriteJSON(w, doc)
}

// WriteCSV writes one row per target, workload and thread level.
func WriteCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"sweep", "workload", "target", "role", "threads", "runs", "failed_runs", "qps", "qps_min", "qps_max",
		"qps_cv_pct", "tps", "latency_avg_ms", "latency_p95_ms", "latency_p99_ms", "latency_max_ms", "errors", "ratio_vs_control", "verdict",
		"ratio_ci_low", "ratio_ci_high", "p_value", "runs_needed", "p95_ratio", "p95_state", "p99_ratio", "p99_state", "interrupted_runs", "unsteady_runs"})
	num := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	for _, row := range r.jsonRows() {
		lat := func(x float64) string {
			if row.QPS == nil {
				return ""
			}
			return strconv.FormatFloat(x, 'f', -1, 64)
		}
		var lo, hi, p, need, p95r, p95s, p99r, p99s string
		if c := row.VsControl; c != nil {
			lo, hi, p = num(c["qps"].Low), num(c["qps"].High), num(c["qps"].P)
			if c["qps"].RunsNeeded > 0 {
				need = strconv.Itoa(c["qps"].RunsNeeded)
			}
			p95r, p95s, p99r, p99s = num(c["p95_ms"].Ratio), c["p95_ms"].State, num(c["p99_ms"].Ratio), c["p99_ms"].State
		}
		_ = cw.Write([]string{strconv.FormatInt(r.Sweep.ID, 10), row.Workload, row.Target, row.Role, strconv.Itoa(row.Threads),
			strconv.Itoa(row.Runs), strconv.Itoa(row.Failed), num(row.QPS), num(row.QPSMin), num(row.QPSMax), num(row.QPSCVPct),
			num(row.TPS), lat(row.LatencyMS.Avg), lat(row.LatencyMS.P95), lat(row.LatencyMS.P99), lat(row.LatencyMS.Max),
			strconv.FormatInt(row.Errors, 10), num(row.Ratio), row.Verdict, lo, hi, p, need, p95r, p95s, p99r, p99s,
			strconv.Itoa(row.Interrupted), strconv.Itoa(row.Unsteady)})
	}
	cw.Flush()
	return cw.Error()
}
