package monitor

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// StatusSource reads SHOW GLOBAL STATUS: every numeric status variable,
// under the name the server gives it. It also records how many statements
// the sampler had sent when the status was read ("own.statements"; the one
// reading the status included), so that qps leaves them out.
type StatusSource struct{}

// Name is "status".
func (StatusSource) Name() string { return "status" }

// Read runs SHOW GLOBAL STATUS.
func (StatusSource) Read(ctx context.Context, q *OwnQuerier, r *Reading) error {
	rows, err := q.QueryContext(ctx, "SHOW GLOBAL STATUS")
	if err != nil {
		return fmt.Errorf("read global status: %w", err)
	}
	defer rows.Close()
	r.Values["own.statements"] = float64(q.Statements())
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return fmt.Errorf("read global status: %w", err)
		}
		if v, ok := parseStatusValue(value); ok {
			r.Values[name] = v
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read global status: %w", err)
	}
	return nil
}

// parseStatusValue reads a status value as a number; ON/OFF count as 1/0
// and anything else (versions, names, empty) is skipped.
func parseStatusValue(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v, true
	}
	switch strings.ToUpper(s) {
	case "ON", "YES", "TRUE":
		return 1, true
	case "OFF", "NO", "FALSE":
		return 0, true
	}
	return 0, false
}
