package check

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/vars"
)

// checkVariables reads the variables diff (internal/vars' normalisation)
// for the settings that change what statements return.
func (r *runner) checkVariables() {
	if !r.haveBoth("sql_mode", "variables") {
		return
	}
	r.rep.Variables = vars.Diff(r.src.vars, r.dst.vars)
	sv, dv := r.src.vars, r.dst.vars
	differs := func(name string) (string, string, bool) {
		a, okA := sv[name]
		b, okB := dv[name]
		if !okA || !okB {
			return a, b, false
		}
		return a, b, vars.Normalize(a) != vars.Normalize(b)
	}
	fixSet := func(name, value string) string {
		return fmt.Sprintf("SET GLOBAL %s = '%s' on the target and put it in its configuration file, or test the application with the target's value", name, value)
	}

	if a, b, ok := differs("sql_mode"); ok {
		r.add("sql_mode", Warning, "sql_mode", sqlModeMessage(a, b), fixSet("sql_mode", a))
	}
	if a, b, ok := differs("character_set_server"); ok {
		r.add("default_charset", Warning, "character_set_server",
			fmt.Sprintf("source %s, target %s: databases and tables created without a character set get a different one, and so do string literals compared with them", a, b),
			fixSet("character_set_server", a))
	}
	if a, b, ok := differs("collation_server"); ok {
		r.add("default_collation", Warning, "collation_server",
			fmt.Sprintf("source %s, target %s: new tables compare, sort and enforce uniqueness differently (case, accents, trailing spaces)", a, b),
			fixSet("collation_server", a))
	}
	if a, b, ok := differs("lower_case_table_names"); ok {
		sev, msg := Warning, fmt.Sprintf("source %s, target %s: statements that name a table in another case than it was created with work on one side and fail on the other", a, b)
		if b != "0" && a == "0" {
			if clash := r.caseClashes(); len(clash) > 0 {
				sev = Error
				msg += "; these names differ only in case and become one on the target: " + list(clash, 5)
			}
		}
		fix := "lower_case_table_names can only be set when the target's data directory is created: create it with the source's value, or make every statement use the names' exact case"
		if f := r.dst.side.Server.Flavour; f.FixedValue("lower_case_table_names") != "" {
			fix = fmt.Sprintf("%s allows lower_case_table_names = %s only: make every statement use the names' exact case", f.Title(), f.FixedValue("lower_case_table_names"))
		}
		r.add("lower_case_table_names", sev, "lower_case_table_names", msg, fix)
	}
	r.checkTimeZone()
	if a, b, ok := differs("explicit_defaults_for_timestamp"); ok {
		r.add("explicit_defaults_for_timestamp", Warning, "explicit_defaults_for_timestamp",
			fmt.Sprintf("source %s, target %s: TIMESTAMP columns created without DEFAULT or NULL get different defaults, automatic updates and nullability; inserts that leave them out store different values", a, b),
			fixSet("explicit_defaults_for_timestamp", a))
	}
	iso := "transaction_isolation"
	if _, ok := sv[iso]; !ok {
		iso = "tx_isolation"
	}
	if a, b, ok := differs(iso); ok {
		r.add("transaction_isolation", Warning, iso,
			fmt.Sprintf("source %s, target %s: concurrent transactions see different rows and take different locks (REPEATABLE-READ keeps read views and gap locks that READ-COMMITTED does not)", a, b),
			fixSet(iso, a))
	}
	if a, b, ok := differs("autocommit"); ok {
		r.add("autocommit", Warning, "autocommit",
			fmt.Sprintf("source %s, target %s: with autocommit off, writes of clients that never COMMIT are rolled back when they disconnect", a, b),
			fixSet("autocommit", a))
	}
	r.smaller("max_allowed_packet", "statements and rows larger than the target's limit are refused (error 1153 or 1301)")
	r.smaller("group_concat_max_len", "GROUP_CONCAT results longer than the target's limit are cut, with only a warning")

	sp, dp := defaultAuthPlugin(r.src), defaultAuthPlugin(r.dst)
	if sp != "" && dp != "" && sp != dp {
		r.add("default_auth_plugin", Warning, "default authentication plugin",
			fmt.Sprintf("source %s, target %s: accounts created on the target without a plugin use %s; clients and connectors that do not support it cannot log in with them", sp, dp, dp),
			fmt.Sprintf("create accounts IDENTIFIED WITH %s, or check every client's connector supports %s", sp, dp))
	}
}

// smaller flags a target whose limit is below the source's.
func (r *runner) smaller(name, why string) {
	a, err1 := strconv.ParseFloat(strings.TrimSpace(r.src.vars[name]), 64)
	b, err2 := strconv.ParseFloat(strings.TrimSpace(r.dst.vars[name]), 64)
	if err1 != nil || err2 != nil || b >= a {
		return
	}
	r.add(name, Warning, name, fmt.Sprintf("source %s, target %s: %s", r.src.vars[name], r.dst.vars[name], why),
		fmt.Sprintf("SET GLOBAL %s = %s on the target (and in its configuration file)", name, r.src.vars[name]))
}

// caseClashes lists the source's table names that are equal when case is
// ignored.
func (r *runner) caseClashes() []string {
	by := map[string][]string{}
	for n := range r.src.info {
		by[strings.ToLower(n)] = append(by[strings.ToLower(n)], n)
	}
	var out []string
	for _, ns := range by {
		if len(ns) > 1 {
			sort.Strings(ns)
			out = append(out, strings.Join(ns, " = "))
		}
	}
	sort.Strings(out)
	return out
}

func (r *runner) checkTimeZone() {
	a, b := r.src.vars["time_zone"], r.dst.vars["time_zone"]
	if strings.EqualFold(a, "SYSTEM") {
		a = "SYSTEM (" + r.src.vars["system_time_zone"] + ")"
	}
	if strings.EqualFold(b, "SYSTEM") {
		b = "SYSTEM (" + r.dst.vars["system_time_zone"] + ")"
	}
	if vars.Normalize(a) == vars.Normalize(b) || zoneName(a) == zoneName(b) {
		return
	}
	r.add("time_zone", Warning, "time_zone",
		fmt.Sprintf("source %s, target %s: NOW(), CURDATE() and TIMESTAMP values read back in another zone", a, b),
		"set the target's time_zone to the source's (SET GLOBAL time_zone and the configuration file), or have every client set its session time_zone")
}

// checkTimeZoneTables compares whether named time zones work.
func (r *runner) checkTimeZoneTables() {
	const id = "time_zone_tables"
	if !r.haveBoth(id, "timezones") {
		return
	}
	if r.src.tzLoaded && !r.dst.tzLoaded {
		r.add(id, Warning, "mysql.time_zone*",
			"named time zones work on the source but not on the target: CONVERT_TZ with a zone name returns NULL and SET time_zone = 'Europe/Paris' fails",
			"load the time zone tables on the target: mysql_tzinfo_to_sql /usr/share/zoneinfo | mysql -u root mysql")
	}
}

// defaultAuthPlugin is the plugin an account created without one gets.
func defaultAuthPlugin(s *snapshot) string {
	if p := s.vars["default_authentication_plugin"]; p != "" {
		return strings.ToLower(p)
	}
	if pol := s.vars["authentication_policy"]; pol != "" {
		first := strings.TrimSpace(strings.Split(pol, ",")[0])
		if first == "*" || first == "" {
			return "caching_sha2_password"
		}
		return strings.ToLower(first)
	}
	if s.server.flavour == "mariadb" {
		return "mysql_native_password"
	}
	return ""
}

// checkAuthPlugins flags accounts whose plugin the target lacks: they
// cannot log in there even with the right password.
func (r *runner) checkAuthPlugins() {
	const id = "auth_plugin"
	if !r.have(id, r.src, "accounts") || !r.have(id, r.dst, "plugins") || len(r.dst.authPlugins) == 0 {
		return
	}
	by := map[string][]string{}
	for _, n := range slices.Sorted(maps.Keys(r.src.accounts)) {
		a := r.src.accounts[n]
		if a.role || a.plugin == "" || skipped(a, r.opts.SkipAccounts) || r.dst.authPlugins[a.plugin] {
			continue
		}
		by[a.plugin] = append(by[a.plugin], n)
	}
	for _, p := range slices.Sorted(maps.Keys(by)) {
		for _, n := range by[p] {
			r.add(id, Error, n,
				fmt.Sprintf("authenticates with %s, which the target (%s) does not have active: the account cannot log in there", p, r.dst.server.name()),
				fmt.Sprintf("ALTER USER %s IDENTIFIED WITH one of the target's plugins (%s) and a new password, or load the plugin on the target",
					n, strings.Join(slices.Sorted(maps.Keys(r.dst.authPlugins)), ", ")))
		}
	}
}

// zoneName is a time zone setting with the names of UTC made one: a
// server on Debian says SYSTEM (UTC), one built elsewhere SYSTEM (Etc/UTC),
// and both read back the same times.
func zoneName(v string) string {
	v = strings.TrimSpace(v)
	inner := v
	if strings.HasPrefix(strings.ToUpper(v), "SYSTEM (") && strings.HasSuffix(v, ")") {
		inner = v[len("SYSTEM (") : len(v)-1]
	}
	switch strings.ToUpper(strings.TrimPrefix(inner, "Etc/")) {
	case "UTC", "UCT", "UNIVERSAL", "ZULU", "GMT", "GMT0", "GMT+0", "GMT-0", "GREENWICH", "+00:00", "-00:00":
		return "UTC"
	}
	return v
}
