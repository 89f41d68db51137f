// Package flavour is the one owner of what differs between the
// MySQL-compatible servers shakedown talks to: MariaDB, MySQL, Percona
// Server, TiDB, Vitess (vtgate), a Galera cluster, Dolt and
// go-mysql-server.
//
// A server is told apart once per target (Detect), not from its version
// string alone: vtgate says 8.4.6-Vitess whatever runs beneath it, Dolt
// says 8.0.31, and a Galera node is a MariaDB that says nothing of its
// cluster in its version. Every command then asks the flavour what it
// supports (limits and their "no limit" values, collations, ANALYZE
// syntax, read-only transactions, status counters, LOAD DATA) instead of
// testing a flavour's name itself.
package flavour

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Name is a server's flavour as results store it.
type Name string

// The flavours shakedown knows.
const (
	MariaDB Name = "mariadb"
	MySQL   Name = "mysql"
	Percona Name = "percona"
	TiDB    Name = "tidb"
	Vitess  Name = "vitess"
	Galera  Name = "galera"
	Dolt    Name = "dolt"
	GMS     Name = "go-mysql-server"
)

// readBound bounds each of the owner's own reads of a server: a server
// that does not answer costs at most this.
const readBound = 30 * time.Second

// Names lists every flavour, in the order help and errors show them.
var Names = []Name{MariaDB, MySQL, Percona, TiDB, Vitess, Galera, Dolt, GMS}

// Parse reads a flavour's name as a user types it (any case).
func Parse(s string) (Name, error) {
	n := Name(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Names, n) {
		return n, nil
	}
	list := make([]string, len(Names))
	for i, f := range Names {
		list[i] = string(f)
	}
	return "", fmt.Errorf("unknown flavour %q: want one of %s", s, strings.Join(list, ", "))
}

// Title is the flavour's name as its makers spell it.
func (n Name) Title() string {
	switch n {
	case MariaDB:
		return "MariaDB"
	case MySQL:
		return "MySQL"
	case Percona:
		return "Percona Server"
	case TiDB:
		return "TiDB"
	case Vitess:
		return "Vitess"
	case Galera:
		return "MariaDB Galera"
	case Dolt:
		return "Dolt"
	case GMS:
		return "go-mysql-server"
	}
	if n == "" {
		return "an unknown server"
	}
	return string(n)
}

// Dialect is the SQL and catalogue a flavour speaks: MariaDB's (MariaDB,
// Galera) or MySQL's (every other). Code that reads MariaDB's own tables,
// functions or DDL layout asks this, never the name.
func (n Name) Dialect() Name {
	switch n {
	case MariaDB, Galera:
		return MariaDB
	}
	return MySQL
}

// IsMariaDB says whether the server speaks MariaDB's dialect.
func (n Name) IsMariaDB() bool { return n.Dialect() == MariaDB }

// IsMySQL says whether the server is MySQL itself (Oracle's or Percona's
// build), where MySQL-only variables and tables exist.
func (n Name) IsMySQL() bool { return n == MySQL || n == Percona }

// NoLimit says whether value of a server limit means "no limit" on this
// flavour: TiDB keeps max_connections = 0 and max_prepared_stmt_count = -1
// for that. On MySQL and MariaDB 0 connections is not a setting and 0
// prepared statements means none.
func (n Name) NoLimit(variable string, value float64) bool {
	if n != TiDB {
		return false
	}
	switch strings.ToLower(variable) {
	case "max_connections":
		return value == 0
	case "max_prepared_stmt_count":
		return value < 0
	}
	return false
}

// AnalyzeVerb is the statement that refreshes a table's statistics, to
// be followed by the table's name. local asks that replicas do not repeat
// it (NO_WRITE_TO_BINLOG), where the flavour has that form: TiDB refuses it
// (1235), Dolt and go-mysql-server cannot parse it, and TiDB, Vitess and
// Dolt have no binlog replicas of the MySQL kind to spare.
func (n Name) AnalyzeVerb(local bool) string {
	if local && n.binlogReplicas() {
		return "ANALYZE NO_WRITE_TO_BINLOG TABLE "
	}
	return "ANALYZE TABLE "
}

func (n Name) binlogReplicas() bool {
	switch n {
	case MariaDB, Galera, MySQL, Percona:
		return true
	}
	return false
}

// ReadOnlyTransactions says whether START TRANSACTION READ ONLY is taken.
// TiDB refuses it unless tidb_enable_noop_functions is on (1235: "has only
// noop implementation"); go-mysql-server and Dolt parse it but do nothing
// with it. A plain transaction at REPEATABLE READ reads one snapshot there
// too.
func (n Name) ReadOnlyTransactions() bool {
	switch n {
	case TiDB, Dolt, GMS:
		return false
	}
	return true
}

// StatusCounters says whether SHOW GLOBAL STATUS keeps the statement and
// row counters (Questions, Com_*, Threads_running, Innodb_*). TiDB's holds
// almost nothing: its figures are on its status port (StatusPort).
// go-mysql-server and Dolt keep a handful. Vitess passes one tablet's up.
func (n Name) StatusCounters() bool {
	switch n {
	case TiDB, Dolt, GMS:
		return false
	}
	return true
}

// BackendCounters says whether SHOW GLOBAL STATUS through the server is
// one backend's beneath it rather than its own: vtgate passes it to one
// tablet's MySQL, where a statement run on several shards counts once on
// each, and shards on other servers count nowhere. Its statement counters
// match a client's only on one shard.
func (n Name) BackendCounters() bool { return n == Vitess }

// StatusPort is the HTTP port the server serves its metrics on beside SQL
// (Prometheus text at /metrics), by default; 0 if it has none.
func (n Name) StatusPort() int {
	if n == TiDB {
		return 10080
	}
	return 0
}

// Binlog says whether the server writes a MySQL-kind binlog that a
// follower can read. TiDB has TiCDC instead, Vitess has VStream, Dolt and
// go-mysql-server have none.
func (n Name) Binlog() bool { return n.binlogReplicas() }

// StoresCharset says whether text in a column of character set cs is
// stored in that set's own bytes. TiDB keeps latin1 columns' text as
// utf8: 'Å' is C3 85 there and C5 on MariaDB, the same character.
func (n Name) StoresCharset(cs string) bool {
	return !(n == TiDB && strings.EqualFold(cs, "latin1"))
}

// Ignores says whether the flavour keeps a system variable for
// compatibility only: setting it changes nothing. TiDB's documentation
// says so of InnoDB's, the binlog's (it has none of the MySQL kind), the
// query cache's and the thread and table caches' variables, which a
// variables diff would otherwise show as changing performance.
func (n Name) Ignores(variable string) bool {
	if n != TiDB {
		return false
	}
	v := strings.ToLower(variable)
	for _, p := range []string{"innodb_", "binlog_", "query_cache_", "thread_", "(redo log"} {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	switch v {
	case "sync_binlog", "log_bin", "table_open_cache", "table_definition_cache", "key_buffer_size",
		"read_buffer_size", "read_rnd_buffer_size", "join_buffer_size", "sort_buffer_size",
		"back_log", "open_files_limit", "max_heap_table_size", "skip_name_resolve":
		return true
	}
	return false
}

// FromVariables is the flavour that a server's global variables name
// (version, version_comment, wsrep_on, Dolt's own), for code that holds
// SHOW GLOBAL VARIABLES and no connection.
func FromVariables(v map[string]string) Name {
	n := FromVersion(v["version"], v["version_comment"])
	switch {
	case n == MariaDB && isOn(v["wsrep_on"]):
		return Galera
	case n == MySQL:
		for k := range v {
			if strings.HasPrefix(k, "dolt_") {
				return Dolt
			}
		}
	}
	return n
}

// FixedValue is the only value the flavour allows a variable that other
// servers set when their data directory is made, or "": TiDB has
// lower_case_table_names = 2 alone.
func (n Name) FixedValue(variable string) string {
	if n == TiDB && strings.EqualFold(variable, "lower_case_table_names") {
		return "2"
	}
	return ""
}

// IndexStatistics says whether information_schema.STATISTICS carries the
// optimizer's index cardinality. TiDB keeps its statistics in its own
// tables (SHOW STATS_META) and leaves CARDINALITY at 0 after ANALYZE.
func (n Name) IndexStatistics() bool { return n != TiDB }

// vtSchema is the name vtgate gives a keyspace's database in the rows
// of information_schema: vt_KEYSPACE_SHARD (shard 0, -80, 80-, 40-80).
var vtSchema = regexp.MustCompile(`^vt_(.+)_(0|[0-9a-fA-F]*-[0-9a-fA-F]*)$`)

// CatalogSchema is the database a row of information_schema names, as the
// client knows it: behind vtgate, whose rows name the tablet's database
// (vt_shop_0 for the keyspace shop), the keyspace among asked that it
// stands for; elsewhere name itself.
func (n Name) CatalogSchema(name string, asked []string) string {
	if n != Vitess {
		return name
	}
	if m := vtSchema.FindStringSubmatch(name); m != nil && slices.Contains(asked, m[1]) {
		return m[1]
	}
	return name
}

// SchemaListRouted says whether information_schema can be read for
// several databases in one query (TABLE_SCHEMA IN (...)). vtgate routes a
// query of information_schema to a keyspace's tablet only by an equality
// on its name: with IN it answers no rows.
func (n Name) SchemaListRouted() bool { return n != Vitess }

// Triggers says whether the server runs triggers.
func (n Name) Triggers() bool { return n != TiDB }

// Routines says whether the server has stored procedures and functions.
func (n Name) Routines() bool { return n != TiDB }

// Events says whether the server has an event scheduler.
func (n Name) Events() bool { return n != TiDB }

// ObjectDDL says whether the server's clients can create triggers, stored
// functions and events on it. vtgate cannot parse CREATE TRIGGER, CREATE
// FUNCTION or CREATE EVENT, though the server beneath runs them.
func (n Name) ObjectDDL() bool { return n != Vitess }

// Cluster says whether one URL's hosts are nodes of one cluster whose
// counters are each node's own (Galera), so figures are summed over them.
func (n Name) Cluster() bool { return n == Galera }

// NativeJSON says whether JSON is a type of its own on the server, rather
// than MariaDB's alias for LONGTEXT with a json_valid CHECK.
func (n Name) NativeJSON() bool { return !n.IsMariaDB() }

// WriteSetLimits names the server variables that bound what one
// transaction may change on a certifying cluster: its replicated write
// set's bytes and rows (0 means no limit). "" when the flavour has none.
func (n Name) WriteSetLimits() (bytesVar, rowsVar string) {
	if n == Galera {
		return "wsrep_max_ws_size", "wsrep_max_ws_rows"
	}
	return "", ""
}

// NotAvailable is the line a command prints for an item the flavour does
// not keep, in place of a figure: never a dash that reads as zero.
func NotAvailable(what string, n Name, version string) string {
	if version == "" {
		return fmt.Sprintf("%s: not available on %s", what, n.Title())
	}
	return fmt.Sprintf("%s: not available on %s %s", what, n.Title(), version)
}

// StatusEndpoint is the address of the server's HTTP status port, where
// it serves its figures as Prometheus text at /metrics, asked of the
// server itself; host is the target's host, used where the server listens
// on every address. "" when the flavour has none or the server does not
// say.
func StatusEndpoint(ctx context.Context, n Name, q Querier, host string) string {
	if n.StatusPort() == 0 {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, readBound)
	defer cancel()
	var port, at sql.NullString
	err := q.QueryRowContext(ctx, `SELECT JSON_UNQUOTE(JSON_EXTRACT(@@tidb_config, '$.status."status-port"')),
		JSON_UNQUOTE(JSON_EXTRACT(@@tidb_config, '$.status."status-host"'))`).Scan(&port, &at)
	if err != nil || !port.Valid || port.String == "" || port.String == "0" {
		return ""
	}
	h := at.String
	if h == "" || h == "0.0.0.0" || h == "::" {
		h = host
	}
	return net.JoinHostPort(h, port.String)
}
