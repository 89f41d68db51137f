package sandbox

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shakedown/shakedown/internal/host"
)

// cfsPeriod is the scheduler period a quota is a share of, in microseconds:
// the kernel's default, 100 ms.
const cfsPeriod = 100000

// cgroupRoot is the directory under which sandboxes' cgroups are made: a
// "shakedown" directory in a hierarchy with the cpu controller.
type cgroupRoot struct {
	dir string
	v2  bool
}

// cpuCgroupRoot finds a cgroup hierarchy with the cpu controller, v2
// (cpu.max) before v1 (cpu.cfs_quota_us), and with create makes its
// shakedown directory and checks that a quota can be written there. The
// error says why no quota can be set.
func cpuCgroupRoot(create bool) (cgroupRoot, error) {
	v2, v1, err := cpuHierarchies()
	if err != nil {
		return cgroupRoot{}, err
	}
	var why []string
	if v2 != "" {
		root, err := prepare(cgroupRoot{dir: filepath.Join(v2, "shakedown"), v2: true}, create)
		if err == nil {
			return root, nil
		}
		why = append(why, err.Error())
	}
	if v1 != "" {
		root, err := prepare(cgroupRoot{dir: filepath.Join(v1, "shakedown")}, create)
		if err == nil {
			return root, nil
		}
		why = append(why, err.Error())
	}
	if len(why) == 0 {
		return cgroupRoot{}, errors.New("no cgroup hierarchy with the cpu controller is mounted (none in /proc/self/mountinfo), so no quota can be set")
	}
	return cgroupRoot{}, errors.New(strings.Join(why, "; "))
}

// prepare makes root.dir (v2: with the cpu controller enabled for its
// children) and checks that this process may write a quota there.
func prepare(root cgroupRoot, create bool) (cgroupRoot, error) {
	if !create {
		return root, nil
	}
	parent := filepath.Dir(root.dir)
	if root.v2 {
		// The cpu controller must be enabled in every cgroup above the
		// one it limits.
		if err := enableCPU(parent); err != nil {
			return root, err
		}
	}
	if err := os.MkdirAll(root.dir, 0o755); err != nil {
		return root, fmt.Errorf("cannot create cgroup %s: %v: run as root, or where a cgroup is delegated to this user", root.dir, errors.Unwrap(err))
	}
	if root.v2 {
		return root, enableCPU(root.dir)
	}
	f, err := os.OpenFile(filepath.Join(root.dir, "cpu.cfs_quota_us"), os.O_WRONLY, 0)
	if err != nil {
		return root, fmt.Errorf("cannot write a quota in cgroup %s: %v: run as root", root.dir, errors.Unwrap(err))
	}
	return root, f.Close()
}

func enableCPU(dir string) error {
	file := filepath.Join(dir, "cgroup.subtree_control")
	if b, err := os.ReadFile(file); err == nil && hasWord(string(b), "cpu") {
		return nil
	}
	if err := os.WriteFile(file, []byte("+cpu"), 0); err != nil {
		return fmt.Errorf("cannot enable the cpu controller in cgroup %s: %v", dir, errors.Unwrap(err))
	}
	return nil
}

func hasWord(s, w string) bool {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\n' }) {
		if f == w {
			return true
		}
	}
	return false
}

// cpuHierarchies reads /proc/self/mountinfo for the mount points of a
// cgroup2 hierarchy whose controllers include cpu and of a cgroup v1
// hierarchy mounted with the cpu controller ("" for none).
func cpuHierarchies() (v2, v1 string, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", fmt.Errorf("cannot read the mounts to find a cgroup hierarchy: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		// "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS"
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 {
			continue
		}
		mnt := pf[4]
		switch qf[0] {
		case "cgroup2":
			if b, err := os.ReadFile(filepath.Join(mnt, "cgroup.controllers")); err == nil && hasWord(string(b), "cpu") && v2 == "" {
				v2 = mnt
			}
		case "cgroup":
			if hasWord(qf[2], "cpu") && v1 == "" {
				v1 = mnt
			}
		}
	}
	return v2, v1, sc.Err()
}

// setupCgroup puts pid (all its threads) in the cgroup name under the
// shakedown directory, limited to pct percent of one CPU, and returns
// the cgroup's directory.
func setupCgroup(name string, pct, pid int) (string, error) {
	root, err := cpuCgroupRoot(true)
	if err != nil {
		return "", fmt.Errorf("set cpu quota: %w", err)
	}
	dir := filepath.Join(root.dir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("set cpu quota: %w", err)
	}
	quota := strconv.Itoa(pct * cfsPeriod / 100)
	if root.v2 {
		err = writeFile(dir, "cpu.max", quota+" "+strconv.Itoa(cfsPeriod))
	} else {
		// The period first: a quota is checked against the period in force.
		err = writeFile(dir, "cpu.cfs_period_us", strconv.Itoa(cfsPeriod))
		if err == nil {
			err = writeFile(dir, "cpu.cfs_quota_us", quota)
		}
	}
	if err == nil {
		// cgroup.procs moves every thread of the process.
		err = writeFile(dir, "cgroup.procs", strconv.Itoa(pid))
	}
	if err != nil {
		return dir, fmt.Errorf("set cpu quota: %w", err)
	}
	return dir, nil
}

func writeFile(dir, file, value string) error {
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); err != nil {
		return fmt.Errorf("write %s to %s: %w", value, filepath.Join(dir, file), errors.Unwrap(err))
	}
	return nil
}

// removeCgroup removes a sandbox's cgroup once its server has left it. A
// process that has just exited may hold it for a moment (EBUSY): retry
// within a deadline.
func removeCgroup(ctx context.Context, dir string) error {
	if dir == "" {
		return nil
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := syscall.Rmdir(dir)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("remove cgroup %s: %w", dir, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("remove cgroup %s: %w", dir, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// CPUStat is a cgroup's CPU throttling counters: how many scheduler
// periods it had runnable tasks in, in how many of them the quota ran out,
// and for how long its tasks waited in all.
type CPUStat struct {
	Periods       int64
	Throttled     int64
	ThrottledTime time.Duration
}

// ReadCPUStat reads the cpu.stat file of the cgroup directory dir, v1
// (throttled_time in ns) or v2 (throttled_usec).
func ReadCPUStat(dir string) (CPUStat, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return CPUStat{}, fmt.Errorf("read cpu stat: %w", err)
	}
	c := host.ParseCPUStat(string(b))
	return CPUStat{Periods: c.Periods, Throttled: c.Throttled, ThrottledTime: c.ThrottledTime}, nil
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}
