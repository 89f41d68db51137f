package client

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

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
	// IO says how the fast path waits for the server (see IOFor).
	IO wire.Options
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
// mod n of the target, over the lean protocol of package wire when the
// target allows it, else through database/sql. It is safe for concurrent
// use.
type Dialer struct {
	tgt *target.Target
	opt Options
	eps []target.Endpoint

	mu    sync.Mutex
	pools map[int]*sql.DB // database/sql fallback, by endpoint
}

// NewDialer returns a Dialer for t. Close it after the load.
func NewDialer(t *target.Target, opt Options) *Dialer {
	if opt.Explain == nil {
		opt.Explain = t.Explain
	}
	return &Dialer{tgt: t, opt: opt, eps: t.Endpoints(), pools: map[int]*sql.DB{}}
}

func (d *Dialer) config(ep target.Endpoint) *mysql.Config {
	cfg := d.tgt.Config(ep, d.opt.DB)
	if d.opt.Configure != nil {
		d.opt.Configure(cfg)
	}
	return cfg
}

// Connect opens connection i, whose statements count into counts. A failed
// connect is explained (Options.Explain) and wraps the driver's error.
func (d *Dialer) Connect(ctx context.Context, i int, counts *workload.Counts) (workload.Conn, error) {
	n := i % len(d.eps)
	ep := d.eps[n]
	var c workload.Conn
	w, err := wire.Dial(ctx, d.config(ep), d.opt.IO)
	switch {
	case err == nil:
		c = NewWire(w, d.opt.PS, counts)
	case errors.Is(err, wire.ErrUnsupported):
		db, err := d.pool(n, ep)
		if err != nil {
			return nil, err
		}
		sc, err := db.Conn(ctx)
		if err != nil {
			return nil, d.opt.Explain(ep, err)
		}
		c = NewSQL(sc, d.opt.PS, counts)
	default:
		return nil, d.opt.Explain(ep, err)
	}
	if d.opt.Init != "" {
		if _, err := c.Exec(ctx, d.opt.Init); err != nil {
			c.Close()
			return nil, fmt.Errorf("--init-command: %w", err)
		}
	}
	return c, nil
}

// pool returns the database/sql pool of endpoint n, opening it once.
func (d *Dialer) pool(n int, ep target.Endpoint) (*sql.DB, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if db := d.pools[n]; db != nil {
		return db, nil
	}
	conn, err := mysql.NewConnector(d.config(ep))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", ep, err)
	}
	db := sql.OpenDB(conn)
	db.SetMaxIdleConns(0) // a closed Conn really closes
	d.pools[n] = db
	return db, nil
}

// Close releases the fallback pools.
func (d *Dialer) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, db := range d.pools {
		db.Close()
	}
	d.pools = map[int]*sql.DB{}
}
