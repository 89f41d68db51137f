package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
)

// Validate checks the options as the flags of verify's command line set
// them, before anything connects: a fault is bad usage that names the
// flag. There, RecheckWait and ProgressInterval may be 0 (no wait; only a
// line per finished table); Run reads 0 as its defaults, so Flags maps
// them once they are valid.
func (o *Options) Validate() error {
	switch {
	case o.Threads < 1:
		return usage.Errorf("verify: --threads must be >= 1")
	case o.ChunkTime <= 0:
		return usage.Errorf("verify: --chunk-time must be > 0, e.g. 100ms")
	case o.MaxLoad < 0:
		return usage.Errorf("verify: --max-load must be >= 0")
	case o.Recheck < 0:
		return usage.Errorf("verify: --recheck must be >= 0")
	case o.Rechecks < 0:
		return usage.Errorf("verify: --rechecks must be >= 0")
	case o.Rechecks > 0 && o.Settle == nil:
		return usage.Errorf("verify: --rechecks needs a follower to wait for: use it while one applies the source's changes to the target, else leave it at 0")
	case o.RecheckWait < 0:
		return usage.Errorf("verify: --recheck-wait must be >= 0")
	case o.MaxRows < 1:
		return usage.Errorf("verify: --max-rows must be >= 1")
	case o.ProgressInterval < 0:
		return usage.Errorf("verify: --progress must be >= 0")
	case strings.Contains(o.Where, ";"):
		return usage.Errorf("verify: --where is one condition, without ';'")
	case o.FixTriggers != "" && o.FixTriggers != FixTriggersSkip && o.FixTriggers != FixTriggersDrop:
		return usage.Errorf("verify: --fix-sql-triggers must be skip or drop, got %q", o.FixTriggers)
	}
	return nil
}

// FromFlags turns the zeros that verify's flags allow into what Run
// reads: no wait before a re-read is the shortest one, and no progress
// interval is no periodic line at all.
func (o *Options) FromFlags() {
	if o.RecheckWait == 0 {
		o.RecheckWait = time.Nanosecond
	}
	if o.ProgressInterval == 0 {
		o.ProgressInterval = 1000 * time.Hour
	}
}

// OpenFiles opens the repair SQL file fix and the checkpoint resume (each
// when not ""), recorded for the check fp describes, and sets Fix and
// Checkpoint; a checkpoint that resumes an earlier check is said on
// Progress. closeAll closes what was opened, even after an error. A
// checkpoint of another check is bad usage.
func (o *Options) OpenFiles(fix, resume string, fp Fingerprint) (closeAll func(), err error) {
	var closers []func()
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	if fix != "" {
		f, err := os.Create(fix)
		if err != nil {
			return closeAll, fmt.Errorf("create --fix-sql file: %w", err)
		}
		closers = append(closers, func() { f.Close() })
		o.Fix = f
	}
	if resume != "" {
		ck, err := OpenCheckpoint(resume, fp)
		if errors.Is(err, ErrCheckpointMismatch) {
			return closeAll, usage.Errorf("verify: --resume: %v", err)
		}
		if err != nil {
			return closeAll, err
		}
		closers = append(closers, func() { ck.Close() })
		o.Checkpoint = ck
		if ck.Resumed() && o.Progress != nil {
			fmt.Fprintf(o.Progress, "verify: resuming from %s\n", resume)
		}
	}
	return closeAll, nil
}

// Sides connects to both sides with pools of size connections, after
// giving a URL without a database the other's. The caller closes both
// Side.DB; on an error neither is left open.
func Sides(ctx context.Context, src, dst *target.Target, size int) (s, d *schema.Side, err error) {
	switch {
	case src.NamesDB() && !dst.NamesDB():
		dst.DB = src.DB
	case dst.NamesDB() && !src.NamesDB():
		src.DB = dst.DB
	}
	if s, err = Connect(ctx, "source", src, size); err != nil {
		return nil, nil, err
	}
	if d, err = Connect(ctx, "target", dst, size); err != nil {
		s.DB.Close()
		return nil, nil, err
	}
	return s, d, nil
}

// Databases are the databases verify compares: those named (--databases)
// as the source has them, else every user database when the source's URL
// names none; nil leaves it to Run, which pairs the URLs' databases.
func Databases(ctx context.Context, src *schema.Side, named []string) ([]string, error) {
	if len(named) == 0 && src.Target.DB != "" {
		return nil, nil
	}
	return src.Target.Databases(ctx, src.DB, named, target.EveryDatabase, "verify: SOURCE")
}
