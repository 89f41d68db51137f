package runner

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire"
	"github.com/shakedown/shakedown/internal/workload"
)

// ConnectMode says when the threads of a run open connections.
type ConnectMode int

const (
	// Persistent keeps one connection per thread for the whole run.
	Persistent ConnectMode = iota
	// PerEvent opens a connection for every event and closes it after
	// (--connect-mode=transaction).
	PerEvent
	// PerStatement opens a connection for every statement and closes it
	// after (--connect-mode=query).
	PerStatement
)

var connectModeNames = [...]string{"persistent", "transaction", "query"}

// String is the mode's name on the command line.
func (m ConnectMode) String() string {
	if m < 0 || int(m) >= len(connectModeNames) {
		return fmt.Sprintf("ConnectMode(%d)", int(m))
	}
	return connectModeNames[m]
}

// ParseConnectMode reads a --connect-mode value.
func ParseConnectMode(s string) (ConnectMode, error) {
	for i, n := range connectModeNames {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return ConnectMode(i), nil
		}
	}
	return 0, fmt.Errorf("--connect-mode must be persistent, transaction or query (got %q)", s)
}

// dialError is a connection failure explained for the user that still
// carries the driver's error, so that its code can be read.
type dialError struct {
	msg string
	err error
}

func (e *dialError) Error() string { return e.msg }
func (e *dialError) Unwrap() error { return e.err }

func (d *Dialer) explain(ep target.Endpoint, err error) error {
	return &dialError{msg: d.tgt.Explain(ep, err).Error(), err: err}
}

// Dialer opens the connections of a run: thread i connects to endpoint i mod
// n of the target, over the lean protocol of package wire when the target
// allows it, else through database/sql. It is safe for concurrent use.
type Dialer struct {
	tgt *target.Target
	ps  bool
	io  wire.Options
	eps []target.Endpoint

	mu    sync.Mutex
	pools map[int]*sql.DB
}

// NewDialer returns a Dialer for t; ps selects server-side prepared
// statements, io how the fast path waits for the server.
func NewDialer(t *target.Target, ps bool, io wire.Options) *Dialer {
	return &Dialer{tgt: t, ps: ps, io: io, eps: t.Endpoints(), pools: map[int]*sql.DB{}}
}

// Connect is a Config.Connect.
func (d *Dialer) Connect(ctx context.Context, i int, counts *workload.Counts) (*workload.Conn, error) {
	n := i % len(d.eps)
	ep := d.eps[n]
	w, err := wire.Dial(ctx, d.tgt.Config(ep, d.tgt.DB), d.io)
	if err == nil {
		return workload.NewWireConn(w, d.ps, counts), nil
	}
	if !errors.Is(err, wire.ErrUnsupported) {
		return nil, d.explain(ep, err)
	}
	d.mu.Lock()
	db := d.pools[n]
	if db == nil {
		if db, err = d.tgt.Open(ep, 0); err != nil {
			d.mu.Unlock()
			return nil, err
		}
		db.SetMaxIdleConns(0) // a closed Conn really closes
		d.pools[n] = db
	}
	d.mu.Unlock()
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, d.explain(ep, err)
	}
	return workload.NewSQLConn(c, d.ps, counts), nil
}

// Close releases the fallback pools; call it after the run.
func (d *Dialer) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, db := range d.pools {
		db.Close()
	}
	d.pools = map[int]*sql.DB{}
}
