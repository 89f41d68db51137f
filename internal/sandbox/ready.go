package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shakedown/shakedown/internal/target"
)

// readyTimeout bounds how long a started server may take to answer. A fresh
// MariaDB answers in well under a second; crash recovery after a kill -9
// under write load takes longer.
const readyTimeout = 60 * time.Second

// errExited is a server that exited before it answered.
var errExited = errors.New("server exited during startup")

// The queries probe asks, of a server and of vtgate: a version and the
// socket, which tells our server from another one on the same port.
// vtgate answers VERSION() and @@socket itself, and passes @@global.socket
// to a tablet, so that its answer is the MariaDB's beneath.
const (
	serverProbe = "SELECT VERSION(), @@socket"
	gateProbe   = "SELECT @@global.version, @@global.socket"
)

// probe connects as the sandbox user over TCP and returns the version and
// socket query (serverProbe or gateProbe) reads.
func probe(ctx context.Context, port int, query string) (version, socket string, err error) {
	t := &target.Target{User: User, Hosts: []string{"127.0.0.1"}, Ports: []int{port}, ConnectTimeout: 2 * time.Second}
	cfg := t.Config(t.Endpoints()[0], Database)
	cfg.ReadTimeout = 5 * time.Second
	cfg.WriteTimeout = 5 * time.Second
	db, err := t.OpenConfig(cfg, 1)
	if err != nil {
		return "", "", err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err = db.QueryRowContext(ctx, query).Scan(&version, &socket)
	return version, socket, err
}

// waitReady polls the server until it answers query (probe's) as our
// server, it exits, ctx ends or readyTimeout passes. It returns the
// version.
func waitReady(ctx context.Context, p *process, port int, socket, query string) (string, error) {
	pollCtx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		select {
		case <-p.exited:
			return "", fmt.Errorf("%w (%v)", errExited, p.err)
		default:
		}
		v, s, err := probe(pollCtx, port, query)
		switch {
		case err != nil:
			last = err
		case s != socket:
			last = fmt.Errorf("port %d is answered by another server (socket %s)", port, s)
		default:
			return v, nil
		}
		select {
		case <-p.exited:
			return "", fmt.Errorf("%w (%v)", errExited, p.err)
		case <-pollCtx.Done():
			if err := ctx.Err(); err != nil {
				return "", fmt.Errorf("wait for server: %w", err)
			}
			return "", fmt.Errorf("server did not answer on 127.0.0.1:%d within %v: %v", port, readyTimeout, last)
		case <-tick.C:
		}
	}
}
