package monitor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"syscall"

	"github.com/shakedown/shakedown/internal/flavour"
)

// Needs is what a run is about to ask of the server.
type Needs struct {
	// Threads is the number of load connections (the sampler's own, if any,
	// is already open when the checks run and so counts as connected).
	Threads int
	// PreparedPerThread is how many server-side prepared statements each
	// thread keeps open; 0 when prepared statements are off.
	PreparedPerThread int
	// PreparedExact is set when the workload stated PreparedPerThread; an
	// estimate only warns, so that it never stops a run that would pass.
	PreparedExact bool
	// Tables is how many tables the workload uses.
	Tables int
}

// Finding is one pre-flight check that did not pass.
type Finding struct {
	Check string `json:"check"`
	// Stop is set when the run would fail; otherwise it would only be
	// slower than it should.
	Stop    bool   `json:"stop"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

func (f Finding) String() string {
	level := "warning"
	if f.Stop {
		level = "cannot run"
	}
	return fmt.Sprintf("%s: %s: %s; fix: %s", level, f.Check, f.Message, f.Fix)
}

// ErrPreflight means a pre-flight check found the run could not succeed.
var ErrPreflight = errors.New("pre-flight check failed")

// PreflightError carries the findings that stop a run.
type PreflightError struct{ Findings []Finding }

func (e *PreflightError) Error() string {
	parts := make([]string, len(e.Findings))
	for i, f := range e.Findings {
		parts[i] = f.Check + ": " + f.Message + "; fix: " + f.Fix
	}
	return "pre-flight check failed: " + strings.Join(parts, "; ")
}

func (e *PreflightError) Unwrap() error { return ErrPreflight }

// Stops returns a *PreflightError for the findings that stop a run, or nil.
func Stops(fs []Finding) error {
	var stop []Finding
	for _, f := range fs {
		if f.Stop {
			stop = append(stop, f)
		}
	}
	if len(stop) == 0 {
		return nil
	}
	return &PreflightError{Findings: stop}
}

// Preflight checks the server's limits against what the run needs:
// max_connections against threads, max_prepared_stmt_count against threads
// x statements, table_open_cache against tables x threads, open_files_limit
// against connections and tables, and this process's own open-file limit.
// A variable the server does not have is not checked.
func Preflight(ctx context.Context, q Querier, n Needs, f flavour.Name) ([]Finding, error) {
	vars, err := showGlobal(ctx, q, "VARIABLES", "max_connections", "max_prepared_stmt_count", "table_open_cache", "open_files_limit")
	if err != nil {
		return nil, err
	}
	status, err := showGlobal(ctx, q, "STATUS", "Threads_connected", "Prepared_stmt_count")
	if err != nil {
		return nil, err
	}
	fs := CheckLimits(vars, status, n, f)
	if f, ok := checkClientFiles(n.Threads); ok {
		fs = append(fs, f)
	}
	return fs, nil
}

// CheckLimits is Preflight's judgement over variables and status values
// already read (lower-case variable names, status names as the server
// spells them). A value that means "no limit" on the flavour f (TiDB's
// max_connections = 0) is not checked.
func CheckLimits(vars, status map[string]float64, n Needs, f flavour.Name) []Finding {
	vars = maps.Clone(vars)
	for v, value := range vars {
		if f.NoLimit(v, value) {
			delete(vars, v)
		}
	}
	var fs []Finding
	connected := status["Threads_connected"]
	if maxc, ok := vars["max_connections"]; ok {
		free := maxc - connected
		if float64(n.Threads) > free {
			want := int(connected) + n.Threads + 10
			fs = append(fs, Finding{
				Check:   "max_connections",
				Stop:    true,
				Message: fmt.Sprintf("the server allows %.0f connections and %.0f are open, so %d threads cannot connect", maxc, connected, n.Threads),
				Fix:     fmt.Sprintf("SET GLOBAL max_connections = %d (and in the server's configuration), or lower --threads", want),
			})
		}
	}
	if maxp, ok := vars["max_prepared_stmt_count"]; ok && n.PreparedPerThread > 0 {
		inUse := status["Prepared_stmt_count"]
		need := float64(n.Threads * n.PreparedPerThread)
		if need+inUse > maxp {
			want := int(need+inUse) + 1000
			about := ""
			if !n.PreparedExact {
				about = "up to "
			}
			fs = append(fs, Finding{
				Check:   "max_prepared_stmt_count",
				Stop:    n.PreparedExact,
				Message: fmt.Sprintf("%d threads x %s%d prepared statements = %.0f, with %.0f already prepared, exceed the server's %.0f", n.Threads, about, n.PreparedPerThread, need, inUse, maxp),
				Fix:     fmt.Sprintf("SET GLOBAL max_prepared_stmt_count = %d, or run with --db-ps-mode=disable", want),
			})
		}
	}
	tablesOpen := float64(n.Tables * n.Threads)
	if tc, ok := vars["table_open_cache"]; ok && n.Tables > 0 && tc < tablesOpen {
		fs = append(fs, Finding{
			Check:   "table_open_cache",
			Message: fmt.Sprintf("%d tables used by %d threads may need %.0f open tables, but table_open_cache is %.0f: tables will be reopened under load", n.Tables, n.Threads, tablesOpen, tc),
			Fix:     fmt.Sprintf("SET GLOBAL table_open_cache = %.0f", tablesOpen+400),
		})
	}
	if of, ok := vars["open_files_limit"]; ok && of > 0 {
		need := connected + float64(n.Threads) + float64(n.Tables) + 100
		if of < need {
			fs = append(fs, Finding{
				Check:   "open_files_limit",
				Message: fmt.Sprintf("the server may open %.0f files but needs about %.0f (a socket per connection, a file per table, logs)", of, need),
				Fix:     fmt.Sprintf("set open_files_limit = %.0f (or LimitNOFILE for its service) and restart the server", need+1000),
			})
		}
	}
	return fs
}

// checkClientFiles checks this process's own open-file limit against one
// socket per thread.
func checkClientFiles(threads int) (Finding, bool) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return Finding{}, false
	}
	need := uint64(threads) + 64
	if lim.Cur >= need {
		return Finding{}, false
	}
	return Finding{
		Check:   "client open files",
		Stop:    true,
		Message: fmt.Sprintf("shakedown may open %d files but %d threads need about %d", lim.Cur, threads, need),
		Fix:     fmt.Sprintf("raise the limit (ulimit -n %d) before running", need+1000),
	}, true
}

// showGlobal reads the named global variables or status values.
func showGlobal(ctx context.Context, q Querier, what string, names ...string) (map[string]float64, error) {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "'" + n + "'"
	}
	query := "SHOW GLOBAL " + what + " WHERE Variable_name IN (" + strings.Join(quoted, ",") + ")"
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("read global %s: %w", strings.ToLower(what), err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return nil, fmt.Errorf("read global %s: %w", strings.ToLower(what), err)
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
			if what == "VARIABLES" {
				name = strings.ToLower(name)
			}
			out[name] = v
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read global %s: %w", strings.ToLower(what), err)
	}
	return out, nil
}
