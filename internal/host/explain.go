package host

import "strings"

// Explanation says what a fact does, which workloads it affects, and what
// the references recommend. Disputed is set where they disagree: host diff
// then reports the difference without judging it.
type Explanation struct {
	What      string `json:"what"`
	Affects   string `json:"affects"`
	Recommend string `json:"recommend,omitempty"`
	Disputed  bool   `json:"disputed,omitempty"`
}

// explanations, by fact name; a name ending in "." covers every fact that
// starts with it. The recommendations are those of pt-summary, MySQLTuner,
// TiUP's cluster check, Red Hat's tuned profiles, the MySQL manual and the
// Kubernetes CFS-quota issues; THP, where they disagree, is marked
// Disputed.
var explanations = map[string]Explanation{
	"kernel.release":     {What: "the running kernel", Affects: "everything: schedulers, cgroup throttling (the CFS quota fix shipped in 5.4), I/O paths", Recommend: "compare like with like: a different kernel is a reason two hosts differ at equal settings"},
	"cpu.model":          {What: "the CPU", Affects: "every CPU-bound workload: point selects, sorts, hashing", Recommend: "none of the references diff it; it explains \"same config, different speed\""},
	"cpu.online":         {What: "the CPUs the kernel runs", Affects: "throughput at high thread counts"},
	"virtualisation":     {What: "whether the host is a virtual machine or container", Affects: "latency under load (steal time, virtual interrupts), fsync cost", Recommend: "none of the references diff it; it explains \"same config, different speed\""},
	"cpu.vulnerability.": {What: "the kernel's mitigation of a CPU vulnerability", Affects: "system-call and context-switch heavy work: many short queries, many connections", Recommend: "none of the references diff it; a mitigation on one host only costs it syscalls"},
	"cpu.governor":       {What: "cpufreq governor: how the CPU clock follows load", Affects: "latency at low and bursty load, when the clock has to ramp up", Recommend: "tuned (throughput-performance, latency-performance) and TiUP's deployment guide: performance"},

	"numa.nodes":            {What: "memory nodes", Affects: "large buffer pools: memory on a remote node is slower, and one node can fill and swap while another has room", Recommend: "MySQLTuner: innodb_numa_interleave ON with more than one node; Jeremy Cole: numactl --interleave=all for mysqld"},
	"numa.distances":        {What: "relative cost of reaching each node's memory", Affects: "memory-bound work on servers that span nodes"},
	"kernel.numa_balancing": {What: "automatic NUMA balancing: the kernel migrates pages towards the CPUs that use them", Affects: "latency: page faults and migrations under load", Recommend: "tuned network-latency, mssql and oracle profiles: 0"},

	"process.cpus_allowed":     {What: "the CPUs the server may run on (affinity, cpuset)", Affects: "all CPU-bound work; CPUs bound to one node against a quota were a 10x difference", Recommend: "Kubernetes #67577/#70585: prefer a cpuset to a CFS quota for latency-critical work"},
	"process.mems_allowed":     {What: "the memory nodes the server may allocate on", Affects: "buffer pool placement; a server allowed one node swaps when it fills", Recommend: "MariaDB MDEV-10829 interleaves the buffer pool over the allowed nodes"},
	"process.mempolicy":        {What: "the server's memory policy (default, interleave, bind)", Affects: "buffer pool placement over nodes", Recommend: "Jeremy Cole and MySQLTuner: interleave on multi-node hosts"},
	"process.limit.open_files": {What: "the server's open-file limit (soft/hard)", Affects: "table_open_cache and max_connections are capped by it", Recommend: "TiUP: nofile 1000000; MySQLTuner: raise it to fit open tables and connections"},
	"process.limit.processes":  {What: "the processes and threads the server's user may run (soft/hard)", Affects: "one thread per connection: many connections fail to start threads"},
	"process.oom_score_adj":    {What: "how the OOM killer ranks the server", Affects: "which process dies when memory runs out", Recommend: "pt-summary reports it (and flags -17)"},

	"cgroup.cpu.max":               {What: "the CPU quota of the server's cgroup per period (\"max\": none)", Affects: "all CPU-bound work: the cgroup is throttled when it spends its quota early in a period, seen as p99 spikes at low average CPU", Recommend: "Kubernetes #67577, #70585: prefer a cpuset over a quota for latency-critical work; watch cpu.stat nr_throttled"},
	"cgroup.cpuset.cpus.effective": {What: "the CPUs the server's cgroup may use", Affects: "all CPU-bound work; fewer CPUs cap throughput at high thread counts", Recommend: "Kubernetes #70585: Guaranteed pods with a cpuset avoid quota throttling"},
	"cgroup.memory.max":            {What: "the memory limit of the server's cgroup", Affects: "a buffer pool near the limit: reclaim, swap or the OOM killer"},

	"mm.thp.enabled":            {What: "transparent huge pages: whether anonymous memory gets 2 MB pages", Affects: "memory-heavy servers: fewer TLB misses, but compaction and khugepaged stalls and memory bloat", Recommend: "TiUP and tuned's postgresql, oracle and network-latency profiles say never; tuned's mssql profile says always; MongoDB 8.0 says enable", Disputed: true},
	"mm.thp.defrag":             {What: "whether an allocation stalls to compact memory into huge pages", Affects: "latency spikes when memory is fragmented", Recommend: "as for mm.thp.enabled", Disputed: true},
	"vm.swappiness":             {What: "how readily the kernel swaps out process memory rather than drop page cache", Affects: "a large buffer pool: pages swapped out stall queries", Recommend: "MySQLTuner <= 10; tuned throughput and latency 10, postgresql 3, mssql 1; TiUP 0"},
	"vm.dirty_ratio":            {What: "percent of memory dirty before writers must flush themselves", Affects: "write bursts and fsync latency", Recommend: "tuned throughput-performance 40, latency-performance 10"},
	"vm.dirty_background_ratio": {What: "percent of memory dirty before background write-back starts", Affects: "write-back bursts", Recommend: "tuned throughput-performance 10, latency-performance 3"},
	"vm.dirty_bytes":            {What: "dirty bytes before writers flush (overrides dirty_ratio when set)", Affects: "write bursts and fsync latency", Recommend: "tuned postgresql: 512 MB"},
	"vm.dirty_background_bytes": {What: "dirty bytes before background write-back (overrides dirty_background_ratio when set)", Affects: "write-back bursts", Recommend: "tuned postgresql: 64 MB"},

	"disk.scheduler":     {What: "the I/O scheduler of the datadir's disk", Affects: "I/O latency against request merging under write-heavy and read-heavy work", Recommend: "MySQL manual: noop or deadline; TiUP: noop (none) on NVMe"},
	"disk.nr_requests":   {What: "requests the datadir disk's queue holds", Affects: "I/O-bound work at high concurrency", Recommend: "pt-summary reports it"},
	"disk.read_ahead_kb": {What: "read-ahead of the datadir's disk", Affects: "scans read faster with more; random point reads waste I/O", Recommend: "tuned throughput-performance: >= 4096"},

	"net.core.somaxconn":           {What: "the ceiling on any listen queue (back_log is cut to it)", Affects: "connection storms: short connections, many threads connecting at once", Recommend: "tuned >= 2048; TiUP 32768; the kernel default is 4096 since 5.4"},
	"net.ipv4.tcp_max_syn_backlog": {What: "half-open connections the kernel queues", Affects: "connection storms: beyond it SYN cookies or drops (sysbench #225 at 1024 threads)"},
	"net.ipv4.tcp_rmem":            {What: "TCP receive buffer min, default, max", Affects: "large result sets over links with a long round trip", Recommend: "tuned network-throughput: 4096 131072 16777216"},
	"net.ipv4.tcp_wmem":            {What: "TCP send buffer min, default, max", Affects: "large result sets over links with a long round trip", Recommend: "tuned network-throughput: 4096 16384 16777216"},
	"net.core.rmem_max":            {What: "largest receive buffer a socket may ask for", Affects: "large transfers", Recommend: "tuned mssql: 4 MB"},
	"net.core.wmem_max":            {What: "largest send buffer a socket may ask for", Affects: "large transfers", Recommend: "tuned mssql: 1 MB"},
	"net.ipv4.ip_local_port_range": {What: "ports a client may use for outgoing connections", Affects: "short connections from one client: ports run out in TIME_WAIT", Recommend: "tuned oracle: 9000 65499"},
	"net.ipv4.tcp_tw_reuse":        {What: "whether new outgoing connections may reuse TIME_WAIT ports", Affects: "short connections from one client"},
	"net.ipv4.tcp_syncookies":      {What: "SYN cookies when the SYN queue overflows", Affects: "connection storms: connections survive the overflow, without TCP options", Recommend: "TiUP: 0"},

	"fs.aio-max-nr": {What: "asynchronous I/O requests allowed system-wide", Affects: "InnoDB native AIO: it falls back or fails to start when too low", Recommend: "MySQLTuner >= 1048576; tuned oracle 1048576"},
	"fs.file-max":   {What: "open files allowed system-wide", Affects: "many tables and connections", Recommend: "TiUP 1000000; tuned oracle 6815744"},
	"fs.nr_open":    {What: "the most open files one process may be allowed", Affects: "the ceiling of the server's open-file limit", Recommend: "MySQLTuner checks it"},

	"mysql.back_log":               {What: "the listen backlog the server asks for (cut to net.core.somaxconn)", Affects: "connection storms", Recommend: "8.0 defaults it to max_connections"},
	"mysql.max_connections":        {What: "connections the server accepts", Affects: "runs with many threads"},
	"mysql.innodb_numa_interleave": {What: "interleaves the buffer pool over NUMA nodes", Affects: "large buffer pools on multi-node hosts", Recommend: "MySQLTuner: ON with more than one node"},
	"mysql.innodb_flush_method":    {What: "how InnoDB writes and syncs its files", Affects: "write-heavy work: O_DIRECT skips the page cache", Recommend: "MySQL manual: O_DIRECT with noop/deadline and native AIO"},
	"mysql.thread_handling":        {What: "one thread per connection or a thread pool", Affects: "many connections: a pool holds throughput up"},
	"mysql.version":                {What: "the server version", Affects: "everything"},
	"mysql.version_comment":        {What: "the server build", Affects: "everything"},
}

// Explain returns what is known of a fact.
func Explain(name string) (Explanation, bool) {
	if x, ok := explanations[name]; ok {
		return x, true
	}
	for k, x := range explanations {
		if strings.HasSuffix(k, ".") && strings.HasPrefix(name, k) {
			return x, true
		}
	}
	return Explanation{}, false
}
