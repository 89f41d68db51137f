package check

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/vars"
)

// followBound bounds each of FollowPrerequisites' reads.
const followBound = 30 * time.Second

// Prerequisite is one thing a binlog follower needs from its source that the source lacks.
type Prerequisite struct {
	Setting string // what is missing: "binlog_format", "log_bin", "REPLICATION SLAVE", "table shop.logs" ...
	Problem string // one sentence: what is wrong now, with the current value
	Fix     string // what to do, e.g. "SET GLOBAL binlog_format = 'ROW' ..."
}

// FollowPrerequisites reads what a follower of src's binary log needs and returns what is missing
// (empty when nothing is). dbs are the source databases that will be followed.
//
// It applies check's own rules (those of binlog_off, binlog_format,
// binlog_row_image, server_id, migration_privileges and no_primary_key)
// and only reads: the global variables, the current user's grants and the
// keys of dbs' base tables, each read bounded by 30 seconds. Everything
// missing is listed at once, in that order. A flavour without a binary log
// of the MySQL kind (f.Binlog() false: TiDB, Vitess, Dolt) is one
// Prerequisite, and nothing is read. An error is a failed read; src is
// the caller's to close.
func FollowPrerequisites(ctx context.Context, src *sql.DB, f flavour.Name, dbs []string) ([]Prerequisite, error) {
	if !f.Binlog() {
		problem, fix := noBinlog(f)
		return []Prerequisite{{Setting: "binary log", Problem: problem, Fix: fix}}, nil
	}
	v, err := within(ctx, func(ctx context.Context) (map[string]string, error) { return vars.Collect(ctx, src) })
	if err != nil {
		return nil, fmt.Errorf("source: read variables: %w", err)
	}
	var out []Prerequisite
	for _, b := range binlogSettings(v) {
		out = append(out, Prerequisite{Setting: b.setting, Problem: b.problem, Fix: b.fix})
	}
	user, err := within(ctx, func(ctx context.Context) (string, error) {
		var u string
		err := src.QueryRowContext(ctx, `SELECT CURRENT_USER()`).Scan(&u)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("source: read current user: %w", err)
	}
	at := strings.LastIndex(user, "@")
	if at < 0 {
		at = len(user)
		user += "@"
	}
	name := accountName(user[:at], user[at+1:])
	lines, err := ownGrants(ctx, src, f)
	if err != nil {
		return nil, err
	}
	out = append(out, binlogPrivileges(lines, name, f)...)
	keyless, err := keylessTables(ctx, src, f, dbs)
	if err != nil {
		return nil, err
	}
	return append(out, keyless...), nil
}

// within runs read with a context bounded by followBound.
func within[T any](ctx context.Context, read func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, followBound)
	defer cancel()
	return read(ctx)
}

// ownGrants reads SHOW GRANTS for the current session's user with its
// active roles. MariaDB lists the current role's grants with the user's
// (a default role is current from login); MySQL lists only the roles'
// names unless asked USING them, so there the active ones (CURRENT_ROLE(),
// which MySQL 5.7 lacks and so is asked only once a role is granted) are
// named.
func ownGrants(ctx context.Context, src *sql.DB, f flavour.Name) ([]string, error) {
	show := func(q string) ([]string, error) {
		lines, err := within(ctx, func(ctx context.Context) ([]string, error) {
			return target.QueryAll(ctx, src, target.ScanString, q)
		})
		if err != nil {
			return nil, fmt.Errorf("source: read grants (%s): %w", q, err)
		}
		return lines, nil
	}
	lines, err := show(`SHOW GRANTS`)
	if err != nil || f.IsMariaDB() || !slices.ContainsFunc(lines, grantsRole) {
		return lines, err
	}
	roles, err := within(ctx, func(ctx context.Context) (string, error) {
		var r sql.NullString
		err := src.QueryRowContext(ctx, `SELECT CURRENT_ROLE()`).Scan(&r)
		return r.String, err
	})
	if err != nil {
		return nil, fmt.Errorf("source: read active roles: %w", err)
	}
	if roles == "" || strings.EqualFold(roles, "NONE") {
		return lines, nil
	}
	return show(`SHOW GRANTS FOR CURRENT_USER() USING ` + roles)
}

// grantsRole reports whether a line of SHOW GRANTS grants roles.
func grantsRole(line string) bool {
	g, ok := parseGrantLine(line)
	return ok && g.on == ""
}

// binlogPrivileges is what the account name lacks of binlogNeeds, given
// its lines of SHOW GRANTS; f words the fix.
func binlogPrivileges(lines []string, name string, f flavour.Name) []Prerequisite {
	have := globalGrants(lines)
	var out []Prerequisite
	for _, n := range binlogNeeds {
		for _, p := range n.lacking(have, nil) {
			alias := ""
			if p.name == "REPLICATION CLIENT" && f.IsMariaDB() {
				alias = " (BINLOG MONITOR on MariaDB 10.5.2 and later)"
			}
			out = append(out, Prerequisite{
				Setting: p.name,
				Problem: fmt.Sprintf("%s lacks %s%s: a follower of the binary log needs it to %s", name, p, alias, n.reason),
				Fix:     fmt.Sprintf("on the source: GRANT %s ON *.* TO %s", p.name, name),
			})
		}
	}
	return out
}

// keylessTables is a Prerequisite for each base table of dbs that has no
// key a row event can be matched by (rowKey), in name order.
//
// The tables, their columns and their indexes are three reads of
// information_schema, which DDL between them can make disagree (a table
// created with its primary key, seen before its index is): a table found
// keyless is read again, and only one keyless in both reads is reported.
func keylessTables(ctx context.Context, src *sql.DB, f flavour.Name, dbs []string) ([]Prerequisite, error) {
	if len(dbs) == 0 {
		return nil, nil
	}
	side := &schema.Side{Role: "source", DB: src, Server: target.Server{Flavour: f}}
	read := func() ([]string, error) {
		tables, err := within(ctx, func(ctx context.Context) (map[string]*schema.Table, error) { return schema.Load(ctx, side, dbs) })
		if err != nil {
			return nil, fmt.Errorf("source: read tables: %w", err)
		}
		return keyless(tables), nil
	}
	first, err := read()
	if err != nil || len(first) == 0 {
		return nil, err
	}
	again, err := read()
	if err != nil {
		return nil, err
	}
	var out []Prerequisite
	for _, n := range first {
		if slices.Contains(again, n) {
			out = append(out, Prerequisite{Setting: "table " + n, Problem: n + " has " + noRowKeyProblem, Fix: addPrimaryKey(n)})
		}
	}
	return out, nil
}

// keyless names the tables of tables without a key a row change can be
// matched by, sorted.
func keyless(tables map[string]*schema.Table) []string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(tables)) {
		if primary, usable := rowKey(tables[n]); !primary && usable == nil {
			out = append(out, n)
		}
	}
	return out
}
