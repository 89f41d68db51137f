package dbcopy

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/verify"
)

// targetConn is one target connection with db as its default database.
func (c *copier) targetConn(ctx context.Context, db string) (*sql.Conn, error) {
	conn, err := c.dst.DB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("target: connect: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "USE "+escape.Ident(db)); err != nil {
		conn.Close()
		return nil, fmt.Errorf("target: use %s: %w", db, err)
	}
	return conn, nil
}

// createSchema makes each target database (refusing one that holds tables
// unless --replace), then its tables, routines and views: routines before
// views, which may call them.
func (c *copier) createSchema(ctx context.Context, tables map[string]*schema.Table, objs map[string][4][]object) error {
	for _, p := range c.pairs {
		var n int
		if err := c.dst.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", p.Target).Scan(&n); err != nil {
			return fmt.Errorf("target: look up database %s: %w", p.Target, err)
		}
		if n > 0 {
			if !c.opts.Replace {
				return fmt.Errorf("%w: target database %s holds %d tables or views; --replace drops it and copies afresh", ErrTargetNotEmpty, p.Target, n)
			}
			c.logf("dropping target database %s (%d tables or views): --replace", p.Target, n)
			if _, err := c.dst.DB.ExecContext(ctx, "DROP DATABASE "+escape.Ident(p.Target)); err != nil {
				return fmt.Errorf("target: drop database %s: %w", p.Target, err)
			}
		}
		m, err := showCreate(ctx, c.src.DB, "SHOW CREATE DATABASE "+escape.Ident(p.Source))
		if err != nil {
			return err
		}
		create := strings.Replace(m["create database"], escape.Ident(p.Source), escape.Ident(p.Target), 1)
		create = strings.Replace(create, "CREATE DATABASE", "CREATE DATABASE IF NOT EXISTS", 1)
		create = strings.Replace(create, "IF NOT EXISTS /*!32312 IF NOT EXISTS*/", "IF NOT EXISTS", 1)
		create = c.toTarget(create)
		if _, err := c.dst.DB.ExecContext(ctx, create); err != nil {
			return fmt.Errorf("target: create database %s: %w", p.Target, err)
		}
		conn, err := c.targetConn(ctx, p.Target)
		if err != nil {
			return err
		}
		err = c.createTables(ctx, p, tables)
		if err == nil {
			o := objs[p.Source]
			err = createObjects(ctx, conn, append(append([]object{}, o[1]...), o[0]...))
		}
		conn.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (c *copier) createTables(ctx context.Context, p DatabasePair, tables map[string]*schema.Table) error {
	var names []string
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		if tables[name].DB == p.Source {
			names = append(names, name)
		}
	}
	return c.eachParallel(ctx, p.Target, names, func(ctx context.Context, conn *sql.Conn, name string) error {
		if _, err := conn.ExecContext(ctx, c.ddl[name].create); err != nil {
			return fmt.Errorf("target: create table %s: %w", name, err)
		}
		return nil
	})
}

// eachParallel runs fn for each name on up to Threads target connections
// whose default database is db (a target database), and returns the first
// error.
func (c *copier) eachParallel(ctx context.Context, db string, names []string, fn func(ctx context.Context, conn *sql.Conn, name string) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := min(c.opts.Threads, len(names))
	work := make(chan string)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := c.targetConn(ctx, db)
			if err != nil {
				errs <- err
				cancel()
				for range work {
				}
				return
			}
			defer conn.Close()
			for name := range work {
				if ctx.Err() != nil {
					continue
				}
				if err := fn(ctx, conn, name); err != nil {
					errs <- err
					cancel()
				}
			}
		}()
	}
	for _, name := range names {
		select {
		case work <- name:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}

// finishTables adds what was left until after the rows: secondary indexes,
// then foreign keys (not checked again: foreign_key_checks is off, the
// rows come from a server that checked them), then triggers, which would
// have fired on every loaded row.
func (c *copier) finishTables(ctx context.Context, objs map[string][4][]object) error {
	started := time.Now()
	for _, p := range c.pairs {
		conn, err := c.targetConn(ctx, p.Target)
		if err != nil {
			return err
		}
		err = c.finishDB(ctx, conn, p)
		var after []object
		if err == nil {
			// A resumed copy may have made some already.
			o := objs[p.Source]
			after, err = c.missing(ctx, p.Target, append(append([]object{}, o[2]...), o[3]...))
		}
		if err == nil {
			err = createObjects(ctx, conn, after)
		}
		if err == nil {
			err = disableEvents(ctx, conn, after)
		}
		conn.Close()
		if err != nil {
			return err
		}
	}
	c.logf("indexes, foreign keys and triggers added in %.1fs", time.Since(started).Seconds())
	return nil
}

// finishDB adds the secondary indexes of several tables at once, then the
// foreign keys one table at a time: adding a foreign key locks the parent
// table's definition too, which another table's ALTER may hold.
func (c *copier) finishDB(ctx context.Context, conn *sql.Conn, p DatabasePair) error {
	var names []string
	for _, name := range slices.Sorted(maps.Keys(c.ddl)) {
		if strings.HasPrefix(name, p.Source+".") {
			names = append(names, name)
		}
	}
	err := c.eachParallel(ctx, p.Target, names, func(ctx context.Context, conn *sql.Conn, name string) error {
		return c.alter(ctx, conn, name, "indexes", c.ddl[name].indexes)
	})
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := c.alter(ctx, conn, name, "foreign keys", c.ddl[name].fks); err != nil {
			return err
		}
	}
	return nil
}

// alter runs a table's deferred statements of one kind, unless a
// checkpoint says an earlier run did.
func (c *copier) alter(ctx context.Context, conn *sql.Conn, name, kind string, stmts []string) error {
	if len(stmts) == 0 || c.ck.hasPost(name+" "+kind) {
		return nil
	}
	for _, stmt := range stmts {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("target: %s: %s: %w", name, stmt, err)
		}
	}
	return c.ck.postDone(name + " " + kind)
}

// analyze refreshes the target's index statistics, as a migration would.
func (c *copier) analyze(ctx context.Context) error {
	for _, p := range c.pairs {
		side := *c.dst
		_, err := verify.Analyze(ctx, &side, verify.AnalyzeOptions{Databases: []string{p.Target}, Out: io.Discard, Local: true})
		if err != nil {
			return fmt.Errorf("analyze target: %w", err)
		}
	}
	return nil
}

// verify compares what was copied: whole tables in one run per database,
// each subset table with its own condition, evaluated on both sides (its
// subqueries read each side's own tables).
func (c *copier) verify(ctx context.Context) error {
	started := time.Now()
	vr := &VerifyResult{Equal: true}
	c.res.Verify = vr
	for _, p := range c.pairs {
		src, err := connect(ctx, "source", c.src.Target, p.Source, c.opts.Threads+1, verifyParams)
		if err != nil {
			return err
		}
		defer src.DB.Close()
		dst, err := connect(ctx, "target", c.dst.Target, p.Target, c.opts.Threads+1, verifyParams)
		if err != nil {
			return err
		}
		defer dst.DB.Close()
		src.Target.DB, dst.Target.DB = p.Source, p.Target
		groups := map[string][]string{} // condition -> tables
		for _, pl := range c.plans {
			if pl.srcDB == p.Source {
				groups[pl.cond] = append(groups[pl.cond], pl.t.Name)
			}
		}
		for _, cond := range slices.Sorted(maps.Keys(groups)) {
			rep, err := verify.Run(ctx, src, dst, verify.Options{Tables: groups[cond], Where: cond, Threads: c.opts.Threads, Recheck: 2})
			if rep != nil {
				vr.add(rep)
			}
			if err != nil {
				return fmt.Errorf("verify the copy: %w", err)
			}
		}
	}
	vr.Seconds = time.Since(started).Seconds()
	return nil
}

func (v *VerifyResult) add(rep *verify.Report) {
	v.Equal = v.Equal && rep.Equal
	v.DifferingRows += rep.DifferingRows
	v.SchemaDifferences += rep.SchemaDifferences
	for _, t := range rep.Tables {
		v.Tables++
		if !t.Equal {
			v.Differing = append(v.Differing, t.Table)
		}
	}
}
