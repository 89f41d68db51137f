package follow

import (
	"context"

	"github.com/shakedown/shakedown/internal/target"
)

// Preflight checks what following src into dst needs, as Run does before
// it writes anything, without following: copy --follow asks before it
// copies, so that a source that cannot be followed is known before the
// copy, not after it.
func Preflight(ctx context.Context, src, dst *target.Target, opts Options) error {
	opts.defaults()
	f := &follower{opts: opts, srcT: src, tables: map[string]*table{}, dbmap: map[string]string{}}
	f.pairs = pairsOf(src, dst, opts.Databases)
	if err := f.connect(ctx, src, dst); err != nil {
		return err
	}
	f.src.Close()
	f.dst.DB.Close()
	return nil
}
