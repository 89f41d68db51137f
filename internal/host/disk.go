package host

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// diskFacts: the block device under the datadir and its queue settings.
func diskFacts(ctx context.Context, e *env) []Fact {
	names := []string{"disk.scheduler", "disk.nr_requests", "disk.read_ahead_kb"}
	all := func(dev Fact, reason string) []Fact {
		return append([]Fact{dev}, unknowns(names, "disk", Setting, reason)...)
	}
	if e.r.remote != "" {
		return all(unknown("disk.device", "disk", Identity, e.r.remote), e.r.remote)
	}
	if e.opts.DataDir == "" {
		const r = "datadir not known: give --sandbox, a local target (its @@datadir) or --datadir"
		return all(unknown("disk.device", "disk", Identity, r), r)
	}
	sysDev, dev, reason := e.blockDevice(e.opts.DataDir)
	if reason != "" {
		return all(unknown("disk.device", "disk", Identity, reason), reason)
	}
	// A partition's queue is its disk's.
	queue := sysDev + "/queue"
	if e.r.exists(sysDev + "/partition") {
		queue = path.Dir(sysDev) + "/queue"
	}
	out := []Fact{mk("disk.device", "disk", Identity, dev, "")}
	sched := e.fileFact("disk.scheduler", "disk", Setting, queue+"/scheduler")
	if v, ok := parseSelected(sched.Value); ok {
		sched.Value = v
	}
	return append(out, sched, e.fileFact("disk.nr_requests", "disk", Setting, queue+"/nr_requests"),
		e.fileFact("disk.read_ahead_kb", "disk", Setting, queue+"/read_ahead_kb"))
}

// blockDevice finds the /sys directory of the block device holding dir,
// by its device number, else by the source of the mount holding it (a
// btrfs volume has an anonymous device number).
func (e *env) blockDevice(dir string) (sysDir, name, reason string) {
	major, minor, err := deviceNumber(dir)
	if err != nil {
		return "", "", fmt.Sprintf("cannot stat datadir %s: %v", dir, err)
	}
	if major != 0 {
		link := fmt.Sprintf("/sys/dev/block/%d:%d", major, minor)
		target, err := os.Readlink(filepath.Join(e.r.root, link))
		if err == nil {
			d := path.Join(path.Dir(link), target)
			return d, path.Base(d), ""
		}
	}
	mi, r := e.r.read("/proc/self/mountinfo")
	if r != "" {
		return "", "", r
	}
	src := mountSource(mi, dir)
	if !strings.HasPrefix(src, "/dev/") {
		return "", "", fmt.Sprintf("datadir %s is on a file system with no block device of its own (mounted from %q)", dir, src)
	}
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		real = src
	}
	d := "/sys/class/block/" + path.Base(real)
	if !e.r.exists(d) {
		return "", "", "no " + d + " for datadir's device " + src
	}
	t, err := os.Readlink(filepath.Join(e.r.root, d))
	if err != nil {
		return "", "", fmt.Sprintf("cannot resolve %s: %v", d, err)
	}
	d = path.Join(path.Dir(d), t)
	return d, path.Base(d), ""
}

// mountSource returns the source of the mount with the longest mount point
// holding dir, from mountinfo.
func mountSource(mountinfo, dir string) string {
	best, src := -1, ""
	for _, line := range strings.Split(mountinfo, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		a, b := strings.Fields(pre), strings.Fields(post)
		if !ok || len(a) < 5 || len(b) < 2 {
			continue
		}
		p := a[4]
		if (dir == p || strings.HasPrefix(dir, strings.TrimSuffix(p, "/")+"/")) && len(p) > best {
			best, src = len(p), b[1]
		}
	}
	return src
}
