package client

// Explained returns an error that reads msg, a failure said for the user in
// one line, and wraps cause, so that its code can still be read.
func Explained(msg string, cause error) error { return &explained{msg: msg, err: cause} }

type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }
