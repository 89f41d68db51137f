package monitor

import (
	"context"
	"os"
	"time"

	"github.com/shakedown/shakedown/internal/host"
	"github.com/shakedown/shakedown/internal/target"
)

// factsTimeout bounds reading the host facts at the start of a run: the
// SQL rows are bounded one by one, this bounds them all.
const factsTimeout = 10 * time.Second

// collectFacts reads the host facts once, at the start of the run: the
// server's host when it is this one (with its process, cgroup and datadir
// device), else the rows only SQL gives for the server and this host's own
// facts as the client's.
func (r *Run) collectFacts(ctx context.Context, ep target.Endpoint) (server, client *host.Facts) {
	ctx, cancel := context.WithTimeout(ctx, factsTimeout)
	defer cancel()
	name, _ := os.Hostname()
	opts := host.Options{SQL: r.db, Hostname: name, Now: time.Now()}
	if r.local {
		opts.PID, opts.DataDir, _ = host.LocalServer(ctx, r.db)
	} else {
		opts.Remote = ep.Host
		client = host.Collect(ctx, host.Options{Hostname: name, Now: opts.Now})
	}
	server = host.Collect(ctx, opts)
	server.Subject.Target = r.cfg.Target.String()
	return server, client
}
