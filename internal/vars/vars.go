// Package vars reads servers' global variables and compares them: values
// are normalised (ON/YES/TRUE = 1, numbers numerically, case ignored, comma
// lists as sets), per-instance values (ids, paths, ports) are left out, and
// the variables known to change performance come first, each with a line
// saying what it changes.
package vars

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/flavour"
)

// Querier runs a query; *sql.DB and *sql.Conn are Queriers.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Collect reads SHOW GLOBAL VARIABLES, names in lower case, values as the
// server gives them.
func Collect(ctx context.Context, q Querier) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, "SHOW GLOBAL VARIABLES")
	if err != nil {
		return nil, fmt.Errorf("read global variables: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name string
		var value sql.NullString
		if err := rows.Scan(&name, &value); err != nil {
			return nil, fmt.Errorf("read global variables: %w", err)
		}
		out[strings.ToLower(name)] = value.String
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read global variables: %w", err)
	}
	return out, nil
}

// Normalize returns the form of a value that comparisons use: lower case,
// ON/YES/TRUE as 1 and OFF/NO/FALSE as 0, numbers in their shortest form
// (1.000000 is 1), and comma lists sorted (sql_mode's order carries no
// meaning).
func Normalize(value string) string {
	v := strings.ToLower(strings.TrimSpace(value))
	switch v {
	case "on", "yes", "true":
		return "1"
	case "off", "no", "false":
		return "0"
	}
	if n, ok := number(v); ok {
		return n
	}
	if strings.Contains(v, ",") {
		parts := strings.Split(v, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		sort.Strings(parts)
		return strings.Join(parts, ",")
	}
	return v
}

// number returns v's shortest numeric form, exactly for integers.
func number(v string) (string, bool) {
	if i, err := strconv.ParseInt(v, 10, 64); err == nil {
		return strconv.FormatInt(i, 10), true
	}
	if u, err := strconv.ParseUint(v, 10, 64); err == nil {
		return strconv.FormatUint(u, 10), true
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", false
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10), true
	}
	return strconv.FormatFloat(f, 'g', -1, 64), true
}

// Missing stands for a variable a server does not have.
const Missing = "(missing)"

// Difference is one variable across the compared servers.
type Difference struct {
	Name string `json:"name"`
	// Values are as each server gave them, in the order of the servers;
	// Missing when a server lacks the variable.
	Values []string `json:"values"`
	// Equal is set when every server has the same normalised value (only
	// listed when all variables were asked for).
	Equal bool `json:"equal"`
	// OneSide is set when some server lacks the variable. Across flavours
	// (MariaDB against MySQL or TiDB) hundreds exist on one side only; they
	// are listed apart so that the values that really differ stay readable.
	OneSide bool `json:"one_side,omitempty"`
	// Relevant is set for variables known to change performance or
	// semantics; Group and Explain then say how.
	Relevant bool   `json:"relevant"`
	Group    string `json:"group,omitempty"`
	Explain  string `json:"explain,omitempty"`
	// Notes flag a value that needs attention beyond being different (a
	// candidate's buffer pool below 0.9x the control's), one per server
	// ("" when none).
	Notes []string `json:"notes,omitempty"`
}

// Diff compares two servers' variables: a is the control, b the candidate.
func Diff(a, b map[string]string) []Difference {
	return Compare([]map[string]string{a, b}, false)
}

// Compare compares the variables of several servers, the first being the
// control. Without all only variables that differ are returned. Relevant
// variables come first in the order of the rules (durability, memory, I/O,
// concurrency, semantics), the others after them by name; variables that
// some server lacks come after those every server has. Per-instance
// variables are never returned.
func Compare(sets []map[string]string, all bool) []Difference {
	sets = withDerived(sets)
	names := map[string]bool{}
	for _, s := range sets {
		for n := range s {
			if !Ignored(n) {
				names[n] = true
			}
		}
	}
	flavours := make([]flavour.Name, len(sets))
	for i, s := range sets {
		flavours[i] = flavour.FromVariables(s)
	}
	var out []Difference
	for n := range names {
		d := Difference{Name: n, Values: make([]string, len(sets)), Equal: true}
		norm := ""
		for i, s := range sets {
			v, ok := s[n]
			nv := "\x00missing"
			if ok {
				d.Values[i] = v
				nv = Normalize(v)
			} else {
				d.Values[i] = Missing
				d.OneSide = true
			}
			if i == 0 {
				norm = nv
			} else if nv != norm {
				d.Equal = false
			}
		}
		if d.Equal && !all {
			continue
		}
		if r, ok := ruleFor(n); ok {
			d.Relevant, d.Group, d.Explain = true, r.Group, r.Explain
			if r.note != nil && !d.Equal {
				d.Notes = notes(d.Values, r.note)
			}
		}
		flavourNotes(&d, flavours)
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Equal != b.Equal {
			return !a.Equal
		}
		if a.OneSide != b.OneSide {
			return !a.OneSide
		}
		if a.Relevant != b.Relevant {
			return a.Relevant
		}
		ra, rb := ruleIndex(a.Name), ruleIndex(b.Name)
		if ra != rb {
			return ra < rb
		}
		return a.Name < b.Name
	})
	return out
}

// flavourNotes says, per server, what its flavour makes of the variable: a
// value that means "no limit" there (TiDB's max_connections = 0), or a
// variable it keeps for compatibility and ignores, which then changes
// nothing and is not listed as relevant.
func flavourNotes(d *Difference, flavours []flavour.Name) {
	for i, f := range flavours {
		note, replace := "", false
		switch {
		case d.Values[i] == Missing:
		case f.Ignores(d.Name):
			// What the value would do elsewhere does not apply.
			note, replace = f.Title()+" keeps this variable for compatibility and ignores it", true
			d.Relevant, d.Group, d.Explain = false, "", ""
		default:
			if v, err := strconv.ParseFloat(strings.TrimSpace(d.Values[i]), 64); err == nil && f.NoLimit(d.Name, v) {
				note = d.Values[i] + " means no limit on " + f.Title()
			}
		}
		if note == "" {
			continue
		}
		if d.Notes == nil {
			d.Notes = make([]string, len(flavours))
		}
		if d.Notes[i] != "" && !replace {
			d.Notes[i] += "; "
		} else {
			d.Notes[i] = ""
		}
		d.Notes[i] += note
	}
}

// notes applies a rule's note to each candidate against the control.
func notes(values []string, note func(control, candidate string) string) []string {
	ns := make([]string, len(values))
	any := false
	for i := 1; i < len(values); i++ {
		if values[0] == Missing || values[i] == Missing {
			continue
		}
		if ns[i] = note(values[0], values[i]); ns[i] != "" {
			any = true
		}
	}
	if !any {
		return nil
	}
	return ns
}

// Derived names a figure computed from several variables.
const redoCapacity = "(redo log capacity)"

// withDerived adds the redo log capacity, which servers spell differently
// (innodb_redo_log_capacity, or innodb_log_file_size x
// innodb_log_files_in_group).
func withDerived(sets []map[string]string) []map[string]string {
	out := make([]map[string]string, len(sets))
	for i, s := range sets {
		out[i] = s
		c, ok := redoLogCapacity(s)
		if !ok {
			continue
		}
		m := make(map[string]string, len(s)+1)
		for k, v := range s {
			m[k] = v
		}
		m[redoCapacity] = strconv.FormatUint(c, 10)
		out[i] = m
	}
	return out
}

func redoLogCapacity(s map[string]string) (uint64, bool) {
	if v, ok := s["innodb_redo_log_capacity"]; ok {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		return n, err == nil
	}
	size, ok := s["innodb_log_file_size"]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(size), 10, 64)
	if err != nil {
		return 0, false
	}
	files := uint64(1)
	if f, ok := s["innodb_log_files_in_group"]; ok {
		if k, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64); err == nil && k > 0 {
			files = k
		}
	}
	return n * files, true
}

// Ignored reports whether a variable holds a per-instance value (an id, a
// path, a port, a host name, session state) that differs between any two
// servers and says nothing about how they behave.
func Ignored(name string) bool {
	if ignored[name] {
		return true
	}
	for _, p := range []string{"gtid_", "wsrep_node_", "wsrep_cluster_address", "relay_log", "ssl_", "rand_seed"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, s := range []string{"_dir", "_file", "_path", "_basename", "_socket", "_port"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

var ignored = map[string]bool{
	"server_id": true, "server_uuid": true, "server_uid": true, "hostname": true,
	"basedir": true, "datadir": true, "tmpdir": true, "socket": true, "port": true,
	"pid_file": true, "log_error": true, "log_bin_basename": true, "log_bin_index": true,
	"secure_file_priv": true, "report_host": true, "report_port": true, "report_user": true,
	"report_password": true, "bind_address": true, "timestamp": true,
	"pseudo_thread_id": true, "last_insert_id": true, "insert_id": true, "identity": true,
	"warning_count": true, "error_count": true, "in_transaction": true, "last_gtid": true,
	"innodb_data_home_dir": true, "innodb_log_group_home_dir": true, "innodb_undo_directory": true,
	"innodb_tmpdir": true, "general_log_file": true, "slow_query_log_file": true,
	"admin_address": true, "mysqlx_bind_address": true, "system_versioning_asof": true,
	"innodb_buffer_pool_filename": true, "log_basename": true,
	"slave_load_tmpdir": true, "replica_load_tmpdir": true, "relay_log_basename": true,
	"relay_log_index": true, "relay_log": true, "log_bin_index_file": true,
}
