package dbcopy

import (
	"context"
	"fmt"
	"strings"

	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/verify"
)

// VerifyCopied compares what an earlier copy (res, as Run returned it or
// as stored) put on dst, as Run's own final verify does: each table's
// chosen rows only, the tables that share a condition in one run, the
// condition evaluated on both sides in the copied database. The runs are
// summed into one report; it is nil only when none ran.
func VerifyCopied(ctx context.Context, src, dst *target.Target, res *Result, threads int) (*verify.Report, error) {
	var sum *verify.Report
	for _, p := range res.Databases {
		groups := map[string][]string{} // condition -> tables
		var conds []string
		for _, t := range res.Tables {
			if !strings.HasPrefix(t.Table, p.Source+".") {
				continue
			}
			if _, ok := groups[t.Where]; !ok {
				conds = append(conds, t.Where)
			}
			groups[t.Where] = append(groups[t.Where], strings.TrimPrefix(t.Table, p.Source+"."))
		}
		if len(conds) == 0 {
			continue
		}
		s, err := connect(ctx, "source", src, p.Source, threads+1, verifyParams)
		if err != nil {
			return sum, err
		}
		defer s.DB.Close()
		d, err := connect(ctx, "target", dst, p.Target, threads+1, verifyParams)
		if err != nil {
			return sum, err
		}
		defer d.DB.Close()
		for _, cond := range conds {
			rep, err := verify.Run(ctx, s, d, verify.Options{Tables: groups[cond], Where: cond, Threads: threads, Recheck: 3})
			sum = addReport(sum, rep)
			if err != nil {
				return sum, fmt.Errorf("verify the copy: %w", err)
			}
		}
	}
	return sum, nil
}

// addReport sums rep into sum (nil: rep becomes the sum).
func addReport(sum, rep *verify.Report) *verify.Report {
	if rep == nil {
		return sum
	}
	if sum == nil {
		return rep
	}
	sum.Equal = sum.Equal && rep.Equal
	sum.Tables = append(sum.Tables, rep.Tables...)
	sum.DifferingRows += rep.DifferingRows
	sum.SchemaDifferences += rep.SchemaDifferences
	sum.Failed += rep.Failed
	sum.Interrupted = sum.Interrupted || rep.Interrupted
	sum.Seconds += rep.Seconds
	return sum
}
