package monitor

import (
	"context"
	"fmt"
	"regexp"
	"strconv"

	"github.com/shakedown/shakedown/internal/target"
)

// InnoDBSource reads what only SHOW ENGINE INNODB STATUS tells on servers
// whose global status lacks it (MySQL): the history list length and the
// checkpoint age. On MariaDB, whose status has Innodb_history_list_length
// and Innodb_checkpoint_age, it sends nothing. A server that refuses the
// statement (no InnoDB, TiDB) is asked once: the source then stays quiet.
type InnoDBSource struct {
	off bool
}

// Name is "innodb".
func (*InnoDBSource) Name() string { return "innodb" }

// Read runs SHOW ENGINE INNODB STATUS when the status lacks its figures. It
// must run after the status source in the same reading.
func (s *InnoDBSource) Read(ctx context.Context, q *OwnQuerier, r *Reading) error {
	_, hasHist := r.Values["Innodb_history_list_length"]
	_, hasAge := r.Values["Innodb_checkpoint_age"]
	if s.off || (hasHist && hasAge) {
		return nil
	}
	rows, err := q.QueryContext(ctx, "SHOW ENGINE INNODB STATUS")
	if err != nil {
		if target.Code(err) != 0 {
			s.off = true
		}
		return fmt.Errorf("read innodb status: %w", err)
	}
	defer rows.Close()
	var typ, name, status string
	for rows.Next() {
		if err := rows.Scan(&typ, &name, &status); err != nil {
			return fmt.Errorf("read innodb status: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read innodb status: %w", err)
	}
	for k, v := range parseInnoDBStatus(status) {
		r.Values[k] = v
	}
	return nil
}

var (
	reHistory    = regexp.MustCompile(`(?m)^History list length\s+(\d+)`)
	reLSN        = regexp.MustCompile(`(?m)^Log sequence number\s+(\d+)`)
	reCheckpoint = regexp.MustCompile(`(?m)^Last checkpoint at\s+(\d+)`)
	reMaxAge     = regexp.MustCompile(`(?m)^Max checkpoint age\s+(\d+)`)
)

// parseInnoDBStatus picks the figures out of SHOW ENGINE INNODB STATUS's
// text (the layouts of MySQL 5.7, 8.0 and MariaDB).
func parseInnoDBStatus(text string) map[string]float64 {
	out := map[string]float64{}
	num := func(re *regexp.Regexp) (float64, bool) {
		m := re.FindStringSubmatch(text)
		if m == nil {
			return 0, false
		}
		v, err := strconv.ParseFloat(m[1], 64)
		return v, err == nil
	}
	if v, ok := num(reHistory); ok {
		out["innodb.history_list_length"] = v
	}
	lsn, ok1 := num(reLSN)
	ckpt, ok2 := num(reCheckpoint)
	if ok1 && ok2 && lsn >= ckpt {
		out["innodb.checkpoint_age"] = lsn - ckpt
	}
	if v, ok := num(reMaxAge); ok {
		out["innodb.checkpoint_max_age"] = v
	}
	return out
}
