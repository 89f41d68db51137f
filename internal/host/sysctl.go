package host

import (
	"context"
	"strings"
)

// memoryFacts: transparent huge pages, swappiness, dirty page limits.
func memoryFacts(ctx context.Context, e *env) []Fact {
	out := []Fact{e.selected("mm.thp.enabled", "/sys/kernel/mm/transparent_hugepage/enabled"),
		e.selected("mm.thp.defrag", "/sys/kernel/mm/transparent_hugepage/defrag")}
	return append(out, e.sysctls("memory", "vm.swappiness", "vm.dirty_ratio", "vm.dirty_background_ratio",
		"vm.dirty_bytes", "vm.dirty_background_bytes")...)
}

// netFacts: the listen queue, socket buffers, ports and SYN handling. They
// are read in shakedown's network namespace, which a containerised server
// may not share.
func netFacts(ctx context.Context, e *env) []Fact {
	return e.sysctls("net", "net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog",
		"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.core.rmem_max", "net.core.wmem_max",
		"net.ipv4.ip_local_port_range", "net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_syncookies")
}

// fsFacts: asynchronous I/O and open-file ceilings.
func fsFacts(ctx context.Context, e *env) []Fact {
	return e.sysctls("fs", "fs.aio-max-nr", "fs.file-max", "fs.nr_open")
}

// sysctls reads each name from /proc/sys; runs of blanks become one space.
func (e *env) sysctls(group string, names ...string) []Fact {
	out := make([]Fact, len(names))
	for i, n := range names {
		f := e.fileFact(n, group, Setting, "/proc/sys/"+strings.ReplaceAll(n, ".", "/"))
		f.Value = strings.Join(strings.Fields(f.Value), " ")
		out[i] = f
	}
	return out
}

// selected reads a /sys file that lists the choices and brackets the one in
// force ("always [madvise] never").
func (e *env) selected(name, path string) Fact {
	s, r := e.r.read(path)
	if r != "" {
		return unknown(name, "memory", Setting, r)
	}
	v, ok := parseSelected(s)
	if !ok {
		return unknown(name, "memory", Setting, "no [choice] in "+path+": "+s)
	}
	return mk(name, "memory", Setting, v, "")
}

// parseSelected returns the bracketed word of "a [b] c".
func parseSelected(s string) (string, bool) {
	i := strings.IndexByte(s, '[')
	if i < 0 {
		return "", false
	}
	j := strings.IndexByte(s[i:], ']')
	if j < 0 {
		return "", false
	}
	v := s[i+1 : i+j]
	v = v[strings.LastIndexByte(v, '[')+1:] // the innermost: "[[x]" selects x
	return v, v != ""
}
