// Package result defines the stored documents: the result document of one
// run (stable, versioned JSON), printed the way sysbench does, plus what
// sysbench lacks, and the document vars bisect writes (bisect.go). It
// imports no producer of them.
package result

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/host"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/stats"
)

// SchemaVersion is the version of the result document's layout.
const SchemaVersion = 1

// Result is the document one run yields.
type Result struct {
	SchemaVersion int               `json:"schema_version"`
	Tool          string            `json:"tool"`
	Workload      string            `json:"workload"`
	Options       map[string]string `json:"options"`
	Target        Target            `json:"target"`
	Threads       int               `json:"threads"`
	StartedAt     time.Time         `json:"started_at"`
	TimeS         float64           `json:"time_s"`
	WarmupS       float64           `json:"warmup_s"`
	Rate          float64           `json:"rate,omitempty"`
	// Arrivals is, under a rate, the arrivals that fell due while
	// measuring: the load actually offered.
	Arrivals int64 `json:"arrivals,omitempty"`
	// Unstarted is, under a rate, the arrivals due by the end that no
	// thread started: the backlog the run ended with.
	Unstarted   int64 `json:"unstarted,omitempty"`
	Interrupted bool  `json:"interrupted"`
	// Degraded is set when the server could not be reached for a while
	// during the run: its figures do not measure the server, and reports
	// leave it out of their verdicts.
	Degraded bool `json:"degraded,omitempty"`
	// Availability is set when the run had to reconnect: how often, and
	// for how long the server could not be reached.
	Availability *Availability `json:"availability,omitempty"`
	// Client is what the client spent while measuring and whether that
	// limited the run; nil in documents from before it was recorded.
	Client       *Client            `json:"client,omitempty"`
	Error        string             `json:"error,omitempty"`
	Queries      Queries            `json:"queries"`
	Transactions int64              `json:"transactions"`
	Errors       Errors             `json:"errors"`
	Reconnects   int64              `json:"reconnects"`
	QPS          float64            `json:"qps"`
	TPS          float64            `json:"tps"`
	LatencyMS    Latency            `json:"latency_ms"`
	Percentile   float64            `json:"percentile"`
	Fairness     Fairness           `json:"fairness"`
	Intervals    []Interval         `json:"intervals"`
	Histogram    histogram.Snapshot `json:"histogram"`
	// Connect is set when the run opened connections while measuring
	// (--connect-mode transaction or query, or a workload that connects).
	Connect *ConnectStats `json:"connect,omitempty"`
	// DataCheck is the workload's check of the data after the run (see
	// DataCheck); nil when the workload has none or it was not made.
	DataCheck *DataCheck `json:"data_check,omitempty"`
	// Statements holds per-statement figures (the sql workload).
	Statements []StatementStats `json:"statements,omitempty"`
	// Server is the per-second server (and, for a server on this host,
	// host) series sampled during the run; nil with --monitor=off. Its
	// times share the origin of Intervals.
	Server *Series `json:"server,omitempty"`
	// Host is the run's CPU cost: the client's per query, and the server
	// process's when it runs on this host.
	Host *HostSummary `json:"host,omitempty"`
	// CrossCheck compares the client's QPS with the server's count.
	CrossCheck *CrossCheck `json:"cross_check,omitempty"`
	// Checks are warnings about the run: pre-flight findings, a client /
	// server mismatch.
	Checks []string `json:"checks,omitempty"`
	// Stalls are the stall captures taken during the run (--stall).
	Stalls []Stall `json:"stalls,omitempty"`
	// StallsSkipped counts the times a trigger held but no capture was
	// taken: within the cooldown, during a capture or past --stall-max.
	StallsSkipped int `json:"stalls_skipped,omitempty"`
	// HostFacts are the facts of the server's host, read at the start of
	// the run (host facts' JSON document): all of them for a server on
	// this host, the SQL rows alone for one on another. ClientFacts are
	// this host's then, recorded apart only when the server is elsewhere.
	HostFacts   *host.Facts `json:"host_facts,omitempty"`
	ClientFacts *host.Facts `json:"client_facts,omitempty"`
	// Segment is set on the result of one runner of a split load: which
	// part of the load it drove.
	Segment *Segment `json:"segment,omitempty"`
	// Split is set on a result merged from the runners of a split load:
	// who they were and whether all of them reported.
	Split *Split `json:"split,omitempty"`
}

// Interval is one reporting interval: rates over it, latency in
// milliseconds, and the time of its end from the start of measurement.
type Interval struct {
	AtS        float64 `json:"t_s"`
	Threads    int     `json:"threads"`
	TPS        float64 `json:"tps"`
	QPS        float64 `json:"qps"`
	ReadQPS    float64 `json:"read_qps"`
	WriteQPS   float64 `json:"write_qps"`
	OtherQPS   float64 `json:"other_qps"`
	LatencyPct float64 `json:"latency_pct_ms"`
	LatencyAvg float64 `json:"latency_avg_ms"`
	LatencyMax float64 `json:"latency_max_ms"`
	ErrorsPS   float64 `json:"err_ps"`
	ReconnPS   float64 `json:"reconn_ps"`
	ConnPS     float64 `json:"conn_ps,omitempty"`
	Queue      int64   `json:"queue,omitempty"`
}

// Availability is what a run saw of the server going away while it
// measured.
type Availability struct {
	ReconnectAttempts int64 `json:"reconnect_attempts"`
	ReconnectFailures int64 `json:"reconnect_failures"`
	// UnavailableS is how long at least one thread could not reach the
	// server.
	UnavailableS float64 `json:"unavailable_s"`
	// FirstError is the first failed attempt's error.
	FirstError string `json:"first_error,omitempty"`
}

// Target names what was measured. It never holds a password.
type Target struct {
	Name    string `json:"name"`
	URL     string `json:"url"`
	Version string `json:"server_version"`
	Flavour string `json:"flavour"`
	// Client is the client path the load's connections took: ClientWire
	// or ClientSQL; empty when not recorded (documents from before it was).
	Client string `json:"client,omitempty"`
	// TLS says whether the load's connections were encrypted; nil when not
	// recorded.
	TLS *bool `json:"tls,omitempty"`
}

// Client paths.
const (
	// ClientWire is the lean protocol of package wire.
	ClientWire = "wire"
	// ClientSQL is database/sql with go-sql-driver/mysql.
	ClientSQL = "database/sql"
)

// SetConnection records the client path the load took and whether its
// connections were encrypted.
func (t *Target) SetConnection(client string, tls bool) {
	t.Client, t.TLS = client, &tls
}

// Connection describes the client path and encryption for people, such as
// "wire, TLS"; "" when neither was recorded.
func (t *Target) Connection() string {
	switch {
	case t.Client == "" && t.TLS == nil:
		return ""
	case t.TLS == nil:
		return t.Client
	}
	enc := "no TLS"
	if *t.TLS {
		enc = "TLS"
	}
	if t.Client == "" {
		return enc
	}
	return t.Client + ", " + enc
}

// Queries counts statements as sysbench classifies them.
type Queries struct {
	Read  int64 `json:"read"`
	Write int64 `json:"write"`
	Other int64 `json:"other"`
	Total int64 `json:"total"`
}

// Errors counts errors; ByCode is keyed by the MySQL error number.
type Errors struct {
	Total  int64            `json:"total"`
	ByCode map[string]int64 `json:"by_code"`
}

// Latency is in milliseconds.
type Latency struct {
	Min  float64 `json:"min"`
	Avg  float64 `json:"avg"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Sum  float64 `json:"sum"`
	// Pct is the value at the requested --percentile.
	Pct float64 `json:"pct"`
}

// Fairness is how evenly the threads shared the work.
type Fairness struct {
	EventsAvg    float64 `json:"events_avg"`
	EventsStddev float64 `json:"events_stddev"`
	TimeAvgS     float64 `json:"time_avg_s"`
	TimeStddevS  float64 `json:"time_stddev_s"`
}

func sq(x float64) float64 { return x * x }

// Millis is d in milliseconds, rounded to microseconds, as the document
// stores latencies.
func Millis(d time.Duration) float64 {
	return stats.Round(float64(d)/float64(time.Millisecond), 3)
}

// WriteJSON writes r to w, indented.
func (r *Result) WriteJSON(w io.Writer) error { return outfile.WriteJSON(w, r) }

// Read loads a result document.
func Read(rd io.Reader) (*Result, error) {
	var r Result
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return nil, fmt.Errorf("read result: %w", err)
	}
	return &r, nil
}

// ErrorCodes returns the error codes in r, sorted.
func (r *Result) ErrorCodes() []string { return SortedCodes(r.Errors.ByCode) }

// SortedCodes returns the keys of counts by error code in numeric order,
// codes that are not numbers by their text, so that every listing of
// errors by code reads the same.
func SortedCodes(byCode map[string]int64) []string {
	codes := make([]string, 0, len(byCode))
	for c := range byCode {
		codes = append(codes, c)
	}
	sort.Slice(codes, func(i, j int) bool {
		a, _ := strconv.Atoi(codes[i])
		b, _ := strconv.Atoi(codes[j])
		if a != b {
			return a < b
		}
		return codes[i] < codes[j]
	})
	return codes
}
