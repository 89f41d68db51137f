package client

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire"
	"github.com/shakedown/shakedown/internal/workload"
)

// Options say how a Dialer connects.
type Options struct {
	// DB is the default database of each connection.
	DB string
	// PS selects server-side prepared statements; otherwise Prepare gives
	// statements that run as text.
	PS bool
	// Plan says how the connections wait for the server: they are
	// dialled as its IO says. With I/O loops, Connect's ctx must carry
	// the task of the caller's loop (ioloop.With), whose loop the plan
	// made (IOPlan.Group).
	Plan IOPlan
	// Configure, when set, adjusts each connection's driver configuration
	// (slap turns multi-statements on).
	Configure func(*mysql.Config)
	// Init, when set, runs as text on every new connection (slap's
	// --init-command); its failure is the connect's.
	Init string
	// Explain says a failed connect in one line for the user; the error
	// it returns must wrap the cause. Nil means the target's Explain.
	Explain func(ep target.Endpoint, err error) error
}

// Dialer opens the connections of a load: connection i goes to endpoint i
// mod n of the target, over the lean protocol of package wire, TLS
// included, so that every target is measured through the same client. It is
// safe for concurrent use.
type Dialer struct {
	tgt *target.Target
	opt Options
	eps []target.Endpoint
	io  wire.Options // Plan.IO

	// What the connections used, for the result: how many were opened
	// and how many of them over TLS.
	opened, overTLS atomic.Int64
}

// NewDialer returns a Dialer for t.
func NewDialer(t *target.Target, opt Options) *Dialer {
	if opt.Explain == nil {
		opt.Explain = t.Explain
	}
	return &Dialer{tgt: t, opt: opt, eps: t.Endpoints(), io: opt.Plan.IO}
}

func (d *Dialer) config(ep target.Endpoint) *mysql.Config {
	cfg := d.tgt.Config(ep, d.opt.DB)
	if d.opt.Configure != nil {
		d.opt.Configure(cfg)
	}
	return cfg
}

// DialWire opens one connection of package wire with cfg, one of a
// target's Configs that the caller may have changed (its timeouts, its
// default database): the Dialer's, replay's and mirror's connections all
// open here. cfg's Timeout bounds the connect and the handshake; after
// them, ctx interrupts the connection when it ends. The caller closes it.
func DialWire(ctx context.Context, cfg *mysql.Config, opt wire.Options) (*wire.Conn, error) {
	return wire.Dial(ctx, cfg, opt)
}

// Connect opens connection i, whose statements count into counts. A failed
// connect is explained (Options.Explain) and wraps the driver's error.
func (d *Dialer) Connect(ctx context.Context, i int, counts *workload.Counts) (workload.Conn, error) {
	ep := d.eps[i%len(d.eps)]
	w, err := DialWire(ctx, d.config(ep), d.io)
	if err != nil {
		return nil, d.opt.Explain(ep, err)
	}
	d.opened.Add(1)
	if w.TLS() {
		d.overTLS.Add(1)
	}
	var c workload.Conn = NewWire(w, d.opt.PS, counts)
	if d.opt.Init != "" {
		if _, err := c.Exec(ctx, d.opt.Init); err != nil {
			c.Close()
			return nil, fmt.Errorf("--init-command: %w", err)
		}
	}
	return c, nil
}

// TLS reports whether the connections opened so far went over TLS: all of
// them (true), or none, or a mix (preferred with servers that differ), which
// counts as not all.
func (d *Dialer) TLS() bool {
	n := d.opened.Load()
	return n > 0 && d.overTLS.Load() == n
}
