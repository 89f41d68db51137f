package verify

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/schema"
)

// ErrNothingToCompare means the source database does not exist or no table
// is selected: the check would prove nothing.
var ErrNothingToCompare = errors.New("nothing to compare")

// dbPair is a database compared on both sides.
type dbPair struct{ src, dst string }

func (r *runner) dbPairs() []dbPair {
	if len(r.opts.Databases) == 0 {
		return []dbPair{{r.src.Target.DB, r.dst.Target.DB}}
	}
	out := make([]dbPair, len(r.opts.Databases))
	for i, d := range r.opts.Databases {
		out[i] = dbPair{d, d}
	}
	return out
}

// plan reads both schemas, reports tables present on one side only and
// schema differences, and prepares a job for every table on both sides.
func (r *runner) plan(ctx context.Context, rep *Report) ([]*tableJob, error) {
	pairs := r.dbPairs()
	var srcDBs, dstDBs []string
	toDst := map[string]string{}
	for _, p := range pairs {
		srcDBs, dstDBs = append(srcDBs, p.src), append(dstDBs, p.dst)
		toDst[p.src] = p.dst
	}
	for _, db := range srcDBs {
		var n int
		if err := r.src.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", db).Scan(&n); err != nil {
			return nil, fmt.Errorf("look up source database %s: %w", db, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: the source has no database %q", ErrNothingToCompare, db)
		}
	}
	var st, dt map[string]*schema.Table
	if err := both(func() (err error) { st, err = schema.Load(ctx, r.src, srcDBs); return },
		func() (err error) { dt, err = schema.Load(ctx, r.dst, dstDBs); return }); err != nil {
		return nil, err
	}
	toSrc := map[string]string{}
	for s, d := range toDst {
		toSrc[d] = s
	}
	// Tables by their source-side name.
	names := map[string]bool{}
	for n, t := range st {
		if r.selected(t.DB, t.Name) {
			names[n] = true
		}
	}
	dstByName := map[string]*schema.Table{}
	for _, t := range dt {
		sdb := toSrc[t.DB]
		if r.selected(sdb, t.Name) {
			dstByName[sdb+"."+t.Name] = t
			names[sdb+"."+t.Name] = true
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: no tables in %s match --tables and --exclude", ErrNothingToCompare, strings.Join(srcDBs, ", "))
	}
	// A server that cannot list its collations gets every collation
	// difference reported as one.
	coll, _ := flavour.ReadCollations(ctx, r.dst.DB)
	var jobs []*tableJob
	for _, n := range slices.Sorted(maps.Keys(names)) {
		s, d := st[n], dstByName[n]
		tr := &TableReport{Table: n, SchemaDifferences: []schema.Diff{}, Rows: []*RowDiff{}, Key: []string{}, Compared: []string{}}
		rep.Tables = append(rep.Tables, tr)
		switch {
		case d == nil:
			tr.SchemaDifferences = append(tr.SchemaDifferences, schema.Diff{Kind: "table_missing_on_target"})
			tr.RowsSource = r.count(ctx, r.src, s)
			r.fix.comment(fmt.Sprintf("%s: table missing on the target (%s on the source): create it and copy its rows, e.g. with a dump",
				n, plural(int(tr.RowsSource), "row")))
			continue
		case s == nil:
			tr.SchemaDifferences = append(tr.SchemaDifferences, schema.Diff{Kind: "table_extra_on_target"})
			tr.RowsTarget = r.count(ctx, r.dst, d)
			tr.Table = d.FullName()
			r.fix.comment(fmt.Sprintf("%s: table only on the target (%s); not dropped: DROP TABLE %s if it should go",
				d.FullName(), plural(int(tr.RowsTarget), "row"), escape.Qualified(d.DB, d.Name)))
			continue
		}
		if d.FullName() != n {
			tr.TargetTable = d.FullName()
		}
		diffs, notes := mappedCollations(schema.Compare(s, d), coll)
		tr.SchemaDifferences = append(tr.SchemaDifferences, diffs...)
		tr.Notes = append(tr.Notes, notes...)
		for _, sd := range tr.SchemaDifferences {
			r.fix.comment(n + ": schema: " + sd.String())
		}
		jobs = append(jobs, r.newTableJob(s, d, tr))
	}
	return jobs, nil
}

// count is a table's row count, for tables on one side only; -1 when it
// cannot be read.
func (r *runner) count(ctx context.Context, s *schema.Side, t *schema.Table) int64 {
	var n int64
	q := "SELECT COUNT(*) FROM " + escape.Qualified(t.DB, t.Name)
	if err := s.DB.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return -1
	}
	return n
}

// selected applies --tables and --exclude to a source-side name.
func (r *runner) selected(db, table string) bool {
	match := func(patterns []string) bool {
		for _, p := range patterns {
			pdb, ptbl, qualified := strings.Cut(p, ".")
			if !qualified {
				ptbl, pdb = pdb, "*"
			}
			okDB, _ := path.Match(pdb, db)
			okTbl, _ := path.Match(ptbl, table)
			if okDB && okTbl {
				return true
			}
		}
		return false
	}
	if len(r.opts.Tables) > 0 && !match(r.opts.Tables) {
		return false
	}
	return !match(r.opts.Exclude)
}

func (r *runner) newTableJob(s, d *schema.Table, tr *TableReport) *tableJob {
	t := &tableJob{
		r:       r,
		opts:    &r.opts,
		name:    s.FullName(),
		srcName: escape.Qualified(s.DB, s.Name),
		dstName: escape.Qualified(d.DB, d.Name),
		estRows: s.Rows,
		rep:     tr,
	}
	specsByName := map[string]*colSpec{}
	for _, sc := range s.Columns {
		dc := d.Column(sc.Name)
		if dc == nil {
			tr.NotCompared = append(tr.NotCompared, sc.Name+" (source only)")
			continue
		}
		spec := newColSpec(sc, dc, r.src.Server.Flavour.StoresCharset(sc.Charset) && r.dst.Server.Flavour.StoresCharset(dc.Charset))
		t.specs = append(t.specs, spec)
		specsByName[strings.ToLower(sc.Name)] = spec
		tr.Compared = append(tr.Compared, sc.Name)
	}
	for _, dc := range d.Columns {
		if s.Column(dc.Name) == nil {
			tr.NotCompared = append(tr.NotCompared, dc.Name+" (target only)")
		}
	}
	if len(tr.NotCompared) > 0 {
		tr.Notes = append(tr.Notes, fmt.Sprintf("data compared on the %s both sides have; not compared: %s",
			plural(len(t.specs), "column"), strings.Join(tr.NotCompared, ", ")))
	}
	t.key = chooseKey(s, d, specsByName)
	tr.Key = t.key.Names()
	tr.KeyIndex = t.key.Index
	switch {
	case t.key.Index == "":
		t.scheme = schemeSingle
		tr.Notes = append(tr.Notes, "no primary key or NOT NULL unique key: compared as whole rows, duplicates counted, in one chunk")
	case !t.key.ordered:
		t.scheme = schemeSingle
		tr.Notes = append(tr.Notes, "the key's type, character set or collation differs between the sides: compared in one chunk, rows ordered by their binary form")
	case t.key.cols[0].cmp == kcInt:
		t.scheme = schemeInt
	default:
		t.scheme = schemeWalk
	}
	for _, sp := range t.specs {
		if sp.rule == ruleJSON && r.src.Server.Flavour != r.dst.Server.Flavour {
			tr.Notes = append(tr.Notes, "JSON columns print differently on "+string(r.src.Server.Flavour)+" and "+string(r.dst.Server.Flavour)+
				": chunks holding them are compared row by row")
			break
		}
	}
	useRawText(t.specs)
	t.hashSQL = rowHashSQL(t.specs)
	t.checksumSQL = checksumSelect(t.specs, r.checksum)
	t.sizer = newSizer(r.opts.ChunkTime, 1)
	if r.opts.chunkRows > 0 {
		t.sizer.rows, t.sizer.fixed = float64(r.opts.chunkRows), true
	}
	return t
}

// mappedCollations takes out of diffs the collation differences that the
// target's lack explains: the source's collation is not one the target
// has, and the target's is the nearest it has (what copy makes of it).
// Each becomes a note; the values are still compared, by value.
func mappedCollations(diffs []schema.Diff, coll flavour.Collations) ([]schema.Diff, []string) {
	var keep []schema.Diff
	var notes []string
	for _, d := range diffs {
		if d.Kind == "column_collation" && d.Source != "" {
			if _, has := coll[strings.ToLower(d.Source)]; !has {
				if near, changed := coll.Nearest(d.Source); changed && strings.EqualFold(near, d.Target) {
					n := fmt.Sprintf("column %s: collation %s is %s on the target, which has no %s", d.Object, d.Source, d.Target, d.Source)
					if why := flavour.CaseChange(strings.ToLower(d.Source), strings.ToLower(d.Target)); why != "" {
						n += " (" + why + ")"
					}
					notes = append(notes, n)
					continue
				}
			}
		}
		keep = append(keep, d)
	}
	return keep, notes
}
