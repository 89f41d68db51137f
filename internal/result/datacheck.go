package result

import (
	"fmt"
	"io"
	"strings"
)

// DataCheck is a workload's check, after the run, that the data changed by
// exactly what the transactions that committed say (hotrow: each committed
// decrement lowers the stock by one). A server that merges concurrent
// updates of one row instead of serialising them loses some: its run looks
// faster than it is, and must not be compared as if it were right.
type DataCheck struct {
	// What is what was read, for people: "sum of num in hotrow (1 row)".
	What string `json:"what"`
	// Committed counts the transactions that committed a change; InDoubt
	// those whose COMMIT got no answer (the connection was lost): they
	// may or may not have changed the data.
	Committed int64 `json:"committed"`
	InDoubt   int64 `json:"in_doubt,omitempty"`
	// Before and After are the values read before the threads connected
	// and after they had all stopped.
	Before int64 `json:"before"`
	After  int64 `json:"after"`
	// Expected is the change the committed transactions made (without
	// those in doubt); Observed is After - Before.
	Expected int64 `json:"expected_change"`
	Observed int64 `json:"observed_change"`
	// LostUpdates is Expected - Observed when the change falls outside
	// what the committed transactions (and those in doubt) allow: > 0
	// when updates were lost, < 0 when the data changed by more than they
	// made. 0 when the check holds.
	LostUpdates int64 `json:"lost_updates"`
}

// NewDataCheck compares the change from before to after with the change
// expected: committed transactions changing the value by expected in all,
// and inDoubt more that may each have changed it by step (-1 for a
// decrement) or not at all.
func NewDataCheck(what string, before, after, committed, expected, inDoubt, step int64) *DataCheck {
	c := &DataCheck{What: what, Committed: committed, InDoubt: inDoubt, Before: before, After: after,
		Expected: expected, Observed: after - before}
	lo, hi := expected, expected+inDoubt*step
	if lo > hi {
		lo, hi = hi, lo
	}
	switch {
	case c.Observed < lo:
		c.LostUpdates = lo - c.Observed
	case c.Observed > hi:
		c.LostUpdates = hi - c.Observed
	}
	if step < 0 {
		// A decrement lost leaves the value higher: count it positive.
		c.LostUpdates = -c.LostUpdates
	}
	return c
}

// OK reports whether the data changed as the committed transactions say.
func (c *DataCheck) OK() bool { return c == nil || c.LostUpdates == 0 }

// Finding is the check's failure in one line, "" when it holds:
// "LOST UPDATES: 580 of 7776 committed transactions (...)".
func (c *DataCheck) Finding() string {
	if c.OK() {
		return ""
	}
	doubt := ""
	if c.InDoubt > 0 {
		doubt = fmt.Sprintf(", %d more in doubt", c.InDoubt)
	}
	if c.LostUpdates > 0 {
		return fmt.Sprintf("LOST UPDATES: %d of %d committed transactions (%s went from %d to %d, a change of %d; the committed transactions account for %d%s): concurrent updates were merged, not serialised, and the figures are not comparable",
			c.LostUpdates, c.Committed, c.What, c.Before, c.After, c.Observed, c.Expected, doubt)
	}
	return fmt.Sprintf("LOST UPDATES: %d of %d committed transactions: %s went from %d to %d, a change of %d, beyond the %d the committed transactions account for%s (did something else write to it during the run?)",
		c.LostUpdates, c.Committed, c.What, c.Before, c.After, c.Observed, c.Expected, doubt)
}

// writeDataCheck prints the check's line of the summary.
func (r *Result) writeDataCheck(w io.Writer) {
	c := r.DataCheck
	switch {
	case c == nil:
	case c.OK():
		fmt.Fprintf(w, "    data check:                    ok: %s changed by %d for %d committed transactions\n", c.What, c.Observed, c.Committed)
	case !strings.Contains(r.Error, c.Finding()):
		fmt.Fprintf(w, "    %s\n", c.Finding())
	}
	// Otherwise the FAILED line says it.
}
