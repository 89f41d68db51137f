package check

import (
	"context"
	"database/sql"
	"sort"
	"strings"

	"github.com/shakedown/shakedown/internal/target"
)

// account is one account (or role) and what it may do: privileges at their
// scopes, and the roles granted to it. Comparing these, rather than the
// text of GRANT statements, makes GRANT ALL and its expansion, or one
// grant and several, read the same.
type account struct {
	user, host string
	plugin     string
	role       bool
	privs      map[priv]bool
	roles      []string // account names of granted roles
}

// priv is one privilege at one scope: global (db ""), a database (table
// ""), a table (column ""), a column, or a routine (table "PROCEDURE p").
type priv struct {
	name, db, table, column string
}

func (p priv) String() string {
	switch {
	case p.db == "":
		return p.name + " ON *.*"
	case p.table == "":
		return p.name + " ON " + p.db + ".*"
	case p.column != "":
		return p.name + " (" + p.column + ") ON " + p.db + "." + p.table
	}
	return p.name + " ON " + p.db + "." + p.table
}

func accountName(user, host string) string {
	return "'" + strings.Trim(user, "'") + "'@'" + strings.Trim(host, "'") + "'"
}

// parseGrantee reads information_schema's 'user'@'host'.
func parseGrantee(g string) (string, string) {
	user, host, _ := strings.Cut(g, "'@'")
	return strings.Trim(user, "'"), strings.Trim(host, "'")
}

// privAliases map privileges one flavour renamed or split to the name the
// other uses, so that the same right compares equal.
var privAliases = map[string]string{
	"BINLOG MONITOR":      "REPLICATION CLIENT",
	"SLAVE MONITOR":       "REPLICATION CLIENT",
	"REPLICA MONITOR":     "REPLICATION CLIENT",
	"REPLICATION REPLICA": "REPLICATION SLAVE",
}

// canonPriv is a privilege name in one spelling: upper case, words
// separated by spaces (MySQL's dynamic privileges use '_').
func canonPriv(name string) string {
	n := strings.ToUpper(strings.TrimSpace(strings.ReplaceAll(name, "_", " ")))
	if a, ok := privAliases[n]; ok {
		return a
	}
	return n
}

// readAccounts reads every account with its plugin, and every privilege
// from information_schema's privilege tables, which list all accounts'
// rows only to a user who may read the mysql schema; the grants of roles
// and routines come from mysql's own tables.
func (s *snapshot) readAccounts(ctx context.Context) error {
	s.accounts = map[string]*account{}
	get := func(user, host string) *account {
		n := accountName(user, host)
		a := s.accounts[n]
		if a == nil {
			a = &account{user: user, host: host, privs: map[priv]bool{}}
			s.accounts[n] = a
		}
		return a
	}
	q := `SELECT User, Host, plugin, 'N' FROM mysql.user`
	if s.server.flavour == "mariadb" {
		q = `SELECT User, Host, plugin, is_role FROM mysql.user`
	}
	if _, err := s.query(ctx, "accounts", "mysql.user", "SELECT on mysql.user", q, nil, func(rows *sql.Rows) error {
		var user, host string
		var plugin, isRole sql.NullString
		if err := rows.Scan(&user, &host, &plugin, &isRole); err != nil {
			return err
		}
		a := get(user, host)
		a.plugin, a.role = strings.ToLower(plugin.String), isRole.String == "Y"
		return nil
	}); err != nil {
		return err
	}
	add := func(grantee, grantable string, p priv) {
		user, host := parseGrantee(grantee)
		a := get(user, host)
		p.name = canonPriv(p.name)
		if p.name == "USAGE" {
			return
		}
		a.privs[p] = true
		if strings.EqualFold(grantable, "YES") {
			g := p
			g.name = "GRANT OPTION"
			a.privs[g] = true
		}
	}
	sources := []struct{ table, q string }{
		{"information_schema.USER_PRIVILEGES", `SELECT GRANTEE, IS_GRANTABLE, PRIVILEGE_TYPE, '', '', '' FROM information_schema.USER_PRIVILEGES`},
		{"information_schema.SCHEMA_PRIVILEGES", `SELECT GRANTEE, IS_GRANTABLE, PRIVILEGE_TYPE, TABLE_SCHEMA, '', '' FROM information_schema.SCHEMA_PRIVILEGES`},
		{"information_schema.TABLE_PRIVILEGES", `SELECT GRANTEE, IS_GRANTABLE, PRIVILEGE_TYPE, TABLE_SCHEMA, TABLE_NAME, '' FROM information_schema.TABLE_PRIVILEGES`},
		{"information_schema.COLUMN_PRIVILEGES", `SELECT GRANTEE, IS_GRANTABLE, PRIVILEGE_TYPE, TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMN_PRIVILEGES`},
	}
	for _, src := range sources {
		if _, err := s.query(ctx, "privileges", src.table, "SELECT on mysql.*", src.q, nil, func(rows *sql.Rows) error {
			var grantee, grantable, name string
			var p priv
			if err := rows.Scan(&grantee, &grantable, &name, &p.db, &p.table, &p.column); err != nil {
				return err
			}
			p.name = name
			add(grantee, grantable, p)
			return nil
		}); err != nil {
			return err
		}
	}
	// The tables below do not exist on every server: a missing one means
	// the feature (roles, dynamic privileges) is not there.
	optional := func(item, table, q string, scan func(*sql.Rows) error) error {
		_, err := s.query(ctx, item, table, "SELECT on "+table, q, nil, scan)
		if nc, failed := s.failed[item]; failed && nc.Missing != "" {
			delete(s.failed, item)
		}
		return err
	}
	if err := optional("procs_priv", "mysql.procs_priv", `SELECT User, Host, Db, Routine_name, Routine_type, Proc_priv FROM mysql.procs_priv`,
		func(rows *sql.Rows) error {
			var user, host, db, name, typ, privs string
			if err := rows.Scan(&user, &host, &db, &name, &typ, &privs); err != nil {
				return err
			}
			for _, p := range strings.Split(privs, ",") {
				if p = strings.TrimSpace(p); p == "" {
					continue
				}
				if strings.EqualFold(p, "Grant") {
					p = "GRANT OPTION"
				}
				add(accountName(user, host), "NO", priv{name: p, db: db, table: strings.ToUpper(typ) + " " + name})
			}
			return nil
		}); err != nil {
		return err
	}
	if s.server.flavour == "mariadb" {
		return optional("roles", "mysql.roles_mapping", `SELECT User, Host, Role FROM mysql.roles_mapping`, func(rows *sql.Rows) error {
			var user, host, role string
			if err := rows.Scan(&user, &host, &role); err != nil {
				return err
			}
			a := get(user, host)
			a.roles = append(a.roles, accountName(role, ""))
			return nil
		})
	}
	if err := optional("roles", "mysql.role_edges", `SELECT FROM_USER, FROM_HOST, TO_USER, TO_HOST FROM mysql.role_edges`, func(rows *sql.Rows) error {
		var fu, fh, tu, th string
		if err := rows.Scan(&fu, &fh, &tu, &th); err != nil {
			return err
		}
		a := get(tu, th)
		a.roles = append(a.roles, accountName(fu, fh))
		return nil
	}); err != nil {
		return err
	}
	return optional("global_grants", "mysql.global_grants", `SELECT USER, HOST, PRIV, WITH_GRANT_OPTION FROM mysql.global_grants`, func(rows *sql.Rows) error {
		var user, host, name, grantable string
		if err := rows.Scan(&user, &host, &name, &grantable); err != nil {
			return err
		}
		if grantable == "Y" {
			grantable = "YES"
		}
		add(accountName(user, host), grantable, priv{name: name})
		return nil
	})
}

// readPrivilegeNames reads the privileges the server knows.
func (s *snapshot) readPrivilegeNames(ctx context.Context) error {
	s.privNames = map[string]bool{}
	_, err := s.query(ctx, "privnames", "SHOW PRIVILEGES", "", `SHOW PRIVILEGES`, nil, func(rows *sql.Rows) error {
		name, err := target.FirstColumn(rows)
		if err != nil {
			return err
		}
		s.privNames[canonPriv(name)] = true
		return nil
	})
	if len(s.privNames) > 0 {
		s.privNames["GRANT OPTION"] = true
	}
	return err
}

// effective is what an account may do with every role granted to it
// active.
func (s *snapshot) effective(name string) map[priv]bool {
	out := map[priv]bool{}
	seen := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		a := s.accounts[n]
		if a == nil {
			return
		}
		for p := range a.privs {
			out[p] = true
		}
		for _, r := range a.roles {
			walk(r)
		}
	}
	walk(name)
	return out
}

// covers reports whether the privileges in have allow p: the same
// privilege at p's scope or a wider one. Database-level grants may name
// databases with the LIKE wildcards _ and %.
func covers(have map[priv]bool, p priv) bool {
	for q := range have {
		if q.name != p.name && !(q.name == "ALL PRIVILEGES") {
			continue
		}
		switch {
		case q.db == "":
			return true
		case p.db == "" || !dbMatches(q.db, p.db):
			continue
		case q.table == "":
			return true
		case q.table != p.table:
			continue
		case q.column == "" || q.column == p.column:
			return true
		}
	}
	return false
}

// dbMatches applies a database-level grant's name, which may hold the
// LIKE wildcards _ and % (escaped with \ to mean themselves). It runs in
// O(len(pattern) x len(db)): one % is backtracked to at a time.
func dbMatches(pattern, db string) bool {
	if pattern == db {
		return true
	}
	if !strings.ContainsAny(pattern, "_%") {
		return false
	}
	const (
		lit = iota
		one
		many
	)
	type tok struct {
		kind int
		b    byte
	}
	var toks []tok
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\' && i+1 < len(pattern):
			i++
			toks = append(toks, tok{lit, pattern[i]})
		case c == '_':
			toks = append(toks, tok{kind: one})
		case c == '%':
			if len(toks) == 0 || toks[len(toks)-1].kind != many {
				toks = append(toks, tok{kind: many})
			}
		default:
			toks = append(toks, tok{lit, c})
		}
	}
	ti, si := 0, 0
	star, starSi := -1, 0
	for si < len(db) {
		switch {
		case ti < len(toks) && (toks[ti].kind == one || toks[ti].kind == lit && toks[ti].b == db[si]):
			ti++
			si++
		case ti < len(toks) && toks[ti].kind == many:
			star, starSi = ti, si
			ti++
		case star >= 0:
			starSi++
			ti, si = star+1, starSi
		default:
			return false
		}
	}
	for ti < len(toks) && toks[ti].kind == many {
		ti++
	}
	return ti == len(toks)
}

// skipped reports whether an account is left out of the comparison.
func skipped(a *account, skip []string) bool {
	for _, s := range skip {
		if strings.EqualFold(s, a.user) || s == accountName(a.user, a.host) {
			return true
		}
	}
	return false
}

func sortedPrivs(ps []priv) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	sort.Strings(out)
	return out
}

// readVisibility works out what information_schema hides from the user:
// it lists only the objects a user has some privilege on, without an
// error, so an object the user cannot see would pass silently. The user's
// own privileges are always visible; where they fall short, the objects
// they hide are listed as not checked.
func (s *snapshot) readVisibility(context.Context) error {
	if s.accounts[s.user] == nil {
		return nil // the server did not say: nothing to go on
	}
	own := s.effective(s.user)
	lacking := func(name string) []string {
		var out []string
		for _, db := range s.dbs {
			if !covers(own, priv{name: name, db: db}) {
				out = append(out, name+" on "+db+".*")
			}
		}
		return out
	}
	if l := lacking("TRIGGER"); len(l) > 0 {
		s.fail("triggers", NotChecked{Privilege: strings.Join(l, ", "), Detail: "information_schema.TRIGGERS shows only triggers of tables the user has TRIGGER on"})
	}
	if l := lacking("EVENT"); len(l) > 0 {
		s.fail("events", NotChecked{Privilege: strings.Join(l, ", "), Detail: "information_schema.EVENTS shows only events of databases the user has EVENT on"})
	}
	if !covers(own, priv{name: "SELECT", db: "mysql"}) && !covers(own, priv{name: "SHOW ROUTINE"}) {
		s.fail("routines", NotChecked{Privilege: "SELECT on mysql.* (MySQL 8: or SHOW_ROUTINE)", Detail: "information_schema.ROUTINES shows only routines the user may run or owns"})
	}
	s.hiddenTables = lacking("SELECT")
	if !covers(own, priv{name: "SHOW DATABASES"}) {
		s.fail("databases_hidden", NotChecked{Privilege: "SHOW DATABASES", Detail: "information_schema.SCHEMATA lists only the databases the user has a privilege on"})
	}
	return nil
}

// grantLine is one line of SHOW GRANTS that grants privileges or roles.
type grantLine struct {
	privs []string // as written, column lists dropped: "SELECT", "BINLOG_ADMIN"
	on    string   // "*.*", "`db`.*", "PROCEDURE `db`.`p`", "''@'%'" (PROXY); "" for a grant of roles
}

// parseGrantLine reads a line of SHOW GRANTS, as MariaDB and MySQL write
// it ("GRANT SELECT, INSERT (a, b) ON `db`.* TO `u`@`%` IDENTIFIED BY
// PASSWORD '...' WITH GRANT OPTION", "GRANT `role` TO `u`@`%`"). Lines
// that grant nothing (MySQL's REVOKE of a partial revoke, MariaDB's SET
// DEFAULT ROLE) are not ok. Names in backticks or quotes, and column
// lists, may hold anything: " ON ", commas, parentheses.
func parseGrantLine(line string) (grantLine, bool) {
	line = strings.TrimSpace(line)
	m := grantMask(line)
	if !strings.HasPrefix(m, "GRANT ") {
		return grantLine{}, false
	}
	to := strings.Index(m, " TO ")
	if to < 0 {
		return grantLine{}, false
	}
	end, on := to, ""
	if i := strings.Index(m[:to], " ON "); i >= 0 {
		end, on = i, strings.TrimSpace(line[i+len(" ON "):to])
	}
	var g grantLine
	g.on = on
	start := len("GRANT ")
	for i := start; i <= end; i++ {
		if i < end && m[i] != ',' {
			continue
		}
		// Column lists are masked: the name is what comes before them.
		p := line[start:i]
		if k := strings.IndexByte(m[start:i], 0); k >= 0 {
			p = p[:k]
		}
		if p = strings.TrimSpace(p); p != "" {
			g.privs = append(g.privs, p)
		}
		start = i + 1
	}
	return g, true
}

// grantMask is line in upper case (ASCII only, so that it keeps its
// length) with every byte inside quotes, backticks or parentheses, those
// included, set to 0: what is left is SHOW GRANTS' own keywords, privilege
// names and punctuation.
func grantMask(line string) string {
	b := []byte(line)
	var quote byte
	depth := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case quote != 0:
			if c == '\\' && quote != '`' && i+1 < len(b) {
				b[i] = 0
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '`' || c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth == 0:
			if 'a' <= c && c <= 'z' {
				b[i] = c - 'a' + 'A'
			}
			continue
		}
		b[i] = 0
	}
	return string(b)
}

// globalGrants is the privileges on *.* that lines of SHOW GRANTS give,
// in canonPriv's spelling ("ALL" is ALL PRIVILEGES). Grants of other
// scopes, of roles and of PROXY are passed over.
//
// MariaDB's SLAVE MONITOR (REPLICA MONITOR) keeps its own name here,
// unlike in privAliases: comparing accounts across flavours, it is one
// half of MySQL's REPLICATION CLIENT; to read the binary log's position
// it is nothing, and only BINLOG MONITOR (which REPLICATION CLIENT
// names on MariaDB 10.5.2 and later) is.
func globalGrants(lines []string) map[priv]bool {
	out := map[priv]bool{}
	for _, l := range lines {
		g, ok := parseGrantLine(l)
		if !ok || g.on != "*.*" {
			continue
		}
		for _, p := range g.privs {
			n := strings.ToUpper(strings.Join(strings.Fields(strings.ReplaceAll(p, "_", " ")), " "))
			switch n {
			case "ALL":
				n = "ALL PRIVILEGES"
			case "SLAVE MONITOR", "REPLICA MONITOR":
				n = "SLAVE MONITOR"
			case "USAGE":
				continue
			default:
				n = canonPriv(n)
			}
			out[priv{name: n}] = true
		}
	}
	return out
}
