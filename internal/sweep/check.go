package sweep

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/vars"
)

// Env is a target as found before the sweep: what server answers there and
// its global variables.
type Env struct {
	Target    *plan.Target
	Server    target.Server
	Variables map[string]string
	// Down, when set, says why the target did not answer (CheckWait): its
	// steps are skipped.
	Down string
}

// CheckError lists the targets that could not be reached, one line each
// naming the target and its line in the plan.
type CheckError struct {
	Lines []string
	// Errs are the failures the lines say, for Usage.
	Errs []error
}

func (e *CheckError) Error() string {
	return "cannot reach every target; nothing was run:\n" + strings.Join(e.Lines, "\n")
}

// Usage reports whether every target failed for the user's input, such
// as a database the plan names that does not exist: bad usage (exit 2),
// as the same failure is for any other command.
func (e *CheckError) Usage() bool {
	for _, err := range e.Errs {
		if !usage.Is(err) {
			return false
		}
	}
	return len(e.Errs) > 0
}

// Check connects to every target of p at once, asks what server it is and
// reads its global variables. Any target that does not answer makes it fail
// with a *CheckError; nothing has been run then.
func Check(ctx context.Context, p *plan.Plan) ([]Env, error) {
	envs := make([]Env, len(p.Targets))
	errs := make([]error, len(p.Targets))
	var wg sync.WaitGroup
	for i, t := range p.Targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			envs[i], errs[i] = checkTarget(ctx, t)
		}()
	}
	wg.Wait()
	var ce CheckError
	for i, err := range errs {
		if err != nil {
			t := p.Targets[i]
			ce.Lines = append(ce.Lines, fmt.Sprintf("%s:%d: target %s (%s): %v", p.Path, t.Line, t.Name, t.Target.Redacted(), err))
			ce.Errs = append(ce.Errs, err)
		}
	}
	if len(ce.Lines) > 0 {
		return nil, &ce
	}
	return envs, nil
}

func checkTarget(ctx context.Context, t *plan.Target) (Env, error) {
	tg := t.Target
	ep := tg.Endpoints()[0]
	db, err := tg.Open(ep, 1)
	if err != nil {
		return Env{}, err
	}
	defer db.Close()
	cctx, cancel := context.WithTimeout(ctx, tg.ConnectTimeout+time.Second)
	defer cancel()
	conn, err := db.Conn(cctx)
	if err != nil {
		return Env{}, tg.Explain(ep, err)
	}
	defer conn.Close()
	srv, err := target.Detect(cctx, conn)
	if err != nil {
		return Env{}, tg.Explain(ep, err)
	}
	v, err := vars.Collect(cctx, conn)
	if err != nil {
		return Env{}, err
	}
	return Env{Target: t, Server: srv, Variables: v}, nil
}

// SameServers says which targets are one server and database reached twice
// (an A/A pair, the calibration of the comparison itself), one line each;
// such targets share one prepare.
func SameServers(envs []Env) []string {
	var out []string
	for i, a := range envs {
		for _, b := range envs[i+1:] {
			same, how := vars.SameServer(a.Variables, b.Variables)
			if !same || a.Target.Target == nil || b.Target.Target == nil || a.Target.Target.DB != b.Target.Target.DB {
				continue
			}
			out = append(out, fmt.Sprintf("%s and %s are the same server (%s) and database %s: an A/A pair, whose differences are noise; they share one prepare",
				a.Target.Name, b.Target.Name, how, a.Target.Target.DB))
		}
	}
	return out
}

// maxTablesChecked bounds how many tables CheckData looks into.
const maxTablesChecked = 50

// CheckData refuses, before anything runs, a plan with prepare: true whose
// targets already hold tables with rows: prepare drops and recreates the
// workload's tables, and nobody asked for their data to go. prepare:
// replace allows it. The error is bad input (exit 2) and names each target
// with its line.
func CheckData(ctx context.Context, p *plan.Plan, envs []Env) error {
	if !p.Prepare || p.PrepareReplace {
		return nil
	}
	seen := map[string]bool{}
	hs := homes(p, envs)
	var lines []string
	for _, t := range p.Targets {
		if seen[hs[t.Name]] || t.Target == nil {
			continue
		}
		seen[hs[t.Name]] = true
		full, err := tablesWithRows(ctx, t)
		if err != nil {
			return fmt.Errorf("%s:%d: target %s: %w", p.Path, t.Line, t.Name, err)
		}
		if len(full) > 0 {
			lines = append(lines, fmt.Sprintf("%s:%d: target %s: database %s already holds tables with rows (%s): prepare: true would drop and recreate the workload's tables",
				p.Path, t.Line, t.Name, t.Target.DB, strings.Join(full, ", ")))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return usage.Errorf("%s\nnothing was run: use prepare: replace to drop and recreate them, prepare: false to run on the data as it is, or another database",
		strings.Join(lines, "\n"))
}

// tablesWithRows lists the base tables of t's database that hold at least
// one row.
func tablesWithRows(ctx context.Context, t *plan.Target) ([]string, error) {
	var full []string
	err := withDB(ctx, t, func(ctx context.Context, db *sql.DB, ep target.Endpoint) error {
		names, err := target.QueryAll(ctx, db, target.ScanString, `SELECT TABLE_NAME FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME`)
		if err != nil {
			return fmt.Errorf("list tables: %w", t.Target.Explain(ep, err))
		}
		for i, n := range names {
			if i == maxTablesChecked {
				full = append(full, fmt.Sprintf("and %d more tables not looked into", len(names)-i))
				break
			}
			var one int
			err := db.QueryRowContext(ctx, "SELECT 1 FROM "+escape.Ident(n)+" LIMIT 1").Scan(&one)
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return fmt.Errorf("look into table %s: %w", n, err)
			default:
				full = append(full, n)
			}
		}
		return nil
	})
	return full, err
}

// withDB runs f on a one-connection pool on t's first endpoint, with a
// context that ends after the connect timeout and 10 seconds more: the
// bound of every read the sweep's checks make.
func withDB(ctx context.Context, t *plan.Target, f func(ctx context.Context, db *sql.DB, ep target.Endpoint) error) error {
	tg := t.Target
	ep := tg.Endpoints()[0]
	db, err := tg.Open(ep, 1)
	if err != nil {
		return err
	}
	defer db.Close()
	cctx, cancel := context.WithTimeout(ctx, tg.ConnectTimeout+10*time.Second)
	defer cancel()
	return f(cctx, db, ep)
}
