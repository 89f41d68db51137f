package dbcopy

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/target"
)

// copyAccounts creates on the target the accounts that hold privileges on
// the copied databases (by the source's information_schema), each with
// its authentication as SHOW CREATE USER gives it (a password hash, never
// a password), and grants them what they hold on those databases and
// their tables, under the target databases' names. An account the target
// has already is kept as it is; its grants on the copied databases are
// added. Global privileges are not copied: the target's administrators
// decide those. Statements here carry password hashes: no error quotes
// one.
func (c *copier) copyAccounts(ctx context.Context) error {
	dstOf := map[string]string{}
	for _, p := range c.pairs {
		dstOf[p.Source] = p.Target
	}
	grantees, err := c.grantees(ctx)
	if err != nil {
		return err
	}
	for _, g := range grantees {
		m, err := showCreate(ctx, c.src.DB, "SHOW CREATE USER "+g)
		if err != nil {
			return fmt.Errorf("source: read account %s: %w", g, err)
		}
		create := ""
		for k, v := range m {
			if strings.HasPrefix(k, "create user") {
				create = v
			}
		}
		if !strings.HasPrefix(create, "CREATE USER ") {
			return fmt.Errorf("source: read account %s: SHOW CREATE USER gave no CREATE USER statement", g)
		}
		create = "CREATE USER IF NOT EXISTS " + strings.TrimPrefix(create, "CREATE USER ")
		if _, err := c.dst.DB.ExecContext(ctx, create); err != nil {
			return fmt.Errorf("target: create account %s: %w", g, redactHash(err))
		}
		grants, err := showGrants(ctx, c.src.DB, g)
		if err != nil {
			return err
		}
		for _, gr := range grants {
			stmt, ok := grantOn(gr, dstOf)
			if !ok {
				continue
			}
			if _, err := c.dst.DB.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("target: grant to %s: %w", g, redactHash(err))
			}
		}
	}
	c.res.Accounts = len(grantees)
	return nil
}

// grantees are the accounts ('user'@'host') with privileges on a copied
// database or its tables or columns on the source.
func (c *copier) grantees(ctx context.Context) ([]string, error) {
	var dbs []any
	marks := make([]string, 0, len(c.pairs))
	for _, p := range c.pairs {
		dbs = append(dbs, p.Source)
		marks = append(marks, "?")
	}
	in := "(" + strings.Join(marks, ", ") + ")"
	q := "SELECT GRANTEE, '' FROM information_schema.SCHEMA_PRIVILEGES WHERE TABLE_SCHEMA IN " + in +
		" UNION SELECT GRANTEE, '' FROM information_schema.TABLE_PRIVILEGES WHERE TABLE_SCHEMA IN " + in +
		" UNION SELECT GRANTEE, '' FROM information_schema.COLUMN_PRIVILEGES WHERE TABLE_SCHEMA IN " + in + " ORDER BY 1"
	args := append(append(append([]any{}, dbs...), dbs...), dbs...)
	rows, err := names(ctx, c.src.DB, q, args...)
	if err != nil {
		return nil, fmt.Errorf("source: list accounts with privileges on the copied databases: %w", err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r[0]
	}
	return out, nil
}

func showGrants(ctx context.Context, q target.Querier, grantee string) ([]string, error) {
	out, err := target.QueryAll(ctx, q, target.ScanString, "SHOW GRANTS FOR "+grantee)
	if err != nil {
		return nil, fmt.Errorf("source: read grants of %s: %w", grantee, err)
	}
	return out, nil
}

// grantOnDB finds the database a GRANT line is on: "GRANT ... ON `db`.*
// TO" or "ON `db`.`table` TO"; global ("*.*") lines do not match.
var grantOnDB = regexp.MustCompile("^(GRANT .+? ON (?:PROCEDURE |FUNCTION )?)`((?:[^`]|``)+)`(\\..+ TO .+)$")

// grantOn is a source GRANT line for the target, when it is on a copied
// database (dstOf: source database -> target database), under the target
// database's name.
func grantOn(line string, dstOf map[string]string) (string, bool) {
	m := grantOnDB.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	db := strings.ReplaceAll(m[2], "``", "`")
	to, ok := dstOf[db]
	if !ok {
		return "", false
	}
	return m[1] + escape.Ident(to) + m[3], true
}

// redactHash keeps a password hash that a server might quote out of an
// error.
func redactHash(err error) error {
	msg := passwordClause.ReplaceAllString(err.Error(), "$1 '<redacted>'")
	if msg == err.Error() {
		return err
	}
	return fmt.Errorf("%s", msg)
}

var passwordClause = regexp.MustCompile(`(?i)(PASSWORD|AS)\s+'[^']*'`)
