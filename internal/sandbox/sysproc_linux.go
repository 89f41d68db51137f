package sandbox

import "syscall"

// sysProcAttr puts the server in a session of its own, so that it survives
// the command that started it and a Ctrl-C at the terminal does not reach
// it. tied asks the kernel to SIGKILL it when the thread that started it
// exits; spawn starts tied servers from a thread that lives as long as the
// process.
func sysProcAttr(tied bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setsid: true}
	if tied {
		a.Pdeathsig = syscall.SIGKILL
	}
	return a
}
