// Package home says where shakedown keeps what outlives a run (the results
// store, the sandboxes): $SHAKEDOWN_HOME, else ~/.shakedown. Commands that
// keep something there name their file or folder below it.
package home

import "path/filepath"

// Dir is $SHAKEDOWN_HOME, else $HOME/.shakedown, else "" (no home known).
func Dir(getenv func(string) string) string {
	if h := getenv("SHAKEDOWN_HOME"); h != "" {
		return h
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".shakedown")
	}
	return ""
}
