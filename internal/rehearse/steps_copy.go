package rehearse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/check"
	"github.com/shakedown/shakedown/internal/dbcopy"
	"github.com/shakedown/shakedown/internal/plan"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/suggest"
	"github.com/shakedown/shakedown/internal/usage"
)

// KindCopy is the evidence kind of a copy the rehearsal made: its
// document is dbcopy's result, which the verify step reads to compare
// only what was copied.
const KindCopy = "copy"

// copyKeys are the options data: copy takes, as copy's flags.
var copyKeys = []string{"schema", "accounts", "threads", "chunk-rows", "consistency", "replace", "allow-write", "indexes-with-data", "where", "sample", "follow-fk", "fk-depth"}

// copyOptions reads the plan's data: copy options into dbcopy's, before
// anything runs: a bad one is a usage error naming its line. The copy
// writes the candidates, so the plan must say allow-write: true.
func copyOptions(p *plan.Rehearsal) (dbcopy.Options, error) {
	o := dbcopy.Options{Databases: p.Databases, FKDepth: 3}
	if p.Data.Mode != plan.DataCopy || p.Steps[plan.StepCopy].Skip {
		return o, nil
	}
	bad := func(opt plan.Option, format string, args ...any) error {
		return usage.Errorf("%s:%d: data: copy: %s: %s", p.Path, opt.Line, opt.Key, fmt.Sprintf(format, args...))
	}
	followFK := true
	for _, opt := range p.Data.Options {
		v := strings.TrimSpace(opt.Value)
		var err error
		switch opt.Key {
		case "threads", "fk-depth", "chunk-rows":
			n, cerr := strconv.Atoi(v)
			min := map[string]int{"threads": 1, "fk-depth": 1, "chunk-rows": 100}[opt.Key]
			if cerr != nil || n < min {
				return o, bad(opt, "%q: want a whole number >= %d", v, min)
			}
			switch opt.Key {
			case "threads":
				o.Threads = n
			case "fk-depth":
				o.FKDepth = n
			default:
				o.ChunkRows = int64(n)
			}
		case "schema":
			if v != dbcopy.SchemaCreate && v != dbcopy.SchemaExisting {
				return o, bad(opt, "%q: want create (the candidate's tables from the source's) or existing (load into tables the candidate has)", v)
			}
			o.Schema = v
		case "consistency":
			if v != dbcopy.ConsistencyLock && v != dbcopy.ConsistencyNone {
				return o, bad(opt, "%q: want lock or none", v)
			}
			o.Consistency = v
		case "replace", "allow-write", "indexes-with-data", "follow-fk", "accounts":
			b, cerr := strconv.ParseBool(v)
			if cerr != nil {
				return o, bad(opt, "%q: want true or false", v)
			}
			switch opt.Key {
			case "replace":
				o.Replace = b
			case "allow-write":
				o.AllowWrite = b
			case "indexes-with-data":
				o.IndexesWithData = b
			case "accounts":
				o.Accounts = b
			default:
				followFK = b
			}
		case "where":
			// One 'db.table: condition' per line, so that a block
			// scalar can hold several.
			for _, w := range strings.Split(v, "\n") {
				if strings.TrimSpace(w) == "" {
					continue
				}
				table, cond, werr := dbcopy.ParseWhere(w)
				if werr != nil {
					return o, bad(opt, "%v", werr)
				}
				if o.Where == nil {
					o.Where = map[string]string{}
				}
				o.Where[table] = cond
			}
		case "sample":
			if o.Sample, err = dbcopy.ParseSample(v); err != nil {
				return o, bad(opt, "%v", err)
			}
		default:
			msg := "unknown option; copy's options are " + strings.Join(copyKeys, ", ")
			if s := suggest.Closest(opt.Key, copyKeys); s != "" {
				msg = fmt.Sprintf("unknown option (did you mean %s?)", s)
			}
			return o, bad(opt, "%s", msg)
		}
	}
	o.NoFollowFK = !followFK
	// The follower applies the rows the source's triggers wrote: the
	// candidate's triggers would write them twice.
	o.DeferTriggers = following(p)
	if !o.AllowWrite {
		return o, usage.Errorf("%s:%d: data: copy writes the candidates (tables created, rows loaded): add allow-write: true under copy:, or use data: present",
			p.Path, p.Data.Line)
	}
	return o, nil
}

type copyStep struct{ c *chain }

func (copyStep) Name() string { return plan.StepCopy }

// Run copies the source onto each candidate and stores dbcopy's result
// as evidence. The chain's own analyze and verify steps follow, so the
// copy does neither.
func (s copyStep) Run(ctx context.Context) (Result, error) {
	c := s.c
	if c.p.Data.Mode != plan.DataCopy {
		return Result{Skipped: true, Summary: "skipped: data: present: the candidates hold the data already"}, nil
	}
	var checkpoints []string
	r, err := c.perCandidate(ctx, func(ctx context.Context, cand *plan.Target) (Result, error) {
		o := c.copyOpts
		o.NoVerify, o.NoAnalyze = true, true
		o.OnProgress = c.opts.copyProgress
		o.Checkpoint = c.checkpoint(cand)
		checkpoints = append(checkpoints, o.Checkpoint)
		// A checkpoint of this rehearsal is left by a copy that was
		// killed: the resumed rehearsal continues it.
		_, serr := os.Stat(o.Checkpoint)
		o.Resume = serr == nil
		res, err := dbcopy.Run(ctx, c.p.Source.Target, cand.Target, o)
		if res == nil {
			return Result{}, err
		}
		summary := fmt.Sprintf("copied %d rows of %d tables in %.1f s", res.Rows, len(res.Tables), res.Seconds)
		if res.Subset {
			summary += " (a subset)"
		}
		if res.Schema == dbcopy.SchemaExisting {
			summary += " into the candidate's own tables"
		}
		if res.Resumed {
			summary += ", resumed from its checkpoint"
		}
		outcome := store.OutcomePass
		if err != nil {
			outcome, summary = store.OutcomeIncomplete, "incomplete: "+summary
		}
		doc, jerr := json.Marshal(res)
		id, serr := c.evidence(ctx, &store.Evidence{Kind: KindCopy, Source: c.p.Source.Target.Redacted(),
			Target: cand.Target.Redacted(), Outcome: outcome, Summary: summary, Tool: c.opts.Version, Document: doc}, jerr)
		if serr != nil {
			return Result{}, errors.Join(err, serr)
		}
		return Result{Outcome: outcome, Summary: summary, Ref: fmt.Sprintf("evidence %d", id)}, err
	})
	if err == nil {
		// Done: a later resume of this rehearsal has no copy to continue.
		for _, ck := range checkpoints {
			os.Remove(ck)
		}
	}
	return r, err
}

// checkpoint is the copy's checkpoint file for cand, beside the store and
// named by the rehearsal, so that only a resume of this rehearsal finds
// it.
func (c *chain) checkpoint(cand *plan.Target) string {
	st := c.opts.Store.Path()
	name := fmt.Sprintf("%s.rehearsal-%d.copy-%s.ckpt", filepath.Base(st), c.id, unsafeName.ReplaceAllString(cand.Name, "_"))
	return filepath.Join(filepath.Dir(st), name)
}

// copied is the copy this rehearsal made onto cand when it was a subset:
// the verify step then compares each table's chosen rows only. Nil: the
// candidate holds whole tables (data: present, or a whole copy).
func (c *chain) copied(ctx context.Context, cand *plan.Target) (*dbcopy.Result, error) {
	if c.p.Data.Mode != plan.DataCopy || c.p.Steps[plan.StepCopy].Skip {
		return nil, nil
	}
	res, err := c.copyResult(ctx, cand)
	if err != nil || res == nil || !res.Subset {
		return nil, err
	}
	return res, nil
}

// copyResolves makes notices of the check's findings that the plan's copy
// step puts right, as the check runs before it: views, routines and
// triggers the candidate lacks (the copy creates them, triggers after the
// rows, as loaders do), and with schema: create the database and its
// tables. The message says so. A copy that is followed leaves the
// triggers out: each missing one is a warning, a thing to do at the
// switch.
func (c *chain) copyResolves(rep *check.Report) {
	if c.p.Data.Mode != plan.DataCopy || c.p.Steps[plan.StepCopy].Skip {
		return
	}
	kinds := map[string]bool{"missing_view": true, "missing_routine": true, "missing_trigger": true}
	if c.copyOpts.Schema != dbcopy.SchemaExisting {
		kinds["missing_database"], kinds["missing_table"] = true, true
	}
	for i := range rep.Findings {
		f := &rep.Findings[i]
		if !kinds[f.Check] || f.Severity == check.Notice {
			continue
		}
		switch f.Severity {
		case check.Error:
			rep.Errors--
		case check.Warning:
			rep.Warnings--
		}
		if f.Check == "missing_trigger" && following(c.p) {
			rep.Warnings++
			f.Severity = check.Warning
			f.Message += " (the rehearsal's copy leaves triggers out while it is followed, since the follower applies what they wrote: create it on the candidate at the switch, once the follower has stopped)"
			continue
		}
		rep.Notices++
		f.Severity = check.Notice
		f.Message += " (before the copy: the rehearsal's copy step creates it)"
	}
}
