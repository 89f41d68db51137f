package verify

import (
	"context"
	"crypto/sha1"
	"database/sql"
	"encoding/hex"
	"fmt"
	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/schema"
	"hash/crc32"
	"math/big"
	"strconv"
	"strings"
)

// family groups column types by how their values compare.
type family int

const (
	famInt family = iota
	famBit
	famDecimal
	famFloat
	famDate
	famDateTime
	famTimestamp
	famTime
	famText
	famBinary
	famJSON
	famGeo
	famOther
)

func familyOf(c *schema.Column) family {
	switch c.DataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year":
		return famInt
	case "bit":
		return famBit
	case "decimal", "numeric", "fixed":
		return famDecimal
	case "float", "double", "real", "double precision":
		return famFloat
	case "date":
		return famDate
	case "datetime":
		return famDateTime
	case "timestamp":
		return famTimestamp
	case "time":
		return famTime
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set":
		return famText
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		return famBinary
	case "json":
		return famJSON
	case "geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
		"multipolygon", "geometrycollection", "geomcollection":
		return famGeo
	}
	return famOther
}

// isLOB says a column's values can be large enough that they are hashed on
// their own rather than concatenated into the row (which must stay under
// max_allowed_packet).
func isLOB(c *schema.Column) bool {
	switch c.DataType {
	case "mediumtext", "longtext", "mediumblob", "longblob", "json":
		return true
	}
	return familyOf(c) == famGeo
}

// rule is how the row phase decides that two values are equal.
type rule int

const (
	ruleExact rule = iota // the canonical forms are the same bytes
	ruleFloat             // numerically within a relative tolerance
	ruleJSON              // the same JSON document
)

// Float tolerances (relative) and the significant digits the checksum
// keeps so that any difference larger than the tolerance changes it.
const (
	floatTol     = 1e-6
	floatDigits  = 7
	doubleTol    = 1e-12
	doubleDigits = 13
)

// colSpec is how one column shared by both sides is read and compared.
// Every SQL expression in it is the same text on both sides.
type colSpec struct {
	Name     string
	src, dst *schema.Column
	fam      family
	// converted is text compared as utf8mb4, not as its stored bytes.
	converted bool
	frag      []string // CONCAT arguments encoding the value inside the row hash
	cmp       string   // canonical form compared in the row phase
	val       string   // the value as written in repair SQL
	rule      rule
	tol       float64
	binary    bool // val is bytes: x'..' in SQL, 0x.. in reports
	numeric   bool // val is a number literal
	writable  bool // repair SQL may set it (not generated on the target)
	nullable  bool // NULL possible on either side
}

// newColSpec decides the comparison for a column present on both sides.
//
// sameBytes says that both servers store text of the column's character
// set in that set's bytes (TiDB keeps latin1 text as utf8): only then may
// text of one set on both sides be compared by its stored bytes.
func newColSpec(src, dst *schema.Column, sameBytes bool) *colSpec {
	c := escape.Ident(src.Name)
	fs, fd := familyOf(src), familyOf(dst)
	fam := commonFamily(fs, fd)
	s := &colSpec{
		Name:     src.Name,
		src:      src,
		dst:      dst,
		fam:      fam,
		val:      c,
		writable: !dst.Generated,
		nullable: src.Nullable || dst.Nullable,
	}
	var t string    // canonical text
	lenT := ""      // its length in bytes, when cheaper than LENGTH(t)
	guard := false  // t may be NULL for a non-NULL value: fall back to the raw text
	style := "term" // term: t followed by ','; len: length-prefixed; hash: SHA1 of t
	switch fam {
	case famInt:
		t = c
		if fs == famBit || fd == famBit || src.Zerofill || dst.Zerofill {
			t = "(" + c + "+0)"
			s.val = t
		}
		s.numeric = true
	case famBit:
		t = "(" + c + "+0)"
		s.val = t
		s.numeric = true
	case famDecimal:
		t = c
		if src.Type != dst.Type || fs != fd {
			scale := max(src.Scale, dst.Scale)
			digits := max(src.Precision-src.Scale, dst.Precision-dst.Scale, 20)
			t = fmt.Sprintf("CAST(%s AS DECIMAL(%d,%d))", c, min(65, digits+scale), scale)
		}
		s.numeric = true
	case famFloat:
		digits, tol := doubleDigits, doubleTol
		if src.DataType == "float" || dst.DataType == "float" {
			digits, tol = floatDigits, floatTol
		}
		// m·10^e with m a whole number of `digits` digits: rounding there
		// hides only differences within the tolerance, and the printed form
		// is integers, which every server prints alike.
		e := fmt.Sprintf("(FLOOR(LOG10(ABS(%s)))-%d)", c, digits-1)
		t = fmt.Sprintf("IF(%[1]s=0,'0',CONCAT(CAST(ROUND(%[1]s/POW(10,%[2]s)) AS SIGNED),'e',%[2]s))", c, e)
		guard = true
		s.rule, s.tol, s.cmp, s.numeric = ruleFloat, tol, c, true
	case famDate:
		t = c
	case famDateTime:
		t = c
		if fs != fd || src.TimePrec != dst.TimePrec {
			t, guard = "CAST("+c+" AS DATETIME(6))", true
		}
	case famTimestamp:
		t = "UNIX_TIMESTAMP(" + c + ")"
		if src.TimePrec != dst.TimePrec {
			t = "CAST(UNIX_TIMESTAMP(" + c + ") AS DECIMAL(20,6))"
		}
		guard = true
	case famTime:
		t = c
		if src.TimePrec != dst.TimePrec {
			t, guard = "CAST("+c+" AS TIME(6))", true
		}
	case famText:
		if sameBytes && src.Charset == dst.Charset && fs == fd {
			// The stored bytes: no conversion that could map two
			// different strings to one.
			t, lenT = "CAST("+c+" AS BINARY)", "LENGTH("+c+")"
		} else {
			t = "CAST(CONVERT(" + c + " USING utf8mb4) AS BINARY)"
			s.converted = true
		}
		style = "len"
	case famBinary:
		t = c
		if fs != famBinary || fd != famBinary {
			t = "CAST(" + c + " AS BINARY)"
			s.val = t
		}
		s.binary = true
		style = "len"
	case famJSON:
		t = "CONVERT(" + c + " USING utf8mb4)"
		s.val = t
		s.rule, s.cmp = ruleJSON, t
		style = "hash"
	case famGeo:
		t = c
		s.binary = true
		style = "hash"
	default:
		t = "CONVERT(" + c + " USING utf8mb4)"
		s.val = t
		style = "len"
	}
	if s.cmp == "" {
		s.cmp = t
	}
	if guard {
		t = "IFNULL(" + t + ",CONCAT('?'," + c + "))"
		if s.rule == ruleExact {
			s.cmp = t
		}
	}
	if style != "hash" && (isLOB(src) || isLOB(dst)) {
		style = "hash"
	}
	// Each encoding is prefix-free (a NULL is 'N', which no value starts
	// with; numbers and times end at a ','; strings carry their length;
	// hashes are 40 hex digits), so the concatenation of a row's columns
	// can be read back one way only: no two rows share an encoding.
	var enc []string
	switch style {
	case "term":
		enc = []string{t, "','"}
	case "len":
		if lenT == "" {
			lenT = "LENGTH(" + t + ")"
		}
		enc = []string{lenT, "':'", t}
	case "hash":
		enc = []string{"SHA1(" + t + ")"}
	}
	if s.nullable {
		s.frag = []string{"IF(" + c + " IS NULL,'N',CONCAT(" + strings.Join(enc, ",") + "))"}
	} else {
		s.frag = enc
	}
	return s
}

// commonFamily is the family both sides are compared in.
func commonFamily(a, b family) family {
	if a == b {
		return a
	}
	in := func(f family, set ...family) bool {
		for _, x := range set {
			if f == x {
				return true
			}
		}
		return false
	}
	both := func(set ...family) bool { return in(a, set...) && in(b, set...) }
	switch {
	case both(famInt, famBit):
		return famInt
	case both(famInt, famBit, famDecimal):
		return famDecimal
	case both(famInt, famBit, famDecimal, famFloat):
		return famFloat
	case both(famDate, famDateTime, famTimestamp):
		return famDateTime
	case both(famText, famJSON):
		return famJSON
	case both(famText, famBinary):
		return famBinary
	case both(famText, famOther):
		return famOther
	}
	if in(a, famBinary, famGeo) || in(b, famBinary, famGeo) {
		return famBinary
	}
	return famOther
}

// useRawText lets text go into the row's CONCAT as stored, without a
// binary cast, when every text column of the table has one and the same
// character set on both sides and no column brings utf8mb4 text of its
// own: nothing is then converted, so the bytes are the stored ones. (A few
// percent less server CPU per row.)
func useRawText(specs []*colSpec) {
	charset := ""
	for _, s := range specs {
		switch s.fam {
		case famText:
			if s.src.Charset != s.dst.Charset || (charset != "" && charset != s.src.Charset) || s.converted {
				return
			}
			charset = s.src.Charset
		case famOther, famJSON:
			return
		}
	}
	for _, s := range specs {
		if s.fam != famText {
			continue
		}
		cast := "CAST(" + escape.Ident(s.Name) + " AS BINARY)"
		for i, f := range s.frag {
			s.frag[i] = strings.ReplaceAll(f, cast, escape.Ident(s.Name))
		}
	}
}

// rowHashSQL is the SQL for a row's SHA-1 (40 hex digits) over the
// encodings of cols.
func rowHashSQL(cols []*colSpec) string {
	var args []string
	for _, c := range cols {
		args = append(args, c.frag...)
	}
	if len(args) == 0 {
		return "SHA1('')"
	}
	return "SHA1(CONCAT(" + strings.Join(args, ",") + "))"
}

// A checksum is how a chunk's row hashes are summed. Both sides always use
// the same one.
type checksum int

const (
	// checksumPrefix sums the first 64 bits of each row's SHA-1, read by
	// CONV: it runs on every MySQL-compatible server.
	checksumPrefix checksum = iota
	// checksumCRCs sums 64 bits made of CRC32 and CRC32C of each row's
	// SHA-1 (its 40 hex digits). As strong as the prefix (a uniform
	// 64-bit function of the hash), and about a quarter less server CPU
	// per row: CONV and the cast of its text cost more than the SHA-1.
	// It needs CRC32C (MariaDB 10.8 and later) and a user variable that
	// carries the SHA-1 from the first CRC to the second, since SQL has no
	// common subexpressions; probeChecksum checks that a server evaluates
	// it as meant.
	checksumCRCs
	// checksumQuarters sums the same 64 bits as checksumPrefix as four
	// sums of 16 bits each, which verify adds up in Go. It is for servers
	// whose SUM of 64-bit integers is not exact (go-mysql-server returns a
	// DOUBLE): each quarter's sum stays below 2^53, where a DOUBLE is still
	// exact, for chunks of up to 2^37 rows.
	checksumQuarters
)

// hashVar carries a row's SHA-1 within one expression of checksumCRCs.
const hashVar = "@shakedown_verify_h"

// rule is the checksum's line in the report's rules.
func (c checksum) rule() string {
	bits := "the first 64 bits of each row's SHA-1"
	switch c {
	case checksumCRCs:
		bits = "a 64-bit value made of CRC32 and CRC32C of each row's SHA-1"
	case checksumQuarters:
		bits = "the first 64 bits of each row's SHA-1, summed as four 16-bit quarters (the server's SUM of 64-bit integers is not exact)"
	}
	return "per chunk: COUNT(*) and the exact sum of " + bits + " over its length-prefixed canonical columns (NULL marked apart); " +
		"mismatched chunks are narrowed down to rows, compared by their full SHA-1 and then column by column"
}

// term is the SQL for one row's 64-bit value, given its hash's SQL.
func (c checksum) term(hash string) string {
	if c == checksumCRCs {
		return "CRC32(" + hashVar + ":=" + hash + ")<<32|CRC32C(" + hashVar + ")"
	}
	return "CAST(CONV(LEFT(" + hash + ",16),16,10) AS UNSIGNED)"
}

// crcValue is checksumCRCs' term computed in Go, for the probe.
func crcValue(hash string) uint64 {
	return uint64(crc32.ChecksumIEEE([]byte(hash)))<<32 | uint64(crc32.Checksum([]byte(hash), castagnoli))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksumSelect is the chunk aggregate: the row count and the exact sum
// (DECIMAL, no wrap-around) of 64 bits of every row's SHA-1. Sums, unlike
// BIT_XOR, do not cancel: duplicate rows add up, and the same edit on two
// rows moves the sum twice. A chunk whose rows differ keeps the same count
// and sum with probability about 2^-64; the row phase compares full
// hashes anyway.
//
// checksumQuarters selects five columns: the count and the sums of the four
// 16-bit quarters, highest first.
func checksumSelect(cols []*colSpec, c checksum) string {
	h := rowHashSQL(cols)
	if c == checksumQuarters {
		out := "COUNT(*)"
		for _, from := range []string{"1", "5", "9", "13"} {
			out += ",COALESCE(SUM(CAST(CONV(SUBSTRING(" + h + "," + from + ",4),16,10) AS UNSIGNED)),0)"
		}
		return out
	}
	return "COUNT(*),COALESCE(SUM(" + c.term(h) + "),0)"
}

// sumColumns is how many sums checksumSelect returns after the count.
func (c checksum) sumColumns() int {
	if c == checksumQuarters {
		return 4
	}
	return 1
}

// exactSum reports whether db sums 64-bit integers exactly: the sum of two
// values near 2^64 must come back as its exact decimal digits.
func exactSum(ctx context.Context, db *sql.DB) bool {
	const a, b = "18446744073709551557", "18446744073709551533"
	var got string
	q := "SELECT CAST(SUM(x) AS CHAR) FROM (SELECT CAST(" + a + " AS UNSIGNED) AS x UNION ALL SELECT CAST(" + b + " AS UNSIGNED)) AS probe"
	if db.QueryRowContext(ctx, q).Scan(&got) != nil {
		return false
	}
	return got == "36893488147419103090"
}

// parseSum reads a SUM the server returned: an integer, or an integral
// number in a DOUBLE's notation (1.8e+14) from servers that sum in DOUBLE.
func parseSum(s string) (*big.Int, bool) {
	if v, ok := new(big.Int).SetString(s, 10); ok {
		return v, true
	}
	f, ok := new(big.Float).SetPrec(200).SetString(s)
	if !ok || !f.IsInt() {
		return nil, false
	}
	v, _ := f.Int(nil)
	return v, true
}

// probeChecksum says whether db computes checksumCRCs as meant: the right
// value on each of a few rows, alone and summed. An error (no CRC32C, no
// user variables in expressions) means it does not.
func probeChecksum(ctx context.Context, db *sql.DB) bool {
	words := []string{"a", "shakedown", "a longer text, with a comma"}
	var from []string
	var want big.Int
	for _, w := range words {
		from = append(from, "SELECT '"+w+"' AS x")
		want.Add(&want, new(big.Int).SetUint64(crcValue(sha1Hex(w))))
	}
	derived := " FROM (" + strings.Join(from, " UNION ALL ") + ") AS probe"
	term := checksumCRCs.term("SHA1(x)")
	rows, err := db.QueryContext(ctx, "SELECT x, CAST("+term+" AS CHAR)"+derived)
	if err != nil {
		return false
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var x, v string
		if rows.Scan(&x, &v) != nil || v != strconv.FormatUint(crcValue(sha1Hex(x)), 10) {
			return false
		}
		n++
	}
	if rows.Err() != nil || n != len(words) {
		return false
	}
	var sum string
	if db.QueryRowContext(ctx, "SELECT CAST(SUM("+term+") AS CHAR)"+derived).Scan(&sum) != nil {
		return false
	}
	return sum == want.String()
}

func sha1Hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}
