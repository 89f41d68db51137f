package capacity

import "github.com/shakedown/shakedown/internal/usage"

// Validate checks what capacity's flags set in the configuration, before
// anything connects: a fault is bad usage that names the flag.
func (cfg *Config) Validate() error {
	o := &cfg.Options
	switch {
	case o.Bracket <= 0 || o.Bracket >= 0.5:
		return usage.Errorf("capacity: --bracket must be above 0 and below 50 (percent)")
	case cfg.Searches < 1:
		return usage.Errorf("capacity: --searches must be >= 1")
	case o.Repeats < 0 || cfg.Time < 1 || cfg.Warmup < 0 || o.Budget < 0 || cfg.Peak < 0:
		return usage.Errorf("capacity: --repeats, --step-warmup, --budget and --peak must be >= 0, --step-time >= 1")
	}
	return nil
}
