package verify

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
)

// sessionParams are set on every connection of both sides, so that both
// render values the same way: TIMESTAMP in UTC, no sql_mode that changes
// how values print (PAD_CHAR_TO_FULL_LENGTH) or how literals are escaped
// (NO_BACKSLASH_ESCAPES). utf8mb4 comes with the driver's handshake.
var sessionParams = map[string]string{
	"time_zone": "'+00:00'",
	"sql_mode":  "''",
}

// Connect opens a pool of up to size connections on t (its first
// endpoint) with verify's session settings, checks that it answers and
// asks the server's flavour and version. role names the side in errors.
// The caller closes Side.DB.
func Connect(ctx context.Context, role string, t *target.Target, size int) (*schema.Side, error) {
	db, _, srv, err := t.ConnectSession(ctx, "", size, sessionParams)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", role, err)
	}
	return &schema.Side{Role: role, Target: t, DB: db, Server: srv}, nil
}

// ConnectFreshStats is Connect for check's sides. MySQL 8 is asked for
// information_schema_stats_expiry = 0 on every session: otherwise
// information_schema serves row counts and AUTO_INCREMENT values cached for
// up to a day. Other servers have no such cache (nor the variable).
func ConnectFreshStats(ctx context.Context, role string, t *target.Target, size int) (*schema.Side, error) {
	s, err := Connect(ctx, role, t, size)
	if err != nil {
		return nil, err
	}
	if !s.Server.Flavour.IsMySQL() || strings.HasPrefix(s.Server.Version, "5.") {
		return s, nil
	}
	s.DB.Close()
	tt := *t
	tt.Params = map[string]string{"information_schema_stats_expiry": "0"}
	for k, v := range t.Params {
		tt.Params[k] = v
	}
	s, err = Connect(ctx, role, &tt, size)
	if err != nil {
		return nil, err
	}
	s.Target = t
	return s, nil
}

// querier is what both *sql.DB and *sql.Tx offer.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readTx starts a read-only transaction at REPEATABLE READ: every statement
// verify runs for one chunk on one side reads one consistent snapshot and
// takes no locks. Where the flavour has read-only transactions the server
// also refuses any write; where it has not (TiDB without its no-op
// functions), or where something between (a proxy) cannot parse START
// TRANSACTION READ ONLY, it is a plain transaction that verify only reads
// in. Where the session's isolation cannot be set (vtgate over MariaDB
// 10.x), it runs at the server's default.
func readTx(ctx context.Context, s *schema.Side) (*sql.Tx, error) {
	ro := s.Server.Flavour.ReadOnlyTransactions()
	tx, err := s.DB.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: ro})
	if err != nil && ro && refusedSyntax(err) {
		tx, err = s.DB.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	}
	if err != nil && target.Code(err) == target.ERUnknownSystemVariable {
		// vtgate checks SET TRANSACTION ISOLATION LEVEL against
		// @@transaction_isolation, which MariaDB before 11.1 calls
		// tx_isolation: the transaction takes the server's default
		// isolation (REPEATABLE READ unless it was changed).
		tx, err = s.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: ro})
	}
	if err != nil {
		return nil, fmt.Errorf("start read-only transaction: %w", err)
	}
	return tx, nil
}

// snapshotOf is readTx as a Snapshot: nil when it fails, not a nil *sql.Tx
// that a Snapshot would hold as a value, which a caller would take for a
// transaction to roll back.
func snapshotOf(ctx context.Context, s *schema.Side) (Snapshot, error) {
	tx, err := readTx(ctx, s)
	if err != nil {
		return nil, err
	}
	return tx, nil
}

// refusedSyntax says whether err is a server's (or proxy's) refusal of a
// statement's form rather than of the session: a syntax error (1064),
// a form it does not support (1235), or an unknown error (1105) as
// go-mysql-server and proxies give.
func refusedSyntax(err error) bool {
	switch target.Code(err) {
	case target.ERParse, target.ERNotSupportedYet, target.ERUnknown:
		return true
	}
	return false
}
