package slap

import (
	"fmt"
	"strconv"
	"strings"
)

// alphanumerics are the characters of mysqlslap's random strings (it has no
// U and no V).
const alphanumerics = "0123456789ABCDEFGHIJKLMNOPQRSTWXYZabcdefghijklmnopqrstuvwxyz"

// randStringLen is the length of mysqlslap's random strings.
const randStringLen = 126

// Figures of auto-generated statements are kept by kind.
const (
	statInsert = iota
	statSelect
	statSelectKey
	statUpdate
)

var autoStatNames = []string{
	statInsert:    "INSERT INTO t1 VALUES (...) (auto-generated)",
	statSelect:    "SELECT ... FROM t1 (auto-generated)",
	statSelectKey: "SELECT ... FROM t1 WHERE id = key (auto-generated)",
	statUpdate:    "UPDATE t1 SET ... (auto-generated)",
}

// autoGenerate makes the statements of --auto-generate-sql as mysqlslap
// does: table t1, --auto-generate-sql-unique-write-number INSERTs to fill it
// and --auto-generate-sql-unique-query-number + 1 queries of the load type.
func (b *Bench) autoGenerate() error {
	o := b.o
	b.statNames = autoStatNames
	b.create = []stmt{{text: b.tableSQL(), kind: createTable}}
	for i := uint64(0); i < o.UniqueWriteNumber; i++ {
		b.create = append(b.create, b.insertSQL())
	}
	n := o.UniqueQueryNumber + 1
	for i := uint64(0); i < n; i++ {
		var s stmt
		switch o.LoadType {
		case "read":
			s = b.selectSQL(false)
		case "key":
			s = b.selectSQL(true)
		case "write":
			s = b.insertSQL()
		case "update":
			s = b.updateSQL()
		default: // mixed: an INSERT, then SELECT and INSERT by turns
			if i%2 == 0 {
				s = b.insertSQL()
			} else {
				s = b.selectSQL(true)
			}
		}
		b.query = append(b.query, s)
	}
	return nil
}

func (b *Bench) hasKey() bool { return b.o.AddAutoincrement || b.o.GUIDPrimary }

func (b *Bench) randomInt() string { return strconv.FormatInt(b.rnd.Int64N(1<<31), 10) }

func (b *Bench) randomString() string {
	buf := make([]byte, randStringLen)
	for i := range buf {
		buf[i] = alphanumerics[b.rnd.IntN(len(alphanumerics))]
	}
	return string(buf)
}

// tableSQL is mysqlslap's CREATE TABLE for t1.
func (b *Bench) tableSQL() string {
	o := b.o
	var cols []string
	if o.AddAutoincrement {
		cols = append(cols, "id serial")
	}
	if o.GUIDPrimary {
		cols = append(cols, "id varchar(36) primary key")
	}
	for i := 0; i < o.SecondaryIndexes; i++ {
		cols = append(cols, fmt.Sprintf("id%d varchar(36) unique key", i))
	}
	for i := 1; i <= b.intCols; i++ {
		if b.intIndex {
			cols = append(cols, fmt.Sprintf("intcol%d INT(32), INDEX(intcol%d)", i, i))
		} else {
			cols = append(cols, fmt.Sprintf("intcol%d INT(32) ", i))
		}
	}
	for i := 1; i <= b.charCols; i++ {
		if b.charIndex {
			cols = append(cols, fmt.Sprintf("charcol%d VARCHAR(128), INDEX(charcol%d) ", i, i))
		} else {
			cols = append(cols, fmt.Sprintf("charcol%d VARCHAR(128)", i))
		}
	}
	return "CREATE TABLE `t1` (" + strings.Join(cols, ",") + ")"
}

// insertSQL is one of mysqlslap's INSERTs, with its own random values.
func (b *Bench) insertSQL() stmt {
	o := b.o
	var vals []string
	if o.AddAutoincrement {
		vals = append(vals, "NULL")
	}
	if o.GUIDPrimary {
		vals = append(vals, "uuid()")
	}
	for i := 0; i < o.SecondaryIndexes; i++ {
		vals = append(vals, "uuid()")
	}
	for i := 0; i < b.intCols; i++ {
		vals = append(vals, b.randomInt())
	}
	for i := 0; i < b.charCols; i++ {
		vals = append(vals, "'"+b.randomString()+"'")
	}
	return stmt{text: "INSERT INTO t1 VALUES (" + strings.Join(vals, ",") + ")", stat: statInsert}
}

// updateSQL is one of mysqlslap's UPDATEs; with a primary key it is keyed.
func (b *Bench) updateSQL() stmt {
	var sets []string
	for i := 1; i <= b.intCols; i++ {
		sets = append(sets, fmt.Sprintf("intcol%d = %s", i, b.randomInt()))
	}
	for i := 1; i <= b.charCols; i++ {
		sets = append(sets, fmt.Sprintf("charcol%d = '%s'", i, b.randomString()))
	}
	s := stmt{text: "UPDATE t1 SET " + strings.Join(sets, ","), stat: statUpdate}
	if b.hasKey() {
		s.text += " WHERE id = "
		s.kind = keyed
	}
	return s
}

// selectSQL is mysqlslap's SELECT of every column; with key and a primary
// key it selects one row.
func (b *Bench) selectSQL(key bool) stmt {
	var cols []string
	for i := 1; i <= b.intCols; i++ {
		cols = append(cols, fmt.Sprintf("intcol%d", i))
	}
	for i := 1; i <= b.charCols; i++ {
		cols = append(cols, fmt.Sprintf("charcol%d", i))
	}
	s := stmt{text: "SELECT " + strings.Join(cols, ",") + " FROM t1", stat: statSelect}
	if key && b.hasKey() {
		s.text += " WHERE id = "
		s.kind = keyed
		s.stat = statSelectKey
	}
	return s
}
