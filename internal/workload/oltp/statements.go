package oltp

import (
	"strconv"
	"strings"
)

// The value templates of oltp_common.lua: groups of 11 random digits joined
// by '-'.
const (
	cTemplate   = "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########" // 10 groups, 119 chars
	padTemplate = "###########-###########-###########-###########-###########"                                                             // 5 groups, 59 chars
)

// group names a statement kind of oltp_common.lua.
type group int

const (
	gPoint group = iota
	gSimple
	gSum
	gOrder
	gDistinct
	gIndexUpdate
	gNonIndexUpdate
	gDelete
	gInsert
	numGroups
)

// groupSQL holds the statements of oltp_common.lua; %d is the table number.
var groupSQL = [numGroups]string{
	gPoint:          "SELECT c FROM sbtest%d WHERE id=?",
	gSimple:         "SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ?",
	gSum:            "SELECT SUM(k) FROM sbtest%d WHERE id BETWEEN ? AND ?",
	gOrder:          "SELECT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c",
	gDistinct:       "SELECT DISTINCT c FROM sbtest%d WHERE id BETWEEN ? AND ? ORDER BY c",
	gIndexUpdate:    "UPDATE sbtest%d SET k=k+1 WHERE id=?",
	gNonIndexUpdate: "UPDATE sbtest%d SET c=? WHERE id=?",
	gDelete:         "DELETE FROM sbtest%d WHERE id=?",
	gInsert:         "INSERT INTO sbtest%d (id, k, c, pad) VALUES (?, ?, ?, ?)",
}

// groupReads reports which groups return a result set.
var groupReads = [numGroups]bool{gPoint: true, gSimple: true, gSum: true, gOrder: true, gDistinct: true}

// statementFor returns group g's statement for table number table.
func statementFor(g group, table int) string {
	return strings.Replace(groupSQL[g], "%d", strconv.Itoa(table), 1)
}

// tableName returns "sbtestN".
func tableName(n int) string { return "sbtest" + strconv.Itoa(n) }

// createTableSQL returns oltp_common.lua's CREATE TABLE for table n, byte for
// byte (MySQL driver flavour).
func createTableSQL(n int, o *Options) string {
	idDef := "INTEGER NOT NULL AUTO_INCREMENT"
	if !o.AutoInc {
		idDef = "INTEGER NOT NULL"
	}
	idIndex := "PRIMARY KEY"
	if o.Secondary {
		idIndex = "KEY xid"
	}
	var b strings.Builder
	b.WriteString("CREATE TABLE sbtest")
	b.WriteString(strconv.Itoa(n))
	b.WriteString("(\n  id ")
	b.WriteString(idDef)
	b.WriteString(",\n  k INTEGER DEFAULT '0' NOT NULL,\n  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  ")
	b.WriteString(idIndex)
	b.WriteString(" (id)\n) /*! ENGINE = ")
	b.WriteString(o.StorageEngine)
	b.WriteString(" */ ")
	b.WriteString(o.CreateTableOptions)
	return b.String()
}

// createIndexSQL returns the secondary index statement of oltp_common.lua.
func createIndexSQL(n int) string {
	s := strconv.Itoa(n)
	return "CREATE INDEX k_" + s + " ON sbtest" + s + "(k)"
}

// dropTableSQL returns the cleanup statement for table n.
func dropTableSQL(n int) string { return "DROP TABLE IF EXISTS sbtest" + strconv.Itoa(n) }

// bulkCreateTableSQL returns bulk_insert.lua's CREATE TABLE for table n.
func bulkCreateTableSQL(n int) string {
	return "CREATE TABLE IF NOT EXISTS sbtest" + strconv.Itoa(n) + " (\n" +
		"          id INTEGER NOT NULL,\n" +
		"          k INTEGER DEFAULT '0' NOT NULL,\n" +
		"          PRIMARY KEY (id))"
}

// randomPointsSQL returns select_random_points.lua's statement with n
// placeholders, whitespace included.
func randomPointsSQL(n int) string {
	return "        SELECT id, k, c, pad\n" +
		"          FROM sbtest1\n" +
		"          WHERE k IN (" + strings.Repeat("?, ", n-1) + "?)\n" +
		"        "
}

// randomRangesSQL returns select_random_ranges.lua's statement with n ranges.
func randomRangesSQL(n int) string {
	return "        SELECT count(k)\n" +
		"          FROM sbtest1\n" +
		"          WHERE " + strings.Repeat("k BETWEEN ? AND ? OR ", n-1) + "k BETWEEN ? AND ?"
}

// appendInsertSQL appends oltp_insert.lua's text INSERT to dst.
func appendInsertSQL(dst []byte, table int, id, k int64, c, pad []byte) []byte {
	dst = append(dst, "INSERT INTO sbtest"...)
	dst = strconv.AppendInt(dst, int64(table), 10)
	dst = append(dst, " (id, k, c, pad) VALUES ("...)
	dst = strconv.AppendInt(dst, id, 10)
	dst = append(dst, ", "...)
	dst = strconv.AppendInt(dst, k, 10)
	dst = append(dst, ", '"...)
	dst = append(dst, c...)
	dst = append(dst, "', '"...)
	dst = append(dst, pad...)
	dst = append(dst, "')"...)
	return dst
}

// plan says which statement groups one event of a workload runs, how often,
// and which groups the worker prepares (sysbench prepares some it may not
// run, such as a group whose count is 0).
type plan struct {
	trx      bool           // BEGIN ... COMMIT around the event
	count    [numGroups]int // executions per event (gDelete/gInsert: see deleteInserts)
	prepared [numGroups]bool
	// deleteInserts pairs each DELETE with an INSERT of the same id, as
	// execute_delete_inserts does; oltp_delete runs DELETEs alone.
	deleteInserts bool
}

// planFor returns the event plan of workload k with options o, following the
// prepare_statements and event functions of each script.
func planFor(k kind, o *Options) plan {
	var p plan
	ranges := func() {
		if o.RangeSelects {
			p.count[gSimple] = o.SimpleRanges
			p.count[gSum] = o.SumRanges
			p.count[gOrder] = o.OrderRanges
			p.count[gDistinct] = o.DistinctRanges
		}
	}
	writes := func() {
		p.count[gIndexUpdate] = o.IndexUpdates
		p.count[gNonIndexUpdate] = o.NonIndexUpdates
		p.count[gDelete] = o.DeleteInserts
		p.count[gInsert] = o.DeleteInserts
		p.prepared[gIndexUpdate] = true
		p.prepared[gNonIndexUpdate] = true
		p.prepared[gDelete] = true
		p.prepared[gInsert] = true
		p.deleteInserts = true
	}
	switch k {
	case readWrite:
		p.trx = !o.SkipTrx
		p.count[gPoint] = o.PointSelects
		p.prepared[gPoint] = true
		ranges()
		writes()
	case readOnly:
		p.trx = !o.SkipTrx
		p.count[gPoint] = o.PointSelects
		p.prepared[gPoint] = true
		ranges()
	case writeOnly:
		p.trx = !o.SkipTrx
		writes()
	case pointSelect:
		// oltp_point_select.lua forces point_selects to 1.
		p.count[gPoint] = 1
		p.prepared[gPoint] = true
	case updateIndex:
		p.count[gIndexUpdate] = o.IndexUpdates
		p.prepared[gIndexUpdate] = true
	case updateNonIndex:
		p.count[gNonIndexUpdate] = o.NonIndexUpdates
		p.prepared[gNonIndexUpdate] = true
	case deleteOnly:
		p.count[gDelete] = 1
		p.prepared[gDelete] = true
	}
	if o.RangeSelects {
		switch k {
		case readWrite, readOnly:
			p.prepared[gSimple] = true
			p.prepared[gSum] = true
			p.prepared[gOrder] = true
			p.prepared[gDistinct] = true
		}
	}
	return p
}

// expectedCom is the number of statements of each type one event sends: the
// Com_* counters a server shows per event.
type expectedCom struct {
	Select, Update, Insert, Delete, Begin, Commit int
}

// statementsPerEvent returns what one event of plan p sends.
func (p plan) statementsPerEvent() expectedCom {
	var e expectedCom
	for g := group(0); g < numGroups; g++ {
		switch {
		case groupReads[g]:
			e.Select += p.count[g]
		case g == gIndexUpdate || g == gNonIndexUpdate:
			e.Update += p.count[g]
		case g == gDelete:
			e.Delete += p.count[g]
		case g == gInsert:
			e.Insert += p.count[g]
		}
	}
	if p.trx {
		e.Begin, e.Commit = 1, 1
	}
	return e
}
