package demo

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/readiness"
	"github.com/shakedown/shakedown/internal/rehearse"
	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/sqlsplit"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/target"
)

// app is the rehearsal's small application: app.sql makes it on the
// source, candidate.sql its tables on the candidate (without one index),
// and the plan, the capture and the sweep's queries rehearse its move.
//
//go:embed rehearsal
var app embed.FS

// appFiles are written to the rehearsal's directory, where the plan
// finds them and a reader can run them again.
var appFiles = []string{"app.sql", "candidate.sql", "app.capture", "queries.sql", "rehearsal.yaml"}

// Rows the demo adds to app.sql's few, so that the copy has something to
// move: small enough to take a second.
const (
	moreCustomers = 2000
	moreOrders    = 10000
)

// RehearseOptions are where a rehearsal of the demo's application runs.
type RehearseOptions struct {
	Dir               string // absolute: the plan, its files, the store and the page
	Source, Candidate *sandbox.Instance
	Out, Progress     io.Writer
	Live              bool
	Getenv            func(string) string
	Version, Host     string
	// StepTime is the seconds of each of the rehearsal's load steps, as
	// the demo's own sweep takes; 0 keeps the plan's.
	StepTime int
}

// Rehearse makes the application on the source and its tables, without
// the index on customers.email, on the candidate, then runs
// shakedown rehearse on them: the copy loads the candidate's own tables,
// and the chain ends on a readiness page. A candidate that is not ready
// is what the demo means to show, so it is no error; the summary says
// why.
func Rehearse(ctx context.Context, o RehearseOptions) (*rehearse.Summary, error) {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("demo rehearsal: %w", err)
	}
	// A demo rehearses afresh: the store and checkpoints of an earlier
	// one name servers that are gone (a copy's checkpoint would refuse
	// the new ones).
	old, _ := filepath.Glob(filepath.Join(o.Dir, "rehearsal.db*"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return nil, fmt.Errorf("demo rehearsal: remove the last demo's %s: %w", filepath.Base(f), err)
		}
	}
	for _, name := range appFiles {
		b, err := app.ReadFile("rehearsal/" + name)
		if err != nil {
			return nil, err
		}
		if name == "rehearsal.yaml" {
			b = planFor(b, o)
		}
		if err := outfile.WriteAtomic(filepath.Join(o.Dir, name), b); err != nil {
			return nil, fmt.Errorf("demo rehearsal: %w", err)
		}
	}
	fmt.Fprintf(o.Out, "\nrehearsing the move of a small application (customers, orders with a foreign key, a trigger, a view) from %s to %s, whose tables lack the index on customers.email\n",
		o.Source.Name, o.Candidate.Name)
	if err := load(ctx, o.Source, "app.sql", moreRows()); err != nil {
		return nil, err
	}
	if err := load(ctx, o.Candidate, "candidate.sql", nil); err != nil {
		return nil, err
	}
	planPath := filepath.Join(o.Dir, "rehearsal.yaml")
	src, err := os.ReadFile(planPath)
	if err != nil {
		return nil, fmt.Errorf("demo rehearsal: %w", err)
	}
	p, err := rehearse.ParsePlan(planPath, src, o.Getenv)
	if err != nil {
		return nil, fmt.Errorf("demo rehearsal plan: %w", err)
	}
	storePath := filepath.Join(o.Dir, "rehearsal.db")
	os.Remove(storePath) // a rehearsal of these new sandboxes starts afresh
	st, err := store.Open(ctx, storePath)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	sum, err := rehearse.Run(ctx, p, rehearse.Options{
		Store: st, StoreFlag: "--store " + storePath, Out: o.Out, Progress: o.Progress, Live: o.Live,
		PageDir: o.Dir, Version: o.Version, Host: o.Host,
	})
	if sum == nil {
		return nil, err
	}
	for _, pg := range sum.Pages {
		fmt.Fprintf(o.Out, "%s: %s: %s\n", pg.Candidate, pg.Verdict, pg.Path)
		for _, r := range pg.Reasons {
			fmt.Fprintf(o.Out, "  %s\n", r)
		}
	}
	fmt.Fprintf(o.Out, "rehearsal %s in %s; plan %s, store %s\n", sum.Status, sum.Elapsed.Round(time.Second), planPath, storePath)
	if err != nil {
		return sum, fmt.Errorf("demo rehearsal: %w", err)
	}
	if sum.Verdict != readiness.NotReady {
		fmt.Fprintf(o.Out, "the candidate came out %s: the missing index was meant to make it not ready\n", sum.Verdict)
	}
	return sum, nil
}

// planFor points the example plan at the demo's sandboxes and its
// queries file at the rehearsal's directory (a sweep reads it from the
// current directory otherwise).
func planFor(b []byte, o RehearseOptions) []byte {
	url := func(i *sandbox.Instance) string {
		return fmt.Sprintf("mysql://%s@127.0.0.1:%d/app", i.User, i.ClientPort())
	}
	stepTime := "  time: 2\n"
	if o.StepTime > 0 {
		stepTime = fmt.Sprintf("  time: %d\n", o.StepTime)
	}
	s := strings.NewReplacer(
		"  time: 2\n", stepTime,
		"mysql://shakedown@127.0.0.1:3401/app", url(o.Source),
		"mysql://shakedown@127.0.0.1:3402/app", url(o.Candidate),
		"{file: queries.sql}", fmt.Sprintf("{file: %q}", filepath.Join(o.Dir, "queries.sql")),
		"name: old\n", "name: "+o.Source.Name+"\n",
		"name: new\n", "name: "+o.Candidate.Name+"\n",
	).Replace(string(b))
	return []byte(s)
}

// moreRows are INSERTs of the demo's extra customers and orders; the
// source's trigger counts the orders as they arrive.
func moreRows() []string {
	var stmts []string
	var vals []string
	flush := func(table string) {
		if len(vals) > 0 {
			stmts = append(stmts, "INSERT INTO app."+table+" VALUES "+strings.Join(vals, ","))
			vals = vals[:0]
		}
	}
	for i := 6; i < 6+moreCustomers; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 'customer%d@example.com', 0)", i, i))
		if len(vals) == 1000 {
			flush("customers")
		}
	}
	flush("customers")
	for i := 9; i < 9+moreOrders; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d, %d.%02d)", i, 1+i%(5+moreCustomers), i%200, i%100))
		if len(vals) == 1000 {
			flush("orders")
		}
	}
	flush("orders")
	return stmts
}

// load runs an embedded SQL file, then extra statements, on inst, after
// dropping the app database an earlier run may have left.
func load(ctx context.Context, inst *sandbox.Instance, file string, extra []string) error {
	b, err := app.ReadFile("rehearsal/" + file)
	if err != nil {
		return err
	}
	stmts, err := sqlsplit.Split(string(b), sqlsplit.Options{})
	if err != nil {
		return fmt.Errorf("demo rehearsal: %s: %w", file, err)
	}
	tg, err := target.Parse(inst.URL())
	if err != nil {
		return err
	}
	db, err := tg.OpenNoDB(tg.Endpoints()[0], 1)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // USE app holds for the statements after it
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	all := []string{"DROP DATABASE IF EXISTS app"}
	for _, s := range stmts {
		all = append(all, s.Text)
	}
	for _, s := range append(all, extra...) {
		if _, err := db.ExecContext(ctx, s); err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("demo rehearsal: load %s on %s: no answer within a minute", file, inst.Name)
			}
			return fmt.Errorf("demo rehearsal: load %s on %s: %s: %w", file, inst.Name, sqlsplit.Short(s, 60), err)
		}
	}
	return nil
}
