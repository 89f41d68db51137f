// Package host reads the facts of a database host that change how a
// server performs (kernel, CPU, NUMA, the server process's CPUs, memory
// nodes, cgroup limits and throttling, transparent huge pages, virtual
// memory, the datadir's block device, network and file-system sysctls) and
// compares the facts of several hosts, explaining each difference.
//
// Collection only reads: /proc, /sys, and for a target URL a few SELECT
// @@variable queries. It follows the collector shape: one file per group
// of sources, and a source that cannot be read gives rows that say why
// (permission denied, absent on this kernel, not local, no server process
// named) instead of ending the collection.
//
// # JSON document (version 1)
//
// WriteJSON writes, and ReadJSON reads, one object:
//
//	version       integer, 1; a reader refuses a version it does not know
//	host          the name of the machine the facts were read on
//	collected_at  RFC 3339 time of the collection
//	subject       what the facts are about:
//	  pid         the server process (0 when none was named)
//	  sandbox     the sandbox name, when one was named
//	  target      the target URL, without any password, when one was named
//	  datadir     the server's data directory, when known
//	  remote      true when the server runs on another machine: every row
//	              read from /proc or /sys is then unknown
//	facts         array, in a fixed order, of:
//	  name        e.g. "vm.swappiness", "cgroup.cpu.max", "mysql.back_log"
//	  group       system, cpu, numa, process, cgroup, memory, disk, net,
//	              fs or sql
//	  kind        "setting" (compared by host diff), "counter" (a figure
//	              that grows while the server runs, shown as evidence, never
//	              counted as a difference) or "identity" (a name or path
//	              that differs between any two hosts; never compared)
//	  value       the value as read, trimmed; absent when unknown
//	  reason      why the value is unknown; absent when it is known
//
// New rows may be added within version 1; a row's name, kind and the form
// of its value do not change without a new version.
package host
