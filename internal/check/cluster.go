package check

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// tableLocks is what the source's own counters say about explicit table
// locks since it started: -1 where a count could not be read.
type tableLocks struct {
	lockTables int64 // Com_lock_tables
	ftwrl      int64 // FLUSH TABLES WITH READ LOCK, from statement digests
}

// readTableLocks reads how often the source took explicit table locks:
// LOCK TABLES from its status counter, FLUSH TABLES WITH READ LOCK from
// performance_schema's statement digests (the status counter Com_flush
// counts every FLUSH alike), where performance_schema is on.
func (s *snapshot) readTableLocks(ctx context.Context) error {
	s.locks = tableLocks{lockTables: -1, ftwrl: -1}
	ok, err := s.query(ctx, "lockcount", "the status counter Com_lock_tables", "",
		`SHOW GLOBAL STATUS LIKE 'Com_lock_tables'`, nil, func(rows *sql.Rows) error {
			var name, v string
			if err := rows.Scan(&name, &v); err != nil {
				return err
			}
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				s.locks.lockTables = n
			}
			return nil
		})
	if err != nil || !ok {
		return err
	}
	if !strings.EqualFold(s.vars["performance_schema"], "ON") {
		s.fail("digests", NotChecked{Missing: "performance_schema statement digests",
			Detail: "performance_schema is off: FLUSH TABLES WITH READ LOCK is not counted apart from other FLUSH statements"})
		return nil
	}
	_, err = s.query(ctx, "digests", "performance_schema.events_statements_summary_by_digest", "",
		`SELECT COALESCE(SUM(COUNT_STAR), 0) FROM performance_schema.events_statements_summary_by_digest
		WHERE DIGEST_TEXT LIKE 'FLUSH TABLES WITH READ LOCK%' OR DIGEST_TEXT LIKE 'FLUSH TABLE WITH READ LOCK%'`,
		nil, func(rows *sql.Rows) error { return rows.Scan(&s.locks.ftwrl) })
	return err
}

// checkWriteSetLimit flags, on a target that certifies each transaction's
// write set (a Galera cluster), the source's tables that one statement
// changing every row (a DELETE or UPDATE without a narrow WHERE, an
// INSERT ... SELECT of the table) could not change there: the write set
// would pass the cluster's limit and the transaction is refused, where the
// source ran it.
func (r *runner) checkWriteSetLimit() {
	const id = "write_set_limit"
	bytesVar, rowsVar := r.dst.side.Server.Flavour.WriteSetLimits()
	if bytesVar == "" || !r.have(id, r.dst, "variables") || !r.have(id, r.src, "tableinfo") {
		return
	}
	maxBytes, _ := strconv.ParseInt(r.dst.vars[bytesVar], 10, 64)
	maxRows, _ := strconv.ParseInt(r.dst.vars[rowsVar], 10, 64)
	title := r.dst.side.Server.Flavour.Title()
	for _, n := range slices.Sorted(maps.Keys(r.src.info)) {
		t := r.src.info[n]
		if t.typ != "BASE TABLE" && t.typ != "SYSTEM VERSIONED" {
			continue
		}
		var over string
		switch {
		case maxBytes > 0 && t.bytes > maxBytes:
			over = fmt.Sprintf("holds about %s, above %s=%s", sizeText(t.bytes), bytesVar, sizeText(maxBytes))
		case maxRows > 0 && t.rows > maxRows:
			over = fmt.Sprintf("holds about %d rows, above %s=%d", t.rows, rowsVar, maxRows)
		default:
			continue
		}
		r.add(id, Warning, n,
			fmt.Sprintf("%s: one transaction that changes every row (a DELETE or UPDATE without a narrow WHERE, an INSERT ... SELECT of it) makes a write set beyond %s's limit and is refused, where the source ran it", over, title),
			"change it in batches that each commit (DELETE ... LIMIT 10000 in a loop); an ALTER TABLE is not bounded by it")
	}
}

// checkTableLocks flags the explicit table locks the source's clients
// take, on a target cluster that does not hold them cluster-wide.
func (r *runner) checkTableLocks() {
	const id = "table_locks"
	f := r.dst.side.Server.Flavour
	if !f.Cluster() || !r.have(id, r.src, "lockcount") {
		return
	}
	if n := r.src.locks.lockTables; n > 0 {
		r.add(id, Warning, "LOCK TABLES",
			fmt.Sprintf("the source has run LOCK TABLES %d times since it started (Com_lock_tables): on %s a table lock is taken on one node only, so writes that reach the table through the other nodes are not held back, and their replicated changes abort the locking session's transaction", n, f.Title()),
			"lock rows in a transaction instead (SELECT ... FOR UPDATE), or send every session that locks tables to one node")
	}
	if !r.have(id, r.src, "digests") {
		return
	}
	if n := r.src.locks.ftwrl; n > 0 {
		r.add(id, Warning, "FLUSH TABLES WITH READ LOCK",
			fmt.Sprintf("the source's statements include FLUSH TABLES WITH READ LOCK, %d times (performance_schema digests; usually a backup tool): on %s the node that takes it stops applying the cluster's changes, and once its queue fills flow control pauses writes on every node until it unlocks", n, f.Title()),
			"back up with mariabackup (BACKUP STAGE locks), or from a node set apart for the backup with wsrep_desync=ON")
	}
}

// sizeText is a byte count for people: 3.1 GiB.
func sizeText(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
