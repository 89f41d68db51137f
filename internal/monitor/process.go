package monitor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shakedown/shakedown/internal/host"
)

// ProcessSource reads the CPU time of the server process (when found on
// this host) and of shakedown itself.
type ProcessSource struct {
	// Proc is the proc file system's root, normally "/proc".
	Proc string
	// ServerPID is the server's process id; 0 leaves it out.
	ServerPID int
	// Client adds shakedown's own CPU time.
	Client bool
}

// Name is "process".
func (ProcessSource) Name() string { return "process" }

// userHZ is the unit of /proc/PID/stat's CPU times: USER_HZ is 100 on every
// Linux architecture Go supports.
const userHZ = 100

// Read reads /proc/PID/stat for the server and getrusage for this process.
func (p ProcessSource) Read(_ context.Context, _ *OwnQuerier, r *Reading) error {
	var errs []error
	if p.ServerPID > 0 {
		s, err := processCPU(p.Proc, p.ServerPID)
		if err != nil {
			errs = append(errs, err)
		} else {
			r.Values["proc.server.cpu_s"] = s
		}
	}
	if p.Client {
		s, err := SelfCPU()
		if err != nil {
			errs = append(errs, err)
		} else {
			r.Values["proc.client.cpu_s"] = s
		}
	}
	return errors.Join(errs...)
}

// processCPU returns the user + system CPU seconds of process pid.
func processCPU(proc string, pid int) (float64, error) {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("read server process cpu: %w", err)
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// fields are counted from the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("read server process cpu: unexpected %s/%d/stat", proc, pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("read server process cpu: short %s/%d/stat", proc, pid)
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("read server process cpu: bad times in %s/%d/stat", proc, pid)
	}
	return (ut + st) / userHZ, nil
}

// SelfCPU returns the user + system CPU seconds this process has used.
func SelfCPU() (float64, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("read own cpu: %w", err)
	}
	d := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return d.Seconds(), nil
}

// PIDFile returns the server's @@pid_file, or "" when it cannot be read.
// It asks with SHOW, not SELECT, so that Com_select counts only the load.
func PIDFile(ctx context.Context, q Querier) string {
	rows, err := q.QueryContext(ctx, "SHOW GLOBAL VARIABLES LIKE 'pid_file'")
	if err != nil {
		return ""
	}
	defer rows.Close()
	var name, value string
	for rows.Next() {
		if rows.Scan(&name, &value) != nil {
			return ""
		}
	}
	return value
}

// ErrNoProcess means the server's process could not be found on this host.
var ErrNoProcess = errors.New("server process not found on this host")

// FindServerPID finds the process of a server on this host: the one that
// holds the socket listening on TCP port (from proc's net/tcp and net/tcp6
// and the processes' fd links), or, failing that or when the listener is
// not a MySQL-like server (a proxy, say), the pid in pidFile
// (@@pid_file). port or pidFile may be zero/empty.
func FindServerPID(proc string, port int, pidFile string) (int, error) {
	var byPort int
	if port > 0 {
		byPort = host.ListenerPID(proc, port)
	}
	if byPort > 0 && serverLike(proc, byPort) {
		return byPort, nil
	}
	if pidFile != "" {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 0 {
				if _, err := os.Stat(filepath.Join(proc, strconv.Itoa(pid))); err == nil {
					return pid, nil
				}
			}
		}
	}
	if byPort > 0 {
		return byPort, nil
	}
	return 0, ErrNoProcess
}

// serverLike reports whether pid's command looks like a database server.
func serverLike(proc string, pid int) bool {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "comm"))
	if err != nil {
		return false
	}
	c := strings.TrimSpace(string(b))
	for _, n := range []string{"mariadbd", "mysqld", "tidb-server", "mysqld-debug"} {
		if c == n {
			return true
		}
	}
	return false
}
