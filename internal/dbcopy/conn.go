package dbcopy

import (
	"context"
	"fmt"

	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
)

// Session settings. Both sides read and write times in UTC, so TIMESTAMP
// values pass unchanged. The source reads with an empty sql_mode (values
// print plainly); the target loads with NO_AUTO_VALUE_ON_ZERO (a 0 in an
// AUTO_INCREMENT column stays 0) and without checking foreign keys and
// unique keys row by row: the rows come from a server that checked them.
var (
	sourceParams = map[string]string{"time_zone": "'+00:00'", "sql_mode": "''"}
	targetParams = map[string]string{
		"time_zone":          "'+00:00'",
		"sql_mode":           "'NO_AUTO_VALUE_ON_ZERO'",
		"foreign_key_checks": "0",
		"unique_checks":      "0",
	}
	// verifyParams are verify's own session settings (see verify.Connect).
	verifyParams = map[string]string{"time_zone": "'+00:00'", "sql_mode": "''"}
)

// connect opens a pool of up to size connections on t's first endpoint with
// db as the default database ("" for none) and params set on every
// connection, and asks what the server is. The caller closes Side.DB.
func connect(ctx context.Context, role string, t *target.Target, db string, size int, params map[string]string) (*schema.Side, error) {
	pool, tt, srv, err := t.ConnectSession(ctx, db, size, params)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", role, err)
	}
	return &schema.Side{Role: role, Target: tt, DB: pool, Server: srv}, nil
}
