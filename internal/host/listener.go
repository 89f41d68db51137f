package host

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ListenerPID is the process on this host that holds the socket listening
// on TCP port (from proc's net/tcp and net/tcp6 and the processes' fd
// links), or 0 when none can be found (no such listener, or its process
// is not ours to read). proc is the proc file system's root, "/proc".
func ListenerPID(proc string, port int) int {
	if inodes := listeningInodes(proc, port); len(inodes) > 0 {
		return pidOfSocket(proc, inodes)
	}
	return 0
}

// SharesCPUs reports whether process pid may run on a CPU that this
// process may run on too (their affinity masks meet); ok is false when
// either mask cannot be read.
func SharesCPUs(proc string, pid int) (shared, ok bool) {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "status"))
	if err != nil {
		return false, false
	}
	list, found := parseKeyValues(string(b), ":")["Cpus_allowed_list"]
	if !found {
		return false, false
	}
	cpus, err := ParseCPUList(list)
	if err != nil {
		return false, false
	}
	var mine unix.CPUSet
	if unix.SchedGetaffinity(0, &mine) != nil {
		return false, false
	}
	for _, c := range cpus {
		if mine.IsSet(c) {
			return true, true
		}
	}
	return false, true
}

// listeningInodes returns the socket inodes listening on port.
func listeningInodes(proc string, port int) map[string]bool {
	inodes := map[string]bool{}
	for _, name := range []string{"tcp", "tcp6"} {
		f, err := os.Open(filepath.Join(proc, "net", name))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			if len(fs) < 10 || fs[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(fs[1], ":")
			if !ok {
				continue
			}
			if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && int(p) == port {
				inodes[fs[9]] = true
			}
		}
		f.Close()
	}
	return inodes
}

// pidOfSocket returns the first process holding one of the socket inodes.
func pidOfSocket(proc string, inodes map[string]bool) int {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return 0
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fdDir := filepath.Join(proc, e.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err != nil {
				continue
			}
			if in, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(in, "]")] {
				return pid
			}
		}
	}
	return 0
}
