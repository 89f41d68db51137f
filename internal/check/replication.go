package check

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/vars"
)

// checkReplication checks the source's binary log settings that an online
// migration (copy, then follow the binary log) depends on.
func (r *runner) checkReplication() {
	if !r.have("binlog_off", r.src, "variables") {
		return
	}
	v := r.src.vars
	if r.src.server.flavour == "tidb" {
		problem, fix := noBinlog(flavour.TiDB)
		r.add("binlog_off", Warning, "source", problem, fix)
		return
	}
	for _, f := range binlogSettings(v) {
		r.add(f.id, Error, f.setting, f.problem, f.fix)
	}
	if !logBinOn(v) {
		r.checkGTIDFlavours()
		return
	}
	if r.src.server.flavour == "mysql" {
		if g, ok := v["gtid_mode"]; ok && !strings.EqualFold(g, "ON") {
			r.add("gtid_mode", Warning, "gtid_mode",
				fmt.Sprintf("gtid_mode is %s: a tool can only resume from a binary log file and position, which do not survive a failover of the source", g),
				"turn GTIDs on step by step (enforce_gtid_consistency=ON, gtid_mode OFF_PERMISSIVE, ON_PERMISSIVE, ON)")
		}
	}
	r.checkGTIDFlavours()
	if keep, ok := retention(v); ok && keep > 0 && keep < r.opts.CopyTime {
		r.add("binlog_retention", Error, "binary log retention",
			fmt.Sprintf("binary logs are purged after %s, less than the copy is expected to take (%s, --copy-time): the tool cannot catch up once the logs it needs are gone",
				keep, r.opts.CopyTime),
			fmt.Sprintf("SET GLOBAL binlog_expire_logs_seconds = %d (or expire_logs_days) on the source for the time of the migration",
				int((r.opts.CopyTime*2)/time.Second)))
	}
}

// binlogFinding is one of the source's binary log settings that a
// follower of its binary log lacks: an online migration tool's (check) or
// shakedown's own (FollowPrerequisites).
type binlogFinding struct {
	id      string // check's id
	setting string // what is missing
	problem string
	fix     string
}

// logBinOn reports whether the source's global variables v say it writes
// a binary log.
func logBinOn(v map[string]string) bool { return vars.Normalize(v["log_bin"]) == "1" }

// binlogSettings applies the rules on the binary log's settings to the
// source's global variables v (names in lower case, as vars.Collect reads
// them). A variable v lacks is not judged, except log_bin: no log_bin is
// no binary log. With the log off there is one finding, log_bin's.
func binlogSettings(v map[string]string) []binlogFinding {
	cnf := "set it in the source's configuration file ([mysqld] section) so that a restart keeps it"
	if !logBinOn(v) {
		// One finding: the settings below only matter once there is a
		// binary log, and they are set in the same file before the same
		// restart, so they are named in its fix rather than counted as
		// errors of their own.
		also := []string{"server_id"}
		if id, ok := v["server_id"]; ok && strings.TrimSpace(id) != "0" {
			also = nil // set already: log_bin needs it, and it has it
		}
		if f, ok := v["binlog_format"]; ok && !strings.EqualFold(f, "ROW") {
			also = append(also, "binlog_format=ROW (now "+f+")")
		}
		if img, ok := v["binlog_row_image"]; ok && !strings.EqualFold(img, "FULL") {
			also = append(also, "binlog_row_image=FULL (now "+img+")")
		}
		fix := "add log_bin to the source's configuration file ([mysqld] section)"
		if len(also) > 0 {
			fix += " with " + strings.Join(also, ", ") + ","
		}
		fix += " and restart the source"
		return []binlogFinding{{"binlog_off", "log_bin",
			"the source writes no binary log: a migration tool can copy the data but cannot follow the changes made during and after the copy, so the move needs downtime for the whole copy",
			fix}}
	}
	var out []binlogFinding
	if f, ok := v["binlog_format"]; ok && !strings.EqualFold(f, "ROW") {
		out = append(out, binlogFinding{"binlog_format", "binlog_format",
			fmt.Sprintf("binlog_format is %s: migration tools read row events, and statement events cannot be applied safely to another server", f),
			"SET GLOBAL binlog_format = 'ROW' (reaches new sessions only: reconnect clients), and " + cnf})
	}
	if img, ok := v["binlog_row_image"]; ok && !strings.EqualFold(img, "FULL") {
		out = append(out, binlogFinding{"binlog_row_image", "binlog_row_image",
			fmt.Sprintf("binlog_row_image is %s: row events lack the columns a tool needs to find and rewrite rows on the target", img),
			"SET GLOBAL binlog_row_image = 'FULL', and " + cnf})
	}
	if id, ok := v["server_id"]; ok && strings.TrimSpace(id) == "0" {
		out = append(out, binlogFinding{"server_id", "server_id",
			"server_id is 0: a server without an id cannot serve its binary log to a replica or a migration tool",
			"set server_id to a number unique among your servers, and " + cnf})
	}
	return out
}

// noBinlog is what to say of a source of flavour f, which writes no
// binary log of the MySQL kind (f.Binlog() is false).
func noBinlog(f flavour.Name) (problem, fix string) {
	switch f {
	case flavour.TiDB:
		return "the source is TiDB, which has no MySQL binary log: follow its changes with TiCDC",
			"use TiCDC (or Dumpling plus TiCDC) for an online migration out of TiDB"
	case flavour.Vitess:
		return "the source is Vitess, whose vtgate serves no MySQL binary log: follow its changes with VStream",
			"follow a keyspace's changes with VStream, or follow the binary log of each shard's primary MySQL"
	}
	return fmt.Sprintf("the source is %s, which writes no MySQL binary log: there are no changes to follow", f.Title()),
		"copy the data with the writes stopped, or move the data to a server that writes a binary log first"
}

// checkGTIDFlavours notes that GTIDs do not carry between MariaDB and
// MySQL, which holds whether or not the source writes a binary log yet.
func (r *runner) checkGTIDFlavours() {
	if r.src.server.flavour != r.dst.server.flavour && (r.src.server.flavour == "mariadb" || r.dst.server.flavour == "mariadb") &&
		r.dst.server.flavour != "tidb" {
		r.add("gtid_mode", Notice, "GTID",
			fmt.Sprintf("MariaDB and MySQL GTIDs are incompatible: replication from %s into %s starts from a binary log file and position",
				r.src.server.name(), r.dst.server.name()),
			"start the replication by file and position (SHOW MASTER STATUS at the snapshot)")
	}
}

// retention is how long the source keeps binary logs; 0 means forever.
func retention(v map[string]string) (time.Duration, bool) {
	if s, ok := v["binlog_expire_logs_seconds"]; ok {
		if n, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && n > 0 {
			return time.Duration(n) * time.Second, true
		}
	}
	if s, ok := v["expire_logs_days"]; ok {
		if n, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return time.Duration(n * 24 * float64(time.Hour)), true
		}
	}
	_, ok := v["binlog_expire_logs_seconds"]
	return 0, ok
}
