package target

import (
	"context"
	"database/sql/driver"
	"errors"

	"github.com/go-sql-driver/mysql"
)

// newRetryConnector is mysql.NewConnector for every pool that database/sql
// opens on a target (Target.Connector), with one repair: a connect the driver refuses as a malformed
// packet is tried once more.
//
// The driver drops the last byte of an auth switch's challenge when it is a
// zero, as the 20-byte challenges of the older plugins end in a terminator.
// MariaDB's client_ed25519 challenge is 32 random bytes with no terminator,
// so one login in 256 to an ed25519 account fails with ErrMalformPkt. The
// next login gets a fresh challenge; two such in a row are one in 65,536.
// Package wire has no such fault.
func newRetryConnector(cfg *mysql.Config) (driver.Connector, error) {
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	return retryConnector{c}, nil
}

type retryConnector struct{ driver.Connector }

func (r retryConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := r.Connector.Connect(ctx)
	if errors.Is(err, mysql.ErrMalformPkt) && ctx.Err() == nil {
		conn, err = r.Connector.Connect(ctx)
	}
	return conn, err
}
