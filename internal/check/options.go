package check

import (
	"context"
	"strings"

	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
)

// Validate checks the options as the flags of check's command line set
// them, before anything connects: a fault is bad usage that names the
// flag.
func (o *Options) Validate() error {
	switch {
	case o.CopyTime <= 0:
		return usage.Errorf("check: --copy-time must be > 0, e.g. 6h")
	case o.MaxScanRows < 0:
		return usage.Errorf("check: --max-scan-rows must be >= 0")
	case o.QueryTimeout <= 0:
		return usage.Errorf("check: --query-timeout must be > 0, e.g. 30s")
	case o.MigrationUser != "" && !strings.Contains(o.MigrationUser, "@"):
		return usage.Errorf("check: --migration-user must be 'user'@'host', e.g. 'dm'@'%%'")
	}
	return nil
}

// Databases are the databases check compares: those named (--databases)
// or the one the source's URL names, each of which must exist on the
// source; nil when neither names one, which Run reads as every user
// database of the source.
func Databases(ctx context.Context, src *schema.Side, named []string) ([]string, error) {
	dbs, err := src.Target.Databases(ctx, src.DB, named, target.EveryDatabase, "check: SOURCE")
	if err != nil || len(named) == 0 && !src.Target.NamesDB() {
		return nil, err
	}
	return dbs, nil
}
