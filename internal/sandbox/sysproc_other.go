//go:build unix && !linux

package sandbox

import (
	"errors"
	"syscall"
)

// sysProcAttr puts the server in a session of its own, so that it survives
// the command that started it. Outside Linux there is no parent-death
// signal, so tied servers are only stopped by sandboxtest.Main.
func sysProcAttr(tied bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

// asNotRoot fails outside Linux: there is no user namespace to start a
// server in as another user than root.
func asNotRoot(*syscall.SysProcAttr) error {
	return errors.New("it refuses to run as root: run shakedown as another user")
}
