package flavour

import (
	"context"
	"database/sql"
	"strings"
)

// Querier is what Detect needs of a connection or a pool.
type Querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Detect asks the server what it is: its version, and its flavour from
// the version string and comment first, then from what only that flavour
// answers (a Galera node's wsrep_on, Dolt's dolt_version()). A probe the
// server refuses means "not that flavour"; only the first query failing
// is an error. ctx bounds every probe.
func Detect(ctx context.Context, q Querier) (version string, n Name, err error) {
	var comment string
	if err := q.QueryRowContext(ctx, "SELECT VERSION(), @@version_comment").Scan(&version, &comment); err != nil {
		return "", "", err
	}
	n = FromVersion(version, comment)
	switch n {
	case MariaDB:
		var on sql.NullString
		if q.QueryRowContext(ctx, "SELECT @@global.wsrep_on").Scan(&on) == nil && isOn(on.String) {
			n = Galera
		}
	case MySQL:
		var v sql.NullString
		if q.QueryRowContext(ctx, "SELECT dolt_version()").Scan(&v) == nil && v.Valid {
			n = Dolt
		}
	}
	return version, n, ctx.Err()
}

// Beneath is the flavour of the server that keeps a gateway's data: the
// MariaDB or MySQL under vtgate, whose information_schema rows and types
// the gateway passes on. vtgate answers VERSION() itself but leaves
// @@global.version to its tablet. "" when n is not a gateway or the
// server beneath does not say.
func Beneath(ctx context.Context, q Querier, n Name) Name {
	if n != Vitess {
		return ""
	}
	var v string
	if q.QueryRowContext(ctx, "SELECT @@global.version").Scan(&v) != nil {
		return ""
	}
	if b := FromVersion(v, ""); b != Vitess {
		return b
	}
	return ""
}

// FromVersion is the flavour that VERSION() and @@version_comment name,
// without asking the server anything more: a Galera node reads as MariaDB
// and Dolt as MySQL here.
func FromVersion(version, comment string) Name {
	v, c := strings.ToLower(version), strings.ToLower(comment)
	switch {
	case strings.Contains(v, "tidb"):
		return TiDB
	case strings.Contains(v, "vitess") || strings.Contains(c, "vitess"):
		return Vitess
	case strings.Contains(v, "go-mysql-server"):
		return GMS
	case strings.Contains(v, "mariadb") || strings.Contains(c, "mariadb"):
		return MariaDB
	case strings.Contains(c, "percona"):
		return Percona
	default:
		return MySQL
	}
}

func isOn(s string) bool {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "1", "ON", "TRUE", "YES":
		return true
	}
	return false
}
