package monitor

import "github.com/shakedown/shakedown/internal/usage"

// Validate checks watch's stall flags before anything connects: a fault
// is bad usage that names the flag.
func (o *WatchStallOptions) Validate() error {
	switch {
	case o.Spec == "" && o.Stacks:
		return usage.Errorf("watch: --stall-stacks needs --stall: stacks are read when a trigger fires")
	case o.Spec == "":
		return nil
	case o.Cooldown <= 0 || o.Max < 1:
		return usage.Errorf("watch: --stall-cooldown must be > 0 and --stall-max >= 1")
	}
	if _, err := ParseWatchStall(o.Spec); err != nil {
		return usage.Errorf("watch: %v", err)
	}
	return nil
}
