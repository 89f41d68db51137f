package sandbox

import (
	"os"
	"syscall"
)

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

// asNotRoot makes attr start its process in a user namespace of its own in
// which it is nobody (65534), mapped to the caller's own user outside, so
// that it reaches the same files and ports.
func asNotRoot(attr *syscall.SysProcAttr) error {
	attr.Cloneflags |= syscall.CLONE_NEWUSER
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 65534, HostID: os.Geteuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 65534, HostID: os.Getegid(), Size: 1}}
	return nil
}
