package flavour

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Collations are the collations a server accepts, by name (lower case),
// each with its character set: what SHOW COLLATION lists. TiDB with its
// new collations on (the default) lists a dozen, and refuses the others
// (1273, e.g. latin1_swedish_ci, MariaDB's default for latin1).
type Collations map[string]string

// Nearest returns the collation of c nearest to want, and whether it
// differs from want. The nearest keeps the character set (utf8mb3 and
// utf8 are one) and, in order: the same collation under the other
// spelling of the set, then a case-insensitive one for a case-insensitive
// want (general, unicode, 0900_ai), a binary one otherwise or when the set
// has no other; where the set itself is missing, the same in utf8mb4. An
// empty c (a server that lists none) accepts everything.
func (c Collations) Nearest(want string) (string, bool) {
	w := strings.ToLower(want)
	if _, ok := c[w]; ok || len(c) == 0 || w == "" {
		return want, false
	}
	cs, rest, _ := strings.Cut(w, "_")
	sets := []string{cs}
	switch cs {
	case "utf8mb3":
		sets = append(sets, "utf8")
	case "utf8":
		sets = append(sets, "utf8mb3")
	}
	for _, s := range sets {
		if _, ok := c[s+"_"+rest]; ok {
			return s + "_" + rest, true
		}
	}
	insensitive := strings.HasSuffix(w, "_ci")
	var prefer []string
	if insensitive {
		prefer = []string{"general_ci", "unicode_ci", "0900_ai_ci", "unicode_520_ci"}
	}
	prefer = append(prefer, "bin", "0900_bin")
	for _, s := range append(sets, "utf8mb4") {
		for _, p := range prefer {
			if _, ok := c[s+"_"+p]; ok {
				return s + "_" + p, true
			}
		}
		// Any collation of the set, the same way round, in a stable order.
		var same []string
		for name, set := range c {
			if set == s && strings.HasSuffix(name, "_ci") == insensitive {
				same = append(same, name)
			}
		}
		if len(same) > 0 {
			sort.Strings(same)
			return same[0], true
		}
	}
	return want, false
}

// collateRE finds a collation named in DDL: COLLATE x, COLLATE=x, and
// the quoted forms SHOW CREATE gives on some servers.
var collateRE = regexp.MustCompile("(?i)(\\bCOLLATE(?:\\s*=\\s*|\\s+))([`'\"]?)([A-Za-z0-9_]+)\\b([`'\"]?)")

// Rewrite replaces in stmt every collation c lacks with the nearest it
// has, calling changed (if not nil) with each replacement made.
func (c Collations) Rewrite(stmt string, changed func(from, to string)) string {
	if len(c) == 0 {
		return stmt
	}
	return collateRE.ReplaceAllStringFunc(stmt, func(m string) string {
		p := collateRE.FindStringSubmatch(m)
		to, diff := c.Nearest(p[3])
		if !diff {
			return m
		}
		if changed != nil {
			changed(strings.ToLower(p[3]), to)
		}
		return p[1] + p[2] + to + p[4]
	})
}

// CaseChange says how a mapped collation changes comparisons, for the
// note a copy prints: "" when both are case-insensitive or both are not.
func CaseChange(from, to string) string {
	fi, ti := strings.HasSuffix(from, "_ci"), strings.HasSuffix(to, "_ci")
	switch {
	case fi && !ti:
		return "comparisons and unique keys become case-sensitive"
	case !fi && ti:
		return "comparisons and unique keys become case-insensitive"
	}
	return ""
}

// Lister is what ReadCollations needs of a pool.
type Lister interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// ReadCollations lists the collations a server accepts, within a bound of
// its own (readBound).
func ReadCollations(ctx context.Context, q Lister) (Collations, error) {
	ctx, cancel := context.WithTimeout(ctx, readBound)
	defer cancel()
	rows, err := q.QueryContext(ctx, "SELECT COLLATION_NAME, CHARACTER_SET_NAME FROM information_schema.COLLATIONS")
	if err != nil {
		return nil, fmt.Errorf("list collations: %w", err)
	}
	defer rows.Close()
	c := Collations{}
	for rows.Next() {
		var name, set sql.NullString
		if err := rows.Scan(&name, &set); err != nil {
			return nil, fmt.Errorf("list collations: %w", err)
		}
		c[strings.ToLower(name.String)] = strings.ToLower(set.String)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list collations: %w", err)
	}
	return c, nil
}
