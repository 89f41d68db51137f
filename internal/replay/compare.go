package replay

import (
	"fmt"

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

// diffKind names the first difference, "" for none and "ties" for rows
// that differ only among ORDER BY ties cut by LIMIT.
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
	if len(r.cols) != len(c.cols) {
		return "columns", false
	}
	for i := range r.cols {
		if r.cols[i] != c.cols[i] {
			return "columns", false
		}
	}
	if r.rows != c.rows {
		return "row count", false
	}
	if r.affected != c.affected {
		return "affected rows", false
	}
	if info.Ordered {
		if r.seqHash != c.seqHash {
			switch {
			case r.setHash == c.setHash && !info.Limit:
				// The same rows; ties on the ORDER BY keys came back in
				// another order, which ORDER BY leaves open.
				if !r.keysOK || !c.keysOK || r.keyHash == c.keyHash {
					break
				}
				return "row order", false
			case info.Limit && (!r.keysOK || !c.keysOK || r.keyHash == c.keyHash):
				return "ties", false
			default:
				return "rows", false
			}
		}
	} else if r.setHash != c.setHash {
		return "rows", false
	}
	if r.warnings >= 0 && c.warnings >= 0 && r.warnings != c.warnings {
		return "warnings", false
	}
	return "", false
}
