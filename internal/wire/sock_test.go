package wire

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/wire/wiretest"
)

// epollTargets lists, for every epoll instance this process holds, the
// descriptors it follows (from /proc/self/fdinfo).
func epollTargets(t *testing.T) map[string][]string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	sets := map[string][]string{}
	for _, e := range ents {
		link, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil || link != "anon_inode:[eventpoll]" {
			continue
		}
		f, err := os.Open(filepath.Join("/proc/self/fdinfo", e.Name()))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if fs := strings.Fields(sc.Text()); len(fs) >= 2 && fs[0] == "tfd:" {
				sets[e.Name()] = append(sets[e.Name()], fs[1])
			}
		}
		f.Close()
	}
	return sets
}

// In blocking and looped modes the socket is read with read(2) on a
// descriptor of its own; Go's poller must not follow that descriptor, or
// every reply would also wake a runtime thread that sleeps in the poller.
func TestOwnDescriptorIsNotInGosPoller(t *testing.T) {
	addr := wiretest.StartSilent(t)
	// A pipe that Go's poller follows, so that its epoll set is known to
	// be among those read.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	raw, err := r.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var pfd string
	raw.Control(func(fd uintptr) { pfd = fmt.Sprint(fd) })
	for _, mode := range []struct {
		name string
		opts Options
	}{{"blocking", Options{Blocking: true}}, {"looped", Options{Looped: true}}} {
		t.Run(mode.name, func(t *testing.T) {
			s, err := dialSock(context.Background(), &mysql.Config{Net: "tcp", Addr: addr}, mode.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.nc != nil {
				t.Fatal("the connection fell back to Go's network I/O")
			}
			own := fmt.Sprint(s.fd)
			seen := false
			for epfd, fds := range epollTargets(t) {
				for _, fd := range fds {
					seen = seen || fd == pfd
					if fd == own {
						t.Errorf("epoll instance %s follows the connection's descriptor %s", epfd, own)
					}
				}
			}
			if !seen {
				t.Fatalf("found no epoll instance that follows Go's pipe (%s): cannot tell", pfd)
			}
		})
	}
}
