//go:build unix && !linux

package sandbox

import "syscall"

// sysProcAttr puts the server in a session of its own, so that it survives
// the command that started it. Outside Linux there is no parent-death
// signal, so tied servers are only stopped by sandboxtest.Main.
func sysProcAttr(tied bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
