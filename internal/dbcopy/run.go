package dbcopy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
)

// ErrBadOptions means the options cannot work together; the error says
// which.
var ErrBadOptions = errors.New("bad copy options")

// deferIndexRows is the estimated size from which a table's secondary
// indexes are built after its rows: below it, keeping them up to date as
// the rows arrive costs less than an ALTER TABLE of its own.
const deferIndexRows = 50_000

// copier is one copy run.
type copier struct {
	opts     Options
	res      *Result
	src, dst *schema.Side
	pairs    []DatabasePair
	ck       *checkpoint
	plans    []*tablePlan
	ddl      map[string]tableDDL // by source db.table
	started  time.Time
	// coll is what the target accepts; mapped, the collations that DDL
	// named and the target lacks, with what they became.
	coll   flavour.Collations
	mapped map[string]string
}

// toTarget makes a statement read from the source acceptable to the
// target: collations it lacks become the nearest it has (recorded for the
// note the copy ends with).
func (c *copier) toTarget(stmt string) string {
	return c.coll.Rewrite(stmt, func(from, to string) { c.mapped[from] = to })
}

// jsonText names t's MariaDB JSON columns (lower case) when the target's
// JSON is a type of its own, so that they are created as JSON there, not
// as the LONGTEXT MariaDB shows them as; nil otherwise.
func (c *copier) jsonText(t *schema.Table) map[string]bool {
	if !c.dst.Server.Stores().NativeJSON() {
		return nil
	}
	var out map[string]bool
	for _, col := range t.Columns {
		if col.IsJSONText {
			if out == nil {
				out = map[string]bool{}
			}
			out[strings.ToLower(col.Name)] = true
		}
	}
	return out
}

// lacking is objs, or none when the target's flavour has no such objects
// (TiDB has no triggers, routines or events) or its clients cannot create
// them (vtgate): the copy then goes on without them and says which it
// left out, as check reports them.
func (c *copier) lacking(kind string, objs []object, has bool) []object {
	f := c.dst.Server.Flavour
	if has && f.ObjectDDL() || len(objs) == 0 {
		return objs
	}
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = o.name
	}
	if !has {
		c.res.Notes = append(c.res.Notes, fmt.Sprintf("%s not copied: %s has none (%s); what they do must move into the application",
			kind, f.Title(), strings.Join(names, ", ")))
		return nil
	}
	c.res.Notes = append(c.res.Notes, fmt.Sprintf("%s not copied: %s cannot create them through its clients' connections (%s); create them on the server beneath it, or move what they do into the application",
		kind, f.Title(), strings.Join(names, ", ")))
	return nil
}

// collationNotes says what the mapping changed, one note a collation.
func (c *copier) collationNotes() []string {
	var out []string
	for _, from := range slices.Sorted(maps.Keys(c.mapped)) {
		to := c.mapped[from]
		n := fmt.Sprintf("collation %s: the target has none, so %s is used (%s)", from, to, c.dst.Server.Flavour.Title())
		if why := flavour.CaseChange(from, to); why != "" {
			n += ": " + why
		}
		out = append(out, n)
	}
	return out
}

// Run copies the source's databases to the target and verifies the
// result. The Result is non-nil whenever anything was done, also with an
// error; verify's findings are in Result.Verify, not in the error.
func Run(ctx context.Context, src, dst *target.Target, opts Options) (*Result, error) {
	opts.defaults()
	if !opts.AllowWrite {
		return nil, ErrWriteNotAllowed
	}
	c := &copier{opts: opts, started: time.Now(), ddl: map[string]tableDDL{}, mapped: map[string]string{}}
	c.res = &Result{Source: src.Redacted(), Target: dst.Redacted(), Tables: []*TableResult{}, Notes: []string{}}
	c.pairs = databasePairs(src, dst, opts.Databases)
	c.res.Databases = c.pairs
	c.res.Subset = len(opts.Where) > 0 || opts.Sample > 0
	if c.res.Subset && len(c.pairs) != 1 {
		return nil, fmt.Errorf("%w: --where and --sample copy one database at a time (name it in SOURCE's URL)", ErrBadOptions)
	}
	if opts.Schema != SchemaCreate && opts.Schema != SchemaExisting {
		return nil, fmt.Errorf("%w: --schema %q: want create or existing", ErrBadOptions, opts.Schema)
	}
	c.res.Schema = opts.Schema
	if opts.Resume && opts.Checkpoint == "" {
		return nil, fmt.Errorf("%w: --resume needs --checkpoint FILE", ErrBadOptions)
	}
	srcDefault := ""
	if len(c.pairs) == 1 {
		// Subset conditions name tables without their database.
		srcDefault = c.pairs[0].Source
	}
	var err error
	if c.src, err = connect(ctx, "source", src, srcDefault, opts.Threads+2, sourceParams); err != nil {
		return nil, err
	}
	defer c.src.DB.Close()
	if c.dst, err = connect(ctx, "target", dst, "", opts.Threads+2, targetParams); err != nil {
		return nil, err
	}
	defer c.dst.DB.Close()
	if c.coll, err = flavour.ReadCollations(ctx, c.dst.DB); err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	if opts.Checkpoint != "" {
		id := c.res.Source + " -> " + c.res.Target
		if c.ck, err = openCheckpoint(opts.Checkpoint, id, opts.Resume); err != nil {
			return nil, err
		}
		defer c.ck.close()
		c.res.Resumed = opts.Resume
	}
	if err := c.run(ctx); err != nil {
		c.res.Seconds = time.Since(c.started).Seconds()
		if ctx.Err() != nil {
			return c.res, fmt.Errorf("%w: %w", ErrInterrupted, ctx.Err())
		}
		return c.res, err
	}
	return c.res, nil
}

func databasePairs(src, dst *target.Target, dbs []string) []DatabasePair {
	if len(dbs) > 0 {
		out := make([]DatabasePair, len(dbs))
		for i, d := range dbs {
			out[i] = DatabasePair{d, d}
		}
		return out
	}
	d := dst.DB
	if d == "" {
		d = src.DB
	}
	return []DatabasePair{{src.DB, d}}
}

func (c *copier) logf(format string, args ...any) {
	if c.opts.Log != nil {
		fmt.Fprintf(c.opts.Log, format+"\n", args...)
	}
}

func (c *copier) run(ctx context.Context) error {
	var srcDBs []string
	dstOf := map[string]string{}
	for _, p := range c.pairs {
		if p.Source == "" {
			return fmt.Errorf("%w: name the database to copy in SOURCE's URL or with --databases", ErrNothingToCopy)
		}
		srcDBs = append(srcDBs, p.Source)
		dstOf[p.Source] = p.Target
	}
	tables, err := schema.Load(ctx, c.src, srcDBs)
	if err != nil {
		return fmt.Errorf("read source schema: %w", err)
	}
	if len(tables) == 0 {
		return fmt.Errorf("%w: the source has no tables in %s", ErrNothingToCopy, strings.Join(srcDBs, ", "))
	}
	conds, notes, err := c.planSubset(ctx, tables)
	if err != nil {
		return err
	}
	c.res.Notes = append(c.res.Notes, notes...)
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		t := tables[name]
		p := newTablePlan(t, dstOf[t.DB], conds[name])
		c.plans = append(c.plans, p)
		c.res.Tables = append(c.res.Tables, p.res)
		if c.opts.Schema == SchemaExisting {
			// The target's tables are the DBA's: nothing is added to them.
			c.ddl[name] = tableDDL{}
			continue
		}
		m, err := showCreate(ctx, c.src.DB, "SHOW CREATE TABLE "+escape.Qualified(t.DB, t.Name))
		if err != nil {
			return err
		}
		deferIndexes := !c.opts.IndexesWithData && t.Rows >= c.opts.deferRows
		c.ddl[name] = splitCreateTable(c.toTarget(retarget(m["create table"], t.DB, dstOf[t.DB])), t.Name, deferIndexes, c.jsonText(t))
	}
	// Largest first: the last table to finish is then a small one.
	sort.SliceStable(c.plans, func(i, j int) bool { return c.plans[i].t.Rows > c.plans[j].t.Rows })

	objs := map[string][4][]object{}
	for _, p := range c.pairs {
		v, r, t, err := readObjects(ctx, c.src.DB, p.Source, p.Target)
		if err != nil {
			return err
		}
		e, err := readEvents(ctx, c.src.DB, p.Source, p.Target)
		if err != nil {
			return err
		}
		for _, list := range [][]object{v, r, t, e} {
			for i := range list {
				list[i].create = c.toTarget(list[i].create)
			}
		}
		r, t, e = c.lacking("routines", r, c.dst.Server.Flavour.Routines()), c.lacking("triggers", t, c.dst.Server.Flavour.Triggers()),
			c.lacking("events", e, c.dst.Server.Flavour.Events())
		if c.opts.DeferTriggers && len(t) > 0 {
			names := make([]string, len(t))
			for i, o := range t {
				names[i] = p.Target + "." + o.name
			}
			c.res.Notes = append(c.res.Notes, fmt.Sprintf("%d triggers not created, since the copy is followed (they would repeat on the target what the source's triggers wrote into its binary log): create them at the switch, as SHOW CREATE TRIGGER on the source gives them: %s",
				len(t), strings.Join(names, ", ")))
			t = nil
		}
		objs[p.Source] = [4][]object{v, r, t, e}
		c.res.Views, c.res.Routines, c.res.Triggers = c.res.Views+len(v), c.res.Routines+len(r), c.res.Triggers+len(t)
		c.res.Events += len(e)
	}
	if c.res.Events > 0 {
		c.res.Notes = append(c.res.Notes, fmt.Sprintf("%d events created disabled, so that they change nothing on the target before the move: ALTER EVENT ... ENABLE at the cutover", c.res.Events))
	}
	if !c.ck.hasSchema() {
		create := c.createSchema
		if c.opts.Schema == SchemaExisting {
			create = c.checkExisting
		}
		err := create(ctx, tables, objs)
		if err != nil {
			c.res.Notes = append(c.res.Notes, c.collationNotes()...)
			return err
		}
		if err := c.ck.schemaCreated(); err != nil {
			return err
		}
	}
	c.res.Notes = append(c.res.Notes, c.collationNotes()...)
	if err := c.copyData(ctx); err != nil {
		return err
	}
	if err := c.finishTables(ctx, objs); err != nil {
		return err
	}
	if c.opts.Accounts {
		if err := c.copyAccounts(ctx); err != nil {
			return err
		}
		c.res.Notes = append(c.res.Notes, fmt.Sprintf("%d accounts with privileges on the copied databases created (those the target had kept) and granted them", c.res.Accounts))
	}
	c.res.Seconds = time.Since(c.started).Seconds()
	if !c.opts.NoAnalyze {
		// Every row has arrived by now: a server that refuses the
		// ANALYZE costs its fresh statistics, said in the notes, not
		// the verify.
		if err := c.analyze(ctx); err != nil {
			if ctx.Err() != nil {
				return err
			}
			c.res.Notes = append(c.res.Notes, fmt.Sprintf("statistics not refreshed: %v; run ANALYZE TABLE on the target by hand", err))
		}
	}
	if !c.opts.NoVerify {
		return c.verify(ctx)
	}
	return nil
}
