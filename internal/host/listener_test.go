package host

import (
	"net"
	"os"
	"testing"
)

// TestListenerPID finds this test's own listening socket, and this
// process shares its CPUs with itself.
func TestListenerPID(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if got := ListenerPID("/proc", port); got != os.Getpid() {
		t.Errorf("ListenerPID(%d): got %d, want this process %d", port, got, os.Getpid())
	}
	if shared, ok := SharesCPUs("/proc", os.Getpid()); !shared || !ok {
		t.Errorf("SharesCPUs(self): got shared %v ok %v, want both true", shared, ok)
	}
	if _, ok := SharesCPUs("/proc", 1<<30); ok {
		t.Error("SharesCPUs of a process that does not exist: got ok, want not ok")
	}
}
