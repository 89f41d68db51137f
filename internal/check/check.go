package check

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/vars"
)

// Severities, in decreasing order of weight.
const (
	Error   = "error"   // blocks the move
	Warning = "warning" // works, but changes something: decide
	Notice  = "notice"  // for information
)

// DocumentVersion is the version of the JSON document.
const DocumentVersion = 1

// Finding is one thing that would break or change with the move.
type Finding struct {
	Check    string `json:"check"`    // stable id, e.g. no_primary_key
	Severity string `json:"severity"` // error, warning or notice
	Object   string `json:"object"`   // what it concerns: db.table, 'user'@'host', a variable
	Message  string `json:"message"`  // why it matters
	Fix      string `json:"fix"`      // how to fix it
}

// NotChecked is a check that could not run on one side.
type NotChecked struct {
	Check string `json:"check"`
	Side  string `json:"side"` // source or target
	// Privilege is what the user would need for the check to run; Missing
	// what the server lacks (an information_schema table, a statement).
	// One of the two is set, or neither when the server failed otherwise
	// (Detail says how).
	Privilege string `json:"privilege,omitempty"`
	Missing   string `json:"missing,omitempty"`
	Detail    string `json:"detail,omitempty"`
}

// Need says in words what the check would need.
func (n NotChecked) Need() string {
	switch {
	case n.Privilege != "":
		return "needs " + n.Privilege
	case n.Missing != "":
		return "the server lacks " + n.Missing
	}
	return n.Detail
}

// Endpoint is one side as the report names it.
type Endpoint struct {
	URL     string `json:"url"` // without password
	Version string `json:"version"`
	Flavour string `json:"flavour"`
}

// Report is the outcome of one check.
type Report struct {
	Version    int               `json:"version"`
	Source     Endpoint          `json:"source"`
	Target     Endpoint          `json:"target"`
	Started    time.Time         `json:"started"`
	Seconds    float64           `json:"seconds"`
	Databases  []string          `json:"databases"`
	Errors     int               `json:"errors"`
	Warnings   int               `json:"warnings"`
	Notices    int               `json:"notices"`
	Findings   []Finding         `json:"findings"`
	NotChecked []NotChecked      `json:"not_checked"`
	Variables  []vars.Difference `json:"variables"` // the variables diff, source first
	// AccountsSkipped are the accounts left out of the comparison
	// (Options.SkipAccounts).
	AccountsSkipped []string `json:"accounts_skipped,omitempty"`
}

// Count returns how many findings have the check id (and, when severity is
// not "", that severity).
func (r *Report) Count(check, severity string) int {
	n := 0
	for _, f := range r.Findings {
		if f.Check == check && (severity == "" || f.Severity == severity) {
			n++
		}
	}
	return n
}

// Options say what to check.
type Options struct {
	// Databases are compared under the same names on both sides; empty
	// means every database of the source except the system ones.
	Databases []string
	// CopyTime is how long the initial copy is expected to take: the
	// source's binary logs must be kept longer.
	CopyTime time.Duration
	// MigrationUser is the source account a migration tool will use, as
	// 'user'@'host'; "" is the account check connects as.
	MigrationUser string
	// SkipAccounts are user names (or 'user'@'host') not compared: system
	// and administrator accounts each server keeps its own of.
	SkipAccounts []string
	// MaxScanRows bounds the zero-date probe: tables estimated above it are
	// listed as not checked instead of read. 0 means no bound.
	MaxScanRows int64
	// QueryTimeout bounds each query.
	QueryTimeout time.Duration
}

// DefaultSkipAccounts are accounts that servers create for themselves.
var DefaultSkipAccounts = []string{"root", "mariadb.sys", "mysql.sys", "mysql.session", "mysql.infoschema", "PUBLIC",
	"rdsadmin", "rdsrepladmin", "rdsproxyadmin"}

// Run checks src against dst. It returns an error only when a side cannot
// be read at all (the connection is lost, ctx ends); everything else is a
// finding or a not-checked entry.
func Run(ctx context.Context, src, dst *schema.Side, opts Options) (*Report, error) {
	if opts.QueryTimeout <= 0 {
		opts.QueryTimeout = 30 * time.Second
	}
	if opts.CopyTime <= 0 {
		opts.CopyTime = 24 * time.Hour
	}
	r := &runner{opts: opts, rep: &Report{
		Version:  DocumentVersion,
		Source:   Endpoint{URL: src.Target.Redacted(), Version: src.Server.Version, Flavour: string(src.Server.Flavour)},
		Target:   Endpoint{URL: dst.Target.Redacted(), Version: dst.Server.Version, Flavour: string(dst.Server.Flavour)},
		Started:  time.Now().UTC(),
		Findings: []Finding{},
	}}
	r.src = newSnapshot("source", src, opts.QueryTimeout)
	r.dst = newSnapshot("target", dst, opts.QueryTimeout)

	// The source decides which databases are compared.
	if err := r.src.readDatabases(ctx); err != nil {
		return nil, err
	}
	dbs := opts.Databases
	if len(dbs) == 0 {
		dbs = r.src.userDatabases()
	}
	r.rep.Databases = append([]string{}, dbs...)

	errc := make(chan error, 1)
	go func() { errc <- r.dst.collect(ctx, dbs, true) }()
	serr := r.src.collect(ctx, dbs, false)
	derr := <-errc
	if err := errors.Join(serr, derr); err != nil {
		return nil, err
	}
	// The zero-date probe depends on the target's sql_mode.
	if err := r.src.probeZeroDates(ctx, r.zeroDatesRejected(), opts.MaxScanRows); err != nil {
		return nil, err
	}

	for _, c := range checks {
		c(r)
	}
	for _, s := range []*snapshot{r.src, r.dst} {
		if len(s.hiddenTables) > 0 {
			r.rep.NotChecked = append(r.rep.NotChecked, NotChecked{Check: "missing_table", Side: s.role,
				Privilege: strings.Join(s.hiddenTables, ", "),
				Detail:    "information_schema shows only the tables the user has a privilege on: the others were not checked"})
		}
	}
	r.finish()
	r.rep.Seconds = time.Since(r.rep.Started).Seconds()
	return r.rep, nil
}

// runner holds one check's state.
type runner struct {
	opts     Options
	rep      *Report
	src, dst *snapshot
	seen     map[string]bool // not-checked entries already listed
}

// checks run in this order; each adds findings to the report.
var checks = []func(*runner){
	(*runner).checkVariables,
	(*runner).checkTimeZoneTables,
	(*runner).checkAuthPlugins,
	(*runner).checkReplication,
	(*runner).checkMigrationPrivileges,
	(*runner).checkInventory,
	(*runner).checkAccounts,
	(*runner).checkCharsets,
	(*runner).checkReservedWords,
	(*runner).checkEngines,
	(*runner).checkFeatures,
	(*runner).checkZeroDates,
	(*runner).checkAutoIncrement,
	(*runner).checkPrimaryKeys,
	(*runner).checkWriteSetLimit,
	(*runner).checkTableLocks,
	(*runner).checkStatistics,
}

func (r *runner) add(check, severity, object, message, fix string) {
	r.rep.Findings = append(r.rep.Findings, Finding{Check: check, Severity: severity, Object: object, Message: message, Fix: fix})
}

// have reports whether every named item was read on s; when one was not,
// the check is listed as not checked (once per check and side) and have
// returns false.
func (r *runner) have(check string, s *snapshot, items ...string) bool {
	for _, it := range items {
		nc, failed := s.failed[it]
		if !failed {
			continue
		}
		nc.Check, nc.Side = check, s.role
		key := check + "\x00" + s.role + "\x00" + nc.Privilege + nc.Missing + nc.Detail
		if r.seen == nil {
			r.seen = map[string]bool{}
		}
		if !r.seen[key] {
			r.seen[key] = true
			r.rep.NotChecked = append(r.rep.NotChecked, nc)
		}
		return false
	}
	return true
}

// haveBoth is have on the source, then (only if it has them) on the
// target: a check that compares the two needs the items on both.
func (r *runner) haveBoth(check string, items ...string) bool {
	return r.have(check, r.src, items...) && r.have(check, r.dst, items...)
}

var severityRank = map[string]int{Error: 0, Warning: 1, Notice: 2}

// finish orders the findings (errors first, then by check, then object)
// and counts them.
func (r *runner) finish() {
	order := map[string]int{}
	for i, c := range Catalogue {
		order[c.ID] = i
	}
	sort.SliceStable(r.rep.Findings, func(i, j int) bool {
		a, b := r.rep.Findings[i], r.rep.Findings[j]
		if severityRank[a.Severity] != severityRank[b.Severity] {
			return severityRank[a.Severity] < severityRank[b.Severity]
		}
		if order[a.Check] != order[b.Check] {
			return order[a.Check] < order[b.Check]
		}
		return a.Object < b.Object
	})
	for _, f := range r.rep.Findings {
		switch f.Severity {
		case Error:
			r.rep.Errors++
		case Warning:
			r.rep.Warnings++
		default:
			r.rep.Notices++
		}
	}
	if r.rep.NotChecked == nil {
		r.rep.NotChecked = []NotChecked{}
	}
	sort.SliceStable(r.rep.NotChecked, func(i, j int) bool {
		a, b := r.rep.NotChecked[i], r.rep.NotChecked[j]
		if order[a.Check] != order[b.Check] {
			return order[a.Check] < order[b.Check]
		}
		return a.Side > b.Side // source first
	})
	if r.rep.Variables == nil {
		r.rep.Variables = []vars.Difference{}
	}
}

// list joins up to max names and says how many more there are.
func list(names []string, max int) string {
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}
