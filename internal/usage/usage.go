// Package usage holds the error for bad input: a mistake the user makes in
// options, arguments or files, which the command line answers with exit
// code 2 and the message.
package usage

import (
	"errors"
	"fmt"
)

// Error is bad input. Its message names the option or file and says what to
// do.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Usage marks the error as the user's to fix; callers that cannot import this
// package test for it with an interface{ Usage() bool }.
func (e *Error) Usage() bool { return true }

// Errorf returns an *Error with a formatted message.
func Errorf(format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...)}
}

// Is reports whether err is bad input.
func Is(err error) bool {
	var u interface{ Usage() bool }
	return errors.As(err, &u) && u.Usage()
}
