package bisect

import "github.com/shakedown/shakedown/internal/bisectresult"

// allNames is the variable's name and its aliases.
func allNames(v bisectresult.Variable) []string { return append([]string{v.Name}, v.Aliases...) }
