package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is a server started by this process.
type process struct {
	pid    int
	exited chan struct{} // closed once the server has exited and been reaped
	err    error         // how it exited; read only after exited is closed
}

// spawn starts bin detached from our session, with its stdout and stderr
// appended to consolePath and dir as its working directory, bound to cpus
// when there are any.
func spawn(bin string, args []string, dir, consolePath string, tied bool, cpus []int) (*process, error) {
	return spawnWith(bin, args, dir, consolePath, sysProcAttr(tied), tied, cpus)
}

// spawnAs is spawn; notRoot starts a server that refuses to run as root
// (vtcombo) in a user namespace of its own, in which it is not root but
// still reaches the files the caller does.
func spawnAs(bin string, args []string, dir, consolePath string, tied bool, cpus []int, notRoot bool) (*process, error) {
	attr := sysProcAttr(tied)
	if notRoot {
		if err := asNotRoot(attr); err != nil {
			return nil, fmt.Errorf("start %s: %w", filepath.Base(bin), err)
		}
	}
	return spawnWith(bin, args, dir, consolePath, attr, tied, cpus)
}

func spawnWith(bin string, args []string, dir, consolePath string, attr *syscall.SysProcAttr, tied bool, cpus []int) (*process, error) {
	out, err := os.OpenFile(consolePath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start server: %w", err)
	}
	defer out.Close() // the child has its own copy
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = attr
	switch {
	case tied && len(cpus) > 0:
		onLockedThread(func() { err = withAffinity(cpus, cmd.Start) })
	case tied:
		onLockedThread(func() { err = cmd.Start() })
	case len(cpus) > 0:
		err = startBound(cpus, cmd.Start)
	default:
		err = cmd.Start()
	}
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", filepath.Base(bin), err)
	}
	p := &process{pid: cmd.Process.Pid, exited: make(chan struct{})}
	// Reap the server when it exits so that it does not linger as a zombie
	// in a long-lived process such as a test binary. The goroutine ends
	// when the server does (or with our process).
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

var lockedThread struct {
	once sync.Once
	reqs chan func()
}

// onLockedThread runs f on an OS thread that never exits. A tied server is
// killed by the kernel when the thread that forked it exits (Pdeathsig), and
// Go may retire threads, so tied servers are all forked from this one. The
// goroutine serving it never stops, by design: it lives as long as the
// process and so do tied servers.
func onLockedThread(f func()) {
	lockedThread.once.Do(func() {
		lockedThread.reqs = make(chan func())
		go func() {
			runtime.LockOSThread()
			for f := range lockedThread.reqs {
				f()
			}
		}()
	})
	done := make(chan struct{})
	lockedThread.reqs <- func() {
		defer close(done)
		f()
	}
	<-done
}

// alive reports whether pid is a live server using dataDir. Reading /proc
// lets it tell a zombie (dead, not yet reaped by a parent that may never
// reap it) from a live process, and a reused pid from our server.
func alive(pid int, dataDir string) bool {
	if pid <= 0 {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err == nil {
		// The state follows the command name, which is in parentheses.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
			if s := stat[i+2]; s == 'Z' || s == 'X' {
				return false
			}
		}
		if dataDir != "" {
			cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
			// A process on its way out has an empty command line while it
			// still holds its files (and its port): that is still alive.
			// A different command line means the pid was reused.
			// (TiDB's data directory is its --path, vtcombo's directory
			// holds its --pid-file.)
			if err == nil && len(cmdline) > 0 && !bytes.Contains(cmdline, []byte("--datadir="+dataDir)) &&
				!bytes.Contains(cmdline, []byte("--path="+dataDir)) && !bytes.Contains(cmdline, []byte("--pid-file="+dataDir+"/")) {
				return false
			}
		}
		return true
	}
	if _, perr := os.Stat("/proc/self/stat"); perr == nil {
		return false // /proc works and has no such process
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// waitGone polls until pid is gone, ctx ends or timeout passes, and reports
// whether it is gone.
func waitGone(ctx context.Context, pid int, dataDir string, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if !alive(pid, dataDir) {
			return true
		}
		select {
		case <-ctx.Done():
			return !alive(pid, dataDir)
		case <-deadline.C:
			return !alive(pid, dataDir)
		case <-tick.C:
		}
	}
}

// killWait is how long a SIGKILLed server may take to go.
const killWait = 15 * time.Second

// terminate stops the server: SIGTERM and up to grace for a clean shutdown
// (none when grace is 0), then SIGKILL. A cancelled ctx cuts the grace short
// but the server is still killed.
func terminate(ctx context.Context, pid int, dataDir string, grace time.Duration) error {
	if !alive(pid, dataDir) {
		return nil
	}
	if grace > 0 {
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("stop server (pid %d): %w", pid, err)
		}
		if waitGone(ctx, pid, dataDir, grace) {
			return nil
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill server (pid %d): %w", pid, err)
	}
	if waitGone(context.WithoutCancel(ctx), pid, dataDir, killWait) {
		return nil
	}
	return fmt.Errorf("kill server (pid %d): still running %v after SIGKILL", pid, killWait)
}

// freePort asks the kernel for a free loopback port. Another process may
// take it before the server binds it; Up retries when that happens.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	return port, nil
}

// checkPort fails with ErrPortInUse when port cannot be bound on loopback.
func checkPort(port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return portInUse(port)
	}
	return l.Close()
}

func portInUse(port int) error {
	return outcomef(ErrPortInUse, "port %d on 127.0.0.1 is taken: pass --port with a free port, or leave --port out to pick one", port)
}

// logTail returns the last lines of the files, formatted to end an error
// message. kept says whether the files stay: a sandbox that failed to be
// created is removed with them, and a message must not send the user to
// a file that is gone.
func logTail(kept bool, maxLines int, paths ...string) string {
	var b strings.Builder
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) == 1 && strings.TrimSpace(lines[0]) == "" {
			continue
		}
		if len(lines) > maxLines {
			lines = lines[len(lines)-maxLines:]
		}
		if kept {
			fmt.Fprintf(&b, "\nlast lines of %s:", p)
		} else {
			fmt.Fprintf(&b, "\nlast lines of its %s (removed with the sandbox):", filepath.Base(p))
		}
		for _, l := range lines {
			b.WriteString("\n  ")
			b.WriteString(l)
		}
	}
	return b.String()
}

// errorLineRE is a server's "[ERROR] /usr/sbin/mariadbd: message" line.
var errorLineRE = regexp.MustCompile(`\[ERROR\] (?:\S*(?:mysqld|mariadbd)\S*: )?(.*)$`)

// firstError is the first [ERROR] line of the files that says why, without
// its time stamp ("unknown variable 'no-such-var=1'"), or "".
func firstError(paths ...string) string {
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(data), "\n") {
			if m := errorLineRE.FindStringSubmatch(l); m != nil && m[1] != "Aborting" {
				return strings.TrimSpace(m[1])
			}
		}
	}
	return ""
}

// startError is a failed start: what failed, what the server said, and
// the last lines of its logs. A setting the server does not know is bad
// input (ErrInvalid), named as --set names it.
func startError(what string, err error, kept bool, paths ...string) error {
	said := firstError(paths...)
	msg := fmt.Sprintf("%s: %v", what, err)
	if said != "" {
		msg += ": the server said: " + said
	}
	if m := unknownVarRE.FindStringSubmatch(said); m != nil {
		name := strings.ReplaceAll(m[1], "-", "_")
		return outcomef(ErrInvalid, "%s: the server has no variable %s: check --set %s (SHOW VARIABLES lists the server's)%s",
			what, name, name, logTail(kept, 3, paths[0]))
	}
	return &wrapped{msg: msg + logTail(kept, 20, paths...), err: err}
}

var unknownVarRE = regexp.MustCompile(`unknown (?:variable|option) '-*([A-Za-z0-9_-]+)`)

// wrapped is an error with a message of its own that still unwraps to its
// cause.
type wrapped struct {
	msg string
	err error
}

func (e *wrapped) Error() string { return e.msg }
func (e *wrapped) Unwrap() error { return e.err }
