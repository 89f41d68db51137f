package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/host"
)

// Placement says where a sandbox's server runs: on which CPUs, under what
// CPU quota, with what NUMA memory policy. It is kept in sandbox.json, so a
// sandbox started again (Start, Restart) is placed as it was. The zero
// value places nothing: the server runs where the kernel puts it.
type Placement struct {
	CPUs     string `json:"cpus,omitempty"`      // CPU list in canonical form, e.g. "0-3,6"
	CPUQuota int    `json:"cpu_quota,omitempty"` // percent of one CPU, e.g. 200 for two CPUs' time; 0 = none
	NUMA     string `json:"numa,omitempty"`      // "interleave", or "" for the kernel's default policy
}

// IsZero reports whether p places nothing.
func (p Placement) IsZero() bool { return p == Placement{} }

// QuotaString is the quota as --cpu-quota takes it ("200%"), or "".
func (p Placement) QuotaString() string {
	if p.CPUQuota == 0 {
		return ""
	}
	return strconv.Itoa(p.CPUQuota) + "%"
}

// maxCPU bounds CPU numbers (host.ParseCPUList's bound).
const maxCPU = host.MaxCPU

// FormatCPUList writes sorted CPUs as ranges: [0 1 2 3 6] is "0-3,6".
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// ParseCPUQuota reads a CPU quota as a percentage of one CPU ("200%",
// "50%") or a number of CPUs ("2", "0.5"), and returns the percentage.
// The kernel's smallest quota is 1 ms in a 100 ms period: 1%.
func ParseCPUQuota(s string) (int, error) {
	t := strings.TrimSpace(s)
	pct, isPct := strings.CutSuffix(t, "%")
	var v float64
	var err error
	if isPct {
		v, err = strconv.ParseFloat(strings.TrimSpace(pct), 64)
	} else {
		v, err = strconv.ParseFloat(t, 64)
		v *= 100
	}
	if err != nil || v != v { // v != v: NaN
		return 0, fmt.Errorf("%q is not a quota: give a percentage of one CPU (200%% is two CPUs' time) or a number of CPUs (2, 0.5)", s)
	}
	if v < 1 {
		return 0, fmt.Errorf("%q is below the smallest quota the kernel takes, 1%% of a CPU", s)
	}
	if v > float64(maxCPU+1)*100 {
		return 0, fmt.Errorf("%q is more CPU time than any machine has", s)
	}
	return int(v + 0.5), nil
}

// machine is what placement needs to know of this machine; tests give
// their own.
type machine struct {
	cpus      []int        // CPUs this process may run on
	numaNodes int          // NUMA nodes with memory
	numactl   string       // path of numactl, or ""
	cgroup    func() error // why no CPU quota can be set, or nil
}

// thisMachine reads the machine the sandbox runs on.
func thisMachine() machine {
	return machine{
		cpus:      allowedCPUs(),
		numaNodes: numaNodes(),
		numactl:   lookPath("numactl"),
		cgroup:    func() error { _, err := cpuCgroupRoot(true); return err },
	}
}

// AllowedCPUs is the CPUs this process may run on, in order (none where
// that cannot be read).
func AllowedCPUs() []int { return allowedCPUs() }

// numaNodes counts the NUMA nodes with memory, 0 where sysfs says nothing.
func numaNodes() int {
	b, err := os.ReadFile("/sys/devices/system/node/has_memory")
	if err != nil {
		b, err = os.ReadFile("/sys/devices/system/node/online")
	}
	if err != nil {
		return 0
	}
	nodes, err := host.ParseCPUList(string(b)) // node lists are written as CPU lists are
	if err != nil {
		return 0
	}
	return len(nodes)
}

// ParsePlacement reads --cpus, --cpu-quota and --numa as given (empty:
// not given) and checks that this machine can honour them: the CPUs exist
// and this process may use them, a cgroup can be written for the quota,
// and for interleaving there are NUMA nodes and numactl. The error names
// the flag and wraps ErrInvalid.
func ParsePlacement(cpus, quota, numa string) (Placement, error) {
	if cpus == "" && quota == "" && numa == "" {
		return Placement{}, nil
	}
	return parsePlacement(cpus, quota, numa, thisMachine())
}

func parsePlacement(cpus, quota, numa string, m machine) (Placement, error) {
	var p Placement
	if cpus != "" {
		list, err := host.ParseCPUList(cpus)
		if err != nil {
			return p, outcomef(ErrInvalid, "--cpus %s: %v", cpus, err)
		}
		have := map[int]bool{}
		for _, c := range m.cpus {
			have[c] = true
		}
		var missing []int
		for _, c := range list {
			if !have[c] {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			return p, outcomef(ErrInvalid, "--cpus %s: this machine has no CPU %s that shakedown may use (it may use %s)",
				cpus, FormatCPUList(missing), FormatCPUList(m.cpus))
		}
		p.CPUs = FormatCPUList(list)
	}
	if quota != "" {
		pct, err := ParseCPUQuota(quota)
		if err != nil {
			return p, outcomef(ErrInvalid, "--cpu-quota: %v", err)
		}
		if err := m.cgroup(); err != nil {
			return p, outcomef(ErrInvalid, "--cpu-quota %s: %v", quota, err)
		}
		p.CPUQuota = pct
	}
	switch strings.ToLower(strings.TrimSpace(numa)) {
	case "":
	case "interleave":
		switch {
		case m.numaNodes < 2:
			return p, outcomef(ErrInvalid, "--numa interleave: this machine has %d NUMA node(s) with memory; interleaving needs at least 2, so it would change nothing", m.numaNodes)
		case m.numactl == "":
			return p, outcomef(ErrInvalid, "--numa interleave: numactl is not installed (it sets the server's memory policy); install the numactl package")
		}
		p.NUMA = "interleave"
	default:
		return p, outcomef(ErrInvalid, "--numa %s: want interleave (spread the server's memory over all nodes)", numa)
	}
	return p, nil
}

// command is how the server is started under p: under numactl for a
// memory policy, else directly. CPU affinity is set by spawn and the
// quota by the cgroup, neither on the command line.
func (p Placement) command(bin string, args []string) (string, []string, error) {
	if p.NUMA == "" {
		return bin, args, nil
	}
	numactl := lookPath("numactl")
	if numactl == "" {
		return "", nil, fmt.Errorf("start server with --numa %s: numactl is no longer installed", p.NUMA)
	}
	return numactl, append([]string{"--" + p.NUMA + "=all", bin}, args...), nil
}

// cpuList is p.CPUs as numbers (validated when p was made).
func (p Placement) cpuList() []int {
	if p.CPUs == "" {
		return nil
	}
	l, _ := host.ParseCPUList(p.CPUs)
	return l
}

// PlacementDifferences lists how placement p differs from sandbox i's,
// each as the option and what i has instead. A field p leaves empty is
// not compared.
func (i *Instance) PlacementDifferences(p Placement) []string {
	var out []string
	have := i.Placement
	if p.CPUs != "" && p.CPUs != have.CPUs {
		out = append(out, fmt.Sprintf("--cpus %s (it has %s)", p.CPUs, orNone(have.CPUs, "all CPUs")))
	}
	if p.CPUQuota != 0 && p.CPUQuota != have.CPUQuota {
		out = append(out, fmt.Sprintf("--cpu-quota %s (it has %s)", p.QuotaString(), orNone(have.QuotaString(), "no quota")))
	}
	if p.NUMA != "" && p.NUMA != have.NUMA {
		out = append(out, fmt.Sprintf("--numa %s (it has %s)", p.NUMA, orNone(have.NUMA, "the default policy")))
	}
	return out
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// cgroupName is the sandbox's cgroup under HIERARCHY/shakedown: its name
// and a hash of its directory, since sandboxes of one name may live in
// several homes at once (test binaries make their own).
func cgroupName(dir string) string {
	return filepath.Base(dir) + "-" + shortHash(dir)
}
