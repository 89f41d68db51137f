package client

import "github.com/shakedown/shakedown/internal/target"

// Explained returns an error that reads msg, a failure said for the user in
// one line, and wraps cause, so that its code can still be read. It is
// target.Explained, so that a connect failure means the same exit code
// whoever words it.
func Explained(msg string, cause error) error { return target.Explained(msg, cause) }
