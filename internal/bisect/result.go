package bisect

import "github.com/shakedown/shakedown/internal/result"

// allNames is the variable's name and its aliases.
func allNames(v result.BisectVariable) []string { return append([]string{v.Name}, v.Aliases...) }
