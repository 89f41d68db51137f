// Package ping is the "ping" workload: every event is one round trip that
// does no work on the server, COM_PING (--ping-mode=com) or SELECT 1
// (--ping-mode=select). At low concurrency it measures what the network,
// a proxy hop and the server's protocol layer cost on their own.
package ping

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/workload"
)

func init() {
	meta := workload.Meta{Name: "ping", Description: "one round trip per event: COM_PING or SELECT 1 (--ping-mode): network and proxy cost alone"}
	meta.New = func() workload.Generator { return newGenerator(meta) }
	workload.Register(meta)
}

type generator struct {
	meta workload.Meta
	mode string
	fs   *pflag.FlagSet
}

func newGenerator(meta workload.Meta) *generator {
	g := &generator{meta: meta}
	g.fs = sbflag.NewFlagSet(meta.Name)
	g.fs.StringVar(&g.mode, "ping-mode", "com", "com (COM_PING, no statement) or select (SELECT 1, through the parser)")
	return g
}

func (g *generator) Meta() workload.Meta   { return g.meta }
func (g *generator) Flags() *pflag.FlagSet { return g.fs }

// Validate checks --ping-mode.
func (g *generator) Validate() error {
	if g.mode != "com" && g.mode != "select" {
		return fmt.Errorf("--ping-mode must be com or select (got %q)", g.mode)
	}
	return nil
}

// ServerCounter is what the server counts of each event: COM_PING is not a
// statement and goes to Com_admin_commands; SELECT 1 is one of Questions.
func (g *generator) ServerCounter() string {
	if g.mode == "com" {
		return "Com_admin_commands"
	}
	return "Questions"
}

// Prepare has nothing to do: ping needs no data.
func (g *generator) Prepare(_ context.Context, env *workload.PrepareEnv) error {
	fmt.Fprintln(env.Out, "ping needs no data: nothing to prepare")
	return nil
}

// Cleanup has nothing to do.
func (g *generator) Cleanup(_ context.Context, env *workload.PrepareEnv) error {
	fmt.Fprintln(env.Out, "ping has no data: nothing to clean up")
	return nil
}

// PreparedStatements is SELECT 1 in select mode.
func (g *generator) PreparedStatements() int {
	if g.mode == "select" {
		return 1
	}
	return 0
}

// NewWorker prepares SELECT 1 in select mode (server-side unless
// --db-ps-mode=disable).
func (g *generator) NewWorker(ctx context.Context, env *workload.WorkerEnv) (workload.Worker, error) {
	if g.mode == "com" {
		return comWorker{env.Conn}, nil
	}
	st, err := env.Conn.Prepare(ctx, "SELECT 1")
	if err != nil {
		return nil, err
	}
	return &selectWorker{st: st}, nil
}

type comWorker struct{ c workload.Conn }

func (w comWorker) Event(ctx context.Context) error { return w.c.Ping(ctx) }

type selectWorker struct{ st workload.Stmt }

func (w *selectWorker) Event(ctx context.Context) error { return w.st.Query(ctx) }

// Finish closes the prepared statement.
func (w *selectWorker) Finish(context.Context) error { return w.st.Close() }
