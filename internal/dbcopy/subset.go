package dbcopy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
)

// fkEdge is one foreign key: child's cols reference parent's pcols.
type fkEdge struct {
	name          string
	child, parent string // db.table
	cols, pcols   []string
}

// readFKs lists the foreign keys between tables of db.
func readFKs(ctx context.Context, q target.Querier, db string) ([]*fkEdge, error) {
	rows, err := q.QueryContext(ctx, `SELECT CONSTRAINT_NAME, TABLE_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME
		FROM information_schema.KEY_COLUMN_USAGE
		WHERE TABLE_SCHEMA = ? AND REFERENCED_TABLE_SCHEMA = ? AND REFERENCED_TABLE_NAME IS NOT NULL
		ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION`, db, db)
	if err != nil {
		return nil, fmt.Errorf("read foreign keys of %s: %w", db, err)
	}
	defer rows.Close()
	var out []*fkEdge
	for rows.Next() {
		var name, tbl, col, ptbl, pcol string
		if err := rows.Scan(&name, &tbl, &col, &ptbl, &pcol); err != nil {
			return nil, fmt.Errorf("read foreign keys of %s: %w", db, err)
		}
		child, parent := db+"."+tbl, db+"."+ptbl
		if n := len(out); n > 0 && out[n-1].name == name && out[n-1].child == child {
			out[n-1].cols, out[n-1].pcols = append(out[n-1].cols, col), append(out[n-1].pcols, pcol)
			continue
		}
		out = append(out, &fkEdge{name: name, child: child, parent: parent, cols: []string{col}, pcols: []string{pcol}})
	}
	return out, rows.Err()
}

func colList(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = escape.Ident(c)
	}
	return "(" + strings.Join(q, ", ") + ")"
}

// planSubset turns --where, --sample and --follow-fk into one condition per
// table (absent: every row). Conditions name tables without their
// database, so that they read the same on either side.
func (c *copier) planSubset(ctx context.Context, tables map[string]*schema.Table) (map[string]string, []string, error) {
	if !c.res.Subset {
		return nil, nil, nil
	}
	db := c.pairs[0].Source
	seeds := map[string]string{}
	for key, cond := range c.opts.Where {
		name := key
		if !strings.Contains(key, ".") {
			name = db + "." + key
		}
		if tables[name] == nil {
			return nil, nil, fmt.Errorf("%w: --where %q: the source has no table %s", ErrBadOptions, key+": "+cond, name)
		}
		seeds[name] = cond
	}
	var fks []*fkEdge
	var err error
	if !c.opts.NoFollowFK || c.opts.Sample > 0 {
		if fks, err = readFKs(ctx, c.src.DB, db); err != nil {
			return nil, nil, err
		}
	}
	if c.opts.Sample > 0 {
		hasParent := map[string]bool{}
		for _, e := range fks {
			if e.child != e.parent {
				hasParent[e.child] = true
			}
		}
		for name, t := range tables {
			if _, ok := seeds[name]; !ok && !hasParent[name] {
				seeds[name] = sampleCond(t, c.opts.Sample)
			}
		}
	}
	if c.opts.NoFollowFK {
		return seeds, []string{"--follow-fk=false: foreign keys between chosen rows may dangle"}, nil
	}
	return followFKs(seeds, fks, c.opts.FKDepth)
}

// sampleCond chooses about fraction of a table's rows, the same rows on
// every evaluation: by a hash of the key (of all columns without one).
func sampleCond(t *schema.Table, fraction float64) string {
	var cols []string
	for _, ix := range t.Indexes {
		if ix.Primary {
			cols = ix.Columns
		}
	}
	if len(cols) == 0 {
		for _, c := range t.Columns {
			cols = append(cols, c.Name)
		}
	}
	l := colList(cols)
	return fmt.Sprintf("MOD(CRC32(CONCAT_WS(',', %s)), 10000) < %d", l[1:len(l)-1], int(fraction*10000+0.5))
}

// followFKs extends the seeds' conditions: rows referencing chosen rows,
// depth levels down; then, from the children up, every row a chosen row
// references. A table linked to a seed by foreign keys but not reached
// gets no rows; tables not linked keep every row.
func followFKs(seeds map[string]string, fks []*fkEdge, depth int) (map[string]string, []string, error) {
	var notes []string
	parts := map[string][]string{}
	for t, c := range seeds {
		parts[t] = []string{"(" + c + ")"}
	}
	cond := func(t string) string {
		if len(parts[t]) == 0 {
			return "0"
		}
		return strings.Join(parts[t], " OR ")
	}
	// Down: a level's conditions are fixed before the next level reads them.
	reached := map[string]bool{}
	frontier := map[string]bool{}
	for t := range seeds {
		reached[t], frontier[t] = true, true
	}
	for level := 0; level < depth && len(frontier) > 0; level++ {
		next := map[string]bool{}
		add := map[string][]string{}
		for _, e := range fks {
			if e.child == e.parent || !frontier[e.parent] || reached[e.child] {
				continue
			}
			add[e.child] = append(add[e.child], fmt.Sprintf("%s IN (SELECT %s FROM %s WHERE %s)",
				colList(e.cols), strings.Join(quoted(e.pcols), ", "), escape.Ident(tableOf(e.parent)), cond(e.parent)))
			next[e.child] = true
		}
		for t, a := range add {
			parts[t] = append(parts[t], a...)
			reached[t] = true
		}
		frontier = next
	}
	// Every table linked to a reached one takes part; up, children first.
	linked := map[string]bool{}
	for t := range reached {
		linked[t] = true
	}
	for changed := true; changed; {
		changed = false
		for _, e := range fks {
			if linked[e.child] != linked[e.parent] {
				linked[e.child], linked[e.parent], changed = true, true, true
			}
		}
	}
	order, err := childrenFirst(linked, fks)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range order {
		for _, e := range fks {
			if e.parent != p {
				continue
			}
			if e.child == e.parent {
				notes = append(notes, fmt.Sprintf("%s references itself (%s): rows it references in itself are not followed", p, e.name))
				continue
			}
			if len(parts[e.child]) == 0 {
				continue
			}
			parts[p] = append(parts[p], fmt.Sprintf("%s IN (SELECT %s FROM %s WHERE %s)",
				colList(e.pcols), strings.Join(quoted(e.cols), ", "), escape.Ident(tableOf(e.child)), cond(e.child)))
		}
	}
	out := map[string]string{}
	for t := range linked {
		out[t] = cond(t)
	}
	return out, notes, nil
}

// childrenFirst orders the linked tables so that a table comes after every
// table referencing it.
func childrenFirst(linked map[string]bool, fks []*fkEdge) ([]string, error) {
	refs := map[string]int{} // parent -> children not yet placed
	for _, e := range fks {
		if e.child != e.parent && linked[e.child] {
			refs[e.parent]++
		}
	}
	var order []string
	placed := map[string]bool{}
	for len(placed) < len(linked) {
		progress := false
		for _, t := range slices.Sorted(maps.Keys(linked)) {
			if placed[t] || refs[t] > 0 {
				continue
			}
			placed[t], progress = true, true
			order = append(order, t)
			for _, e := range fks {
				if e.child == t && e.child != e.parent {
					refs[e.parent]--
				}
			}
		}
		if !progress {
			return nil, fmt.Errorf("%w: foreign keys form a cycle among the tables linked to the chosen rows; --follow-fk=false copies the chosen rows alone", ErrBadOptions)
		}
	}
	return order, nil
}

func quoted(cols []string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = escape.Ident(c)
	}
	return out
}

func tableOf(name string) string {
	_, t, _ := strings.Cut(name, ".")
	return t
}
