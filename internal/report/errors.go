package report

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/target"
)

// errorsNote says what the counted errors are.
var errorsNote = "Errors counted during the measured runs: each was an error the runs were told to ignore " +
	fmt.Sprintf("(--mysql-ignore-errors; by default %d, %d and %d) or a lost connection, ", target.ERLockDeadlock, target.ERCheckRead, target.ERLockWaitTimeout) +
	"counted and its event tried again. Any other error stops a run, which then appears among the failed steps."

// byCodeText is a row's errors by code: "1213 deadlock: 3, 1205 lock wait
// timeout: 1", most frequent first.
func byCodeText(m map[string]int64) string {
	codes := result.SortedCodes(m)
	sort.SliceStable(codes, func(i, j int) bool { return m[codes[i]] > m[codes[j]] })
	parts := make([]string, 0, len(codes))
	for _, c := range codes {
		name := c
		if n, err := strconv.ParseUint(c, 10, 16); err == nil && target.CodeName(uint16(n)) != "" {
			name += " " + target.CodeName(uint16(n))
		}
		parts = append(parts, fmt.Sprintf("%s: %d", name, m[c]))
	}
	return strings.Join(parts, ", ")
}

// hasErrors reports whether any counted run met an error.
func (r *Report) hasErrors() bool {
	for _, w := range r.Workloads {
		for _, row := range w.Rows {
			if row.Errors > 0 {
				return true
			}
		}
	}
	return false
}

// errorsTable is every row that met errors, with its errors by code.
func (r *Report) errorsTable() *table {
	t := &table{header: []string{"workload", "target", "threads", "errors", "by code"}, right: []bool{false, false, true, true, false}}
	for _, w := range r.Workloads {
		for _, row := range w.Rows {
			if row.Errors == 0 {
				continue
			}
			by := byCodeText(row.ErrorsByCode)
			if by == "" {
				by = "-" // a result document without codes
			}
			t.add(w.Name, row.Target, strconv.Itoa(row.Threads), strconv.FormatInt(row.Errors, 10), by)
		}
	}
	return t
}
