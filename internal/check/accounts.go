package check

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/shakedown/shakedown/internal/escape"
)

// checkAccounts compares every account of the source with the target's by
// what it may do.
func (r *runner) checkAccounts() {
	ok := true
	for _, id := range []string{"missing_account", "fewer_privileges"} {
		for _, s := range []*snapshot{r.src, r.dst} {
			if !r.have(id, s, "accounts", "privileges", "roles", "procs_priv", "global_grants") {
				ok = false
			}
		}
	}
	if !ok {
		return
	}
	known := r.dst.privNames // empty when SHOW PRIVILEGES failed: then every privilege is compared
	unknown := map[string][]string{}
	names := slices.Sorted(maps.Keys(r.src.accounts))
	for _, n := range names {
		a := r.src.accounts[n]
		if skipped(a, r.opts.SkipAccounts) {
			r.rep.AccountsSkipped = append(r.rep.AccountsSkipped, n)
			continue
		}
		what := "account " + n
		if a.role {
			what = "role " + strings.Trim(a.user, "'")
		}
		if r.dst.accounts[n] == nil {
			why := what + " exists on the source but not on the target: clients that log in with it are refused"
			fix := "create it on the target with the same privileges: SHOW CREATE USER and SHOW GRANTS FOR " + n + " on the source print the statements"
			if a.role {
				why = what + " exists on the source but not on the target: accounts granted it lose what it allows"
				fix = "CREATE ROLE on the target and grant it as on the source: SHOW GRANTS FOR " + strings.Trim(a.user, "'") + " on the source prints the statements"
			}
			r.add("missing_account", Error, n, why, fix)
			continue
		}
		have := r.dst.effective(n)
		var missing []priv
		for p := range r.src.effective(n) {
			if len(known) > 0 && !known[p.name] {
				unknown[p.name] = append(unknown[p.name], n)
				continue
			}
			if !covers(have, p) {
				missing = append(missing, p)
			}
		}
		if len(missing) == 0 {
			continue
		}
		r.add("fewer_privileges", Error, n,
			fmt.Sprintf("%s may do less on the target: it lacks %s; statements that work on the source fail with access denied",
				what, list(sortedPrivs(missing), 8)),
			grantStatements(missing, n))
	}
	for _, n := range slices.Sorted(maps.Keys(r.dst.accounts)) {
		a := r.dst.accounts[n]
		if r.src.accounts[n] == nil && !skipped(a, r.opts.SkipAccounts) {
			r.add("extra_account", Notice, n, "this account exists only on the target", "keep it if the target needs it; drop it otherwise")
		}
	}
	for _, p := range slices.Sorted(maps.Keys(unknown)) {
		accts := dedupe(unknown[p])
		r.add("unknown_privilege", Notice, p,
			fmt.Sprintf("the target (%s) has no %s privilege, which %s hold(s) on the source", r.dst.server.name(), p, list(accts, 5)),
			"grant the target's equivalent, if it has one, by hand")
	}
}

// grantStatements writes the GRANTs that would give an account the missing
// privileges, one per scope.
func grantStatements(missing []priv, account string) string {
	type scope struct{ db, table, column string }
	by := map[scope][]string{}
	for _, p := range missing {
		s := scope{p.db, p.table, ""}
		name := p.name
		if p.column != "" {
			name += " (" + escape.Ident(p.column) + ")"
		}
		by[s] = append(by[s], name)
	}
	var out []string
	for s, names := range by {
		sort.Strings(names)
		grantOpt := false
		var plain []string
		for _, n := range names {
			if n == "GRANT OPTION" {
				grantOpt = true
				continue
			}
			plain = append(plain, n)
		}
		on := "*.*"
		switch {
		case s.db == "":
		case s.table == "":
			on = escape.Ident(s.db) + ".*"
		case strings.HasPrefix(s.table, "PROCEDURE ") || strings.HasPrefix(s.table, "FUNCTION "):
			kind, name, _ := strings.Cut(s.table, " ")
			on = kind + " " + escape.Qualified(s.db, name)
		default:
			on = escape.Qualified(s.db, s.table)
		}
		stmt := "GRANT " + strings.Join(plain, ", ") + " ON " + on + " TO " + account
		if len(plain) == 0 {
			stmt = "GRANT USAGE ON " + on + " TO " + account
		}
		if grantOpt {
			stmt += " WITH GRANT OPTION"
		}
		out = append(out, stmt+";")
	}
	sort.Strings(out)
	return "on the target: " + strings.Join(out, " ")
}

// migrationNeed is one right a migration tool needs on the source.
type migrationNeed struct {
	anyOf  []string // canonical privilege names, any of which will do
	perDB  bool     // needed on every migrated database (else globally)
	reason string
}

// binlogNeeds are the rights that following the binary log takes: the
// migration tool's, and shakedown's own follower's (FollowPrerequisites).
var binlogNeeds = []migrationNeed{
	{[]string{"REPLICATION SLAVE"}, false, "read the binary log"},
	{[]string{"REPLICATION CLIENT", "SUPER"}, false, "read binary log positions (SHOW MASTER STATUS)"},
}

var migrationNeeds = append(slices.Clip(binlogNeeds), []migrationNeed{
	{[]string{"SELECT"}, true, "read the tables"},
	{[]string{"RELOAD", "FLUSH TABLES"}, false, "take a consistent snapshot (FLUSH TABLES WITH READ LOCK)"},
	{[]string{"LOCK TABLES"}, true, "lock tables where a global read lock is refused"},
}...)

// lacking is the scopes of n that the privileges in have do not cover:
// *.*, or each of dbs where n is needed per database. Each is named by
// n's first privilege.
func (n migrationNeed) lacking(have map[priv]bool, dbs []string) []priv {
	scopes := []priv{{}}
	if n.perDB {
		scopes = nil
		for _, db := range dbs {
			scopes = append(scopes, priv{db: db})
		}
	}
	var short []priv
	for _, sc := range scopes {
		ok := false
		for _, pn := range n.anyOf {
			sc.name = pn
			if covers(have, sc) {
				ok = true
				break
			}
		}
		if !ok {
			sc.name = n.anyOf[0]
			short = append(short, sc)
		}
	}
	return short
}

// checkMigrationPrivileges checks the account a migration tool uses on the
// source (DM's, DMS's and Debezium's list).
func (r *runner) checkMigrationPrivileges() {
	const id = "migration_privileges"
	if !r.have(id, r.src, "privileges", "user") {
		return
	}
	name := r.src.user
	if r.opts.MigrationUser != "" {
		u, h, _ := strings.Cut(r.opts.MigrationUser, "@")
		name = accountName(u, h)
	}
	if r.src.accounts[name] == nil {
		if name != r.src.user && !r.have(id, r.src, "accounts") {
			return
		}
		r.add(id, Error, name, "the migration account "+name+" does not exist on the source",
			"create it, or name the right one with --migration-user 'user'@'host'")
		return
	}
	have := r.src.effective(name)
	var lacks, grants []string
	for _, n := range migrationNeeds {
		if short := n.lacking(have, r.src.dbs); len(short) > 0 {
			lacks = append(lacks, fmt.Sprintf("%s (to %s)", list(sortedPrivs(short), 3), n.reason))
			for _, p := range short {
				on := "*.*"
				if p.db != "" {
					on = escape.Ident(p.db) + ".*"
				}
				grants = append(grants, fmt.Sprintf("GRANT %s ON %s TO %s;", p.name, on, name))
			}
		}
	}
	if len(lacks) == 0 {
		return
	}
	r.add(id, Error, name,
		"the migration account lacks "+strings.Join(lacks, ", ")+": a tool that copies the data and then follows the binary log stops there",
		"on the source: "+strings.Join(grants, " "))
}

func dedupe(xs []string) []string {
	sort.Strings(xs)
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}
