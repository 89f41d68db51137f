package replay

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/shakedown/shakedown/internal/fingerprint"
)

// Outcome is how a candidate's result for one statement compares with the
// control's.
type Outcome int

const (
	// Same: no difference.
	Same Outcome = iota
	// Different: the results or errors differ.
	Different
	// NonDeterministic: they differ, but the statement's result cannot be
	// expected to repeat (NOW(), RAND(), LIMIT without ORDER BY, ...).
	NonDeterministic
	// NotComparable: they differ only where ORDER BY ... LIMIT cut
	// through rows that tie on the ORDER BY keys.
	NotComparable
)

// comparison is the outcome with what differed.
type comparison struct {
	outcome Outcome
	kind    string // "error on candidate only", "rows", ...
	newErr  bool   // the candidate failed where the control did not
}

// compare compares a candidate's result c with the control's r.
func compare(r, c *result, info *fingerprint.Info) comparison {
	kind, newErr := diffKind(r, c, info)
	if kind == "" {
		return comparison{outcome: Same}
	}
	if kind == "ties" {
		return comparison{outcome: NotComparable, kind: "ORDER BY ... LIMIT cuts through ties"}
	}
	if info.NonDeterministic != "" && !newErr && r.errCode == 0 && c.errCode == 0 {
		return comparison{outcome: NonDeterministic, kind: kind}
	}
	return comparison{outcome: Different, kind: kind, newErr: newErr}
}

// diffKind names what differs, "" for nothing and "ties" for rows that
// differ only among ORDER BY ties cut by LIMIT. Every attribute that
// differs is named, the values first ("rows; column types: k BIGINT,
// DECIMAL"), so that a change of type never hides a change of value.
func diffKind(r, c *result, info *fingerprint.Info) (string, bool) {
	switch {
	case r.errCode == 0 && c.errCode != 0:
		return fmt.Sprintf("error on the candidate only (%d)", c.errCode), true
	case r.errCode != 0 && c.errCode == 0:
		return fmt.Sprintf("error on the control only (%d)", r.errCode), false
	case r.errCode != 0 && c.errCode != r.errCode:
		return fmt.Sprintf("different errors (%d, %d)", r.errCode, c.errCode), true
	case r.errCode != 0:
		return "", false // the same error on both
	}
	var kinds []string
	switch v := valuesDiffer(r, c, info); v {
	case "ties":
		if len(r.cols) == len(c.cols) {
			return v, false
		}
	case "":
	default:
		kinds = append(kinds, v)
	}
	if r.affected != c.affected {
		kinds = append(kinds, "affected rows")
	}
	kinds = append(kinds, columnsDiffer(r.cols, c.cols)...)
	if r.warnings >= 0 && c.warnings >= 0 && r.warnings != c.warnings {
		kinds = append(kinds, "warnings")
	}
	return strings.Join(kinds, "; "), false
}

// valuesDiffer compares the rows: "row count", "rows", "row order",
// "ties" or "".
func valuesDiffer(r, c *result, info *fingerprint.Info) string {
	if r.rows != c.rows {
		return "row count"
	}
	if info.Ordered {
		if r.seqHash != c.seqHash {
			switch {
			case r.setHash == c.setHash && !info.Limit:
				// The same rows; ties on the ORDER BY keys came back in
				// another order, which ORDER BY leaves open.
				if !r.keysOK || !c.keysOK || r.keyHash == c.keyHash {
					return ""
				}
				return "row order"
			case info.Limit && (!r.keysOK || !c.keysOK || r.keyHash == c.keyHash):
				return "ties"
			default:
				return "rows"
			}
		}
	} else if r.setHash != c.setHash {
		return "rows"
	}
	return ""
}

// columnsDiffer names the column attributes that differ: how many there
// are, their types, their names. Names are compared as the client sees
// them, less what servers spell their own way: case (SUM(k), sum(k)) and
// the comments and bind marks a proxy writes into an expression's name
// (vtgate's ":vtg1 /* VARCHAR */").
func columnsDiffer(a, b []column) []string {
	if len(a) != len(b) {
		return []string{fmt.Sprintf("column count (%d, %d)", len(a), len(b))}
	}
	var types, names []string
	for i := range a {
		if a[i].typ != b[i].typ {
			types = append(types, fmt.Sprintf("%s %s, %s", a[i].name, a[i].typ, b[i].typ))
		}
		// Names that are the same bytes are the same name: the rewrite,
		// three regular expressions, is for those that are not.
		if a[i].name != b[i].name && columnName(a[i].name) != columnName(b[i].name) {
			names = append(names, fmt.Sprintf("%s, %s", a[i].name, b[i].name))
		}
	}
	var out []string
	if len(types) > 0 {
		out = append(out, "column types: "+strings.Join(types, "; "))
	}
	if len(names) > 0 {
		out = append(out, "column names: "+strings.Join(names, "; "))
	}
	return out
}

var (
	nameComment = regexp.MustCompile(`/\*.*?\*/`)
	// A literal in an expression's name, or vtgate's bind mark for it.
	nameLiteral = regexp.MustCompile(`'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.)*"|:vtg[0-9]+|\b[0-9]+(?:\.[0-9]+)?\b`)
	spaces      = regexp.MustCompile(`\s+`)
)

// columnName is a column's name as compared: lower case, without
// comments, with literals and a proxy's bind marks as '?', and one space
// where there were several.
func columnName(n string) string {
	n = nameComment.ReplaceAllString(n, "")
	n = nameLiteral.ReplaceAllString(n, "?")
	return strings.TrimSpace(spaces.ReplaceAllString(strings.ToLower(n), " "))
}
