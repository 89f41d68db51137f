// Package connect is the "connect" workload: every event opens a
// connection, authenticates and disconnects (COM_QUIT), the storm of short
// connections an application without a pool makes. Its events per second
// are connections per second, and so are its queries per second: the
// COM_QUIT of each disconnect counts as one statement, as the server counts
// it. The run's connect figures show the connect part alone.
package connect

import (
	"context"
	"fmt"

	"github.com/shakedown/shakedown/internal/workload"
)

func init() {
	meta := workload.Meta{Name: "connect", Description: "connect, authenticate, disconnect per event: the short-connection storm"}
	meta.New = func() workload.Generator { return generator{meta} }
	workload.Register(meta)
}

type generator struct{ meta workload.Meta }

func (g generator) Meta() workload.Meta { return g.meta }

// Prepare has nothing to do: connect needs no data.
func (g generator) Prepare(_ context.Context, env *workload.PrepareEnv) error {
	fmt.Fprintln(env.Out, "connect needs no data: nothing to prepare")
	return nil
}

// Cleanup has nothing to do.
func (g generator) Cleanup(_ context.Context, env *workload.PrepareEnv) error {
	fmt.Fprintln(env.Out, "connect has no data: nothing to clean up")
	return nil
}

// PreparedStatements is 0: connect prepares nothing.
func (g generator) PreparedStatements() int { return 0 }

// NewWorker returns a worker that connects with env.Dial.
func (g generator) NewWorker(_ context.Context, env *workload.WorkerEnv) (workload.Worker, error) {
	if env.Dial == nil {
		return nil, fmt.Errorf("connect: the runner gave no way to dial")
	}
	return worker{env.Dial, env.Counts}, nil
}

type worker struct {
	dial   func(context.Context) (workload.Conn, error)
	counts *workload.Counts
}

// Event connects, authenticates and disconnects. The disconnect's COM_QUIT
// counts as one statement, as the server counts it in Questions.
func (w worker) Event(ctx context.Context) error {
	c, err := w.dial(ctx)
	if err != nil {
		return err
	}
	if err := c.Close(); err != nil {
		return err
	}
	if w.counts != nil {
		w.counts.Others.Add(1)
	}
	return nil
}
