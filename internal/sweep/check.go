package sweep

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/target"
)

// Env is a target as found before the sweep: what server answers there and
// its global variables.
type Env struct {
	Target    *plan.Target
	Server    target.Server
	Variables map[string]string
}

// CheckError lists the targets that could not be reached, one line each
// naming the target and its line in the plan.
type CheckError struct {
	Lines []string
}

func (e *CheckError) Error() string {
	return "cannot reach every target; nothing was run:\n" + strings.Join(e.Lines, "\n")
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
	var lines []string
	for i, err := range errs {
		if err != nil {
			t := p.Targets[i]
			lines = append(lines, fmt.Sprintf("%s:%d: target %s (%s): %v", p.Path, t.Line, t.Name, t.Target.Redacted(), err))
		}
	}
	if len(lines) > 0 {
		return nil, &CheckError{Lines: lines}
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
	env := Env{Target: t, Server: srv, Variables: map[string]string{}}
	rows, err := conn.QueryContext(cctx, "SHOW GLOBAL VARIABLES")
	if err != nil {
		return Env{}, fmt.Errorf("read variables: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var v sql.NullString // a few variables are NULL on some servers
		if err := rows.Scan(&k, &v); err != nil {
			return Env{}, fmt.Errorf("read variables: %w", err)
		}
		env.Variables[strings.ToLower(k)] = v.String
	}
	if err := rows.Err(); err != nil {
		return Env{}, fmt.Errorf("read variables: %w", err)
	}
	return env, nil
}
