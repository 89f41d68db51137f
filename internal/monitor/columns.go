package monitor

import (
	"fmt"
	"math"
	"strings"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/stats"
)

// Column is one per-second figure: how it is computed from two readings,
// how it is labelled, and when it needs attention.
type Column struct {
	// Key names the figure in samples and result documents.
	Key string
	// Head is the short heading watch prints.
	Head string
	// Group is the heading over a run of related columns.
	Group string
	// Unit is "/s" (events per second), "B/s", "%", "B" or "" (a count).
	Unit string
	// Help says what the figure is and where it comes from.
	Help string
	// Prom is the name of the Prometheus gauge that carries it, in base
	// units: PromScale (0: 1) turns the figure into them.
	Prom      string
	PromScale float64

	calc func(d *delta) (float64, bool)
	attn func(v float64, d *delta, lim Limits) string
}

// Limits are the thresholds some attention marks depend on.
type Limits struct {
	// Cores is the number of CPU cores of the server's host; 0 when not
	// known (threads running is then not judged).
	Cores int
}

// Columns returns every column in display order.
func Columns() []Column { return columns }

// LookupColumn returns the column with the given key.
func LookupColumn(key string) (Column, bool) {
	i := columnIndex(key)
	if i == len(columns) {
		return Column{}, false
	}
	return columns[i], true
}

var columnIdx map[string]int

func init() {
	columnIdx = make(map[string]int, len(columns))
	for i, c := range columns {
		columnIdx[c.Key] = i
	}
}

func columnIndex(key string) int {
	if i, ok := columnIdx[key]; ok {
		return i
	}
	return len(columns)
}

// delta is two consecutive readings.
type delta struct {
	prev, cur *Reading
	sec       float64
	// restarted is set when the server's Uptime went back: every status
	// counter then shows 0 for this interval.
	restarted bool
}

func newDelta(prev, cur *Reading) *delta {
	d := &delta{prev: prev, cur: cur, sec: cur.At.Sub(prev.At).Seconds()}
	if a, ok := prev.Values["Uptime"]; ok {
		if b, ok := cur.Values["Uptime"]; ok && b < a {
			d.restarted = true
		}
	}
	return d
}

// counter returns the increase of the first of names present in both
// readings; a counter that went back (a restart) counts as no increase.
func (d *delta) counter(names ...string) (float64, bool) {
	for _, n := range names {
		a, ok1 := d.prev.Values[n]
		b, ok2 := d.cur.Values[n]
		if !ok1 || !ok2 {
			continue
		}
		if b < a || (d.restarted && !strings.Contains(n, ".")) {
			return 0, true
		}
		return b - a, true
	}
	return 0, false
}

// rate is counter per second of real elapsed time.
func (d *delta) rate(names ...string) (float64, bool) {
	v, ok := d.counter(names...)
	if !ok || d.sec <= 0 {
		return 0, false
	}
	return v / d.sec, true
}

// sumRates adds the rates of every name present.
func (d *delta) sumRates(names ...string) (float64, bool) {
	var sum float64
	any := false
	for _, n := range names {
		if v, ok := d.rate(n); ok {
			sum += v
			any = true
		}
	}
	return sum, any
}

// gauge is the current value of the first of names present.
func (d *delta) gauge(names ...string) (float64, bool) {
	for _, n := range names {
		if v, ok := d.cur.Values[n]; ok {
			return v, true
		}
	}
	return 0, false
}

func rateOf(names ...string) func(*delta) (float64, bool) {
	return func(d *delta) (float64, bool) { return d.rate(names...) }
}

func gaugeOf(names ...string) func(*delta) (float64, bool) {
	return func(d *delta) (float64, bool) { return d.gauge(names...) }
}

// cpuShare is the share of the host's CPU time spent in the given states.
func cpuShare(states ...string) func(*delta) (float64, bool) {
	return func(d *delta) (float64, bool) {
		var total float64
		for _, s := range cpuStates {
			v, ok := d.counter("host.cpu." + s)
			if !ok {
				return 0, false
			}
			total += v
		}
		if total <= 0 {
			return 0, false
		}
		var part float64
		for _, s := range states {
			v, _ := d.counter("host.cpu." + s)
			part += v
		}
		return 100 * part / total, true
	}
}

// processCPU is a process's CPU time as a percentage of one core.
func cpuPercent(name string) func(*delta) (float64, bool) {
	return func(d *delta) (float64, bool) {
		v, ok := d.rate(name)
		return 100 * v, ok
	}
}

func above(limit float64, why string) func(float64, *delta, Limits) string {
	return func(v float64, _ *delta, _ Limits) string {
		if v > limit {
			return why
		}
		return ""
	}
}

// hitPercent is the share of the counter total that did not miss over
// the interval, 100 * (1 - miss/total); nothing when total did not move.
func hitPercent(miss, total string) func(*delta) (float64, bool) {
	return func(d *delta) (float64, bool) {
		t, ok := d.counter(total)
		if !ok || t <= 0 {
			return 0, false
		}
		m, _ := d.counter(miss)
		return math.Max(0, 100*(1-m/t)), true
	}
}

// hitBelow is why, when a hit percentage is below floor while total moves
// at busy a second or more: on a quiet server a few misses say nothing.
func hitBelow(total string, busy, floor float64, why string) func(float64, *delta, Limits) string {
	return func(v float64, d *delta, _ Limits) string {
		if r, _ := d.rate(total); r >= busy && v < floor {
			return why
		}
		return ""
	}
}

// columns is the table of figures, in display order: the orzdba /
// mysqladmin ext -i1 -r columns first, then InnoDB, host and process.
var columns = []Column{
	{Key: "qps", Head: "qps", Group: "load", Unit: "/s", Prom: "shakedown_server_questions_per_second",
		Help: "statements per second (rate of Questions, less the sampler's own)",
		calc: func(d *delta) (float64, bool) {
			q, ok := d.counter("Questions", "Queries")
			if !ok || d.sec <= 0 {
				return 0, false
			}
			own, _ := d.counter("own.statements")
			return math.Max(0, q-own) / d.sec, true
		}},
	{Key: "tps", Head: "tps", Group: "load", Unit: "/s", Prom: "shakedown_server_transactions_per_second",
		Help: "transactions per second (rate of Com_commit + Com_rollback, or of Com_insert + Com_update + Com_delete when nothing commits)",
		calc: func(d *delta) (float64, bool) {
			v, ok := d.sumRates("Com_commit", "Com_rollback")
			if ok && v > 0 {
				return v, true
			}
			if w, ok2 := d.sumRates("Com_insert", "Com_update", "Com_delete"); ok2 {
				return w, true
			}
			return v, ok
		}},
	{Key: "admin_commands", Head: "adm", Group: "load", Unit: "/s", Prom: "shakedown_server_admin_commands_per_second",
		Help: "rate of Com_admin_commands (COM_PING and other commands that are not statements)", calc: rateOf("Com_admin_commands")},
	{Key: "sel", Head: "sel", Group: "load", Unit: "/s", Prom: "shakedown_server_selects_per_second", Help: "rate of Com_select", calc: rateOf("Com_select")},
	{Key: "ins", Head: "ins", Group: "load", Unit: "/s", Prom: "shakedown_server_inserts_per_second", Help: "rate of Com_insert", calc: rateOf("Com_insert")},
	{Key: "upd", Head: "upd", Group: "load", Unit: "/s", Prom: "shakedown_server_updates_per_second", Help: "rate of Com_update", calc: rateOf("Com_update")},
	{Key: "del", Head: "del", Group: "load", Unit: "/s", Prom: "shakedown_server_deletes_per_second", Help: "rate of Com_delete", calc: rateOf("Com_delete")},

	{Key: "threads_running", Head: "run", Group: "threads", Prom: "shakedown_server_threads_running", Help: "Threads_running",
		calc: gaugeOf("Threads_running"),
		attn: func(v float64, _ *delta, lim Limits) string {
			if lim.Cores > 0 && v > float64(lim.Cores) {
				return fmt.Sprintf("threads running above the %d cores", lim.Cores)
			}
			return ""
		}},
	{Key: "threads_connected", Head: "con", Group: "threads", Prom: "shakedown_server_threads_connected", Help: "Threads_connected", calc: gaugeOf("Threads_connected")},
	{Key: "threads_created", Head: "cre", Group: "threads", Unit: "/s", Prom: "shakedown_server_threads_created_per_second", Help: "rate of Threads_created", calc: rateOf("Threads_created")},
	{Key: "thread_cache_hit", Head: "tchit", Group: "threads", Unit: "%", Prom: "shakedown_server_thread_cache_hit_percent",
		Help: "connections served by a cached thread: 1 - Threads_created / Connections over the interval",
		calc: hitPercent("Threads_created", "Connections"),
		attn: hitBelow("Connections", 10, 90, "thread cache hit below 90%: raise thread_cache_size")},

	{Key: "rows_read", Head: "read", Group: "rows", Unit: "/s", Prom: "shakedown_server_rows_read_per_second", Help: "rate of Innodb_rows_read (Rows_read on MariaDB)", calc: rateOf("Innodb_rows_read", "Rows_read")},
	{Key: "rows_inserted", Head: "ins", Group: "rows", Unit: "/s", Prom: "shakedown_server_rows_inserted_per_second", Help: "rate of Innodb_rows_inserted (Handler_write on MariaDB)", calc: rateOf("Innodb_rows_inserted", "Handler_write")},
	{Key: "rows_updated", Head: "upd", Group: "rows", Unit: "/s", Prom: "shakedown_server_rows_updated_per_second", Help: "rate of Innodb_rows_updated (Handler_update on MariaDB)", calc: rateOf("Innodb_rows_updated", "Handler_update")},
	{Key: "rows_deleted", Head: "del", Group: "rows", Unit: "/s", Prom: "shakedown_server_rows_deleted_per_second", Help: "rate of Innodb_rows_deleted (Handler_delete on MariaDB)", calc: rateOf("Innodb_rows_deleted", "Handler_delete")},

	{Key: "bp_read_requests", Head: "reqs", Group: "buffer pool", Unit: "/s", Prom: "shakedown_server_buffer_pool_read_requests_per_second", Help: "rate of Innodb_buffer_pool_read_requests (logical reads)", calc: rateOf("Innodb_buffer_pool_read_requests")},
	{Key: "bp_reads", Head: "disk", Group: "buffer pool", Unit: "/s", Prom: "shakedown_server_buffer_pool_reads_per_second", Help: "rate of Innodb_buffer_pool_reads (reads that missed the buffer pool)", calc: rateOf("Innodb_buffer_pool_reads")},
	{Key: "bp_hit", Head: "hit%", Group: "buffer pool", Unit: "%", Prom: "shakedown_server_buffer_pool_hit_percent",
		Help: "buffer pool hit ratio: 1 - Innodb_buffer_pool_reads / Innodb_buffer_pool_read_requests over the interval",
		calc: hitPercent("Innodb_buffer_pool_reads", "Innodb_buffer_pool_read_requests"),
		attn: hitBelow("Innodb_buffer_pool_read_requests", 100, 99, "buffer pool hit ratio below 99%")},
	{Key: "bp_pages_data", Head: "data", Group: "buffer pool", Prom: "shakedown_server_buffer_pool_pages_data", Help: "Innodb_buffer_pool_pages_data", calc: gaugeOf("Innodb_buffer_pool_pages_data")},
	{Key: "bp_pages_free", Head: "free", Group: "buffer pool", Prom: "shakedown_server_buffer_pool_pages_free", Help: "Innodb_buffer_pool_pages_free", calc: gaugeOf("Innodb_buffer_pool_pages_free")},
	{Key: "bp_pages_dirty", Head: "dirty", Group: "buffer pool", Prom: "shakedown_server_buffer_pool_pages_dirty", Help: "Innodb_buffer_pool_pages_dirty", calc: gaugeOf("Innodb_buffer_pool_pages_dirty")},
	{Key: "bp_pages_flushed", Head: "flush", Group: "buffer pool", Unit: "/s", Prom: "shakedown_server_buffer_pool_pages_flushed_per_second", Help: "rate of Innodb_buffer_pool_pages_flushed", calc: rateOf("Innodb_buffer_pool_pages_flushed")},

	{Key: "data_reads", Head: "reads", Group: "innodb io", Unit: "/s", Prom: "shakedown_server_data_reads_per_second", Help: "rate of Innodb_data_reads", calc: rateOf("Innodb_data_reads")},
	{Key: "data_writes", Head: "writes", Group: "innodb io", Unit: "/s", Prom: "shakedown_server_data_writes_per_second", Help: "rate of Innodb_data_writes", calc: rateOf("Innodb_data_writes")},
	{Key: "data_read_bytes", Head: "rdKB", Group: "innodb io", Unit: "B/s", Prom: "shakedown_server_data_read_bytes_per_second", Help: "rate of Innodb_data_read", calc: rateOf("Innodb_data_read")},
	{Key: "data_written_bytes", Head: "wrKB", Group: "innodb io", Unit: "B/s", Prom: "shakedown_server_data_written_bytes_per_second", Help: "rate of Innodb_data_written", calc: rateOf("Innodb_data_written")},
	{Key: "log_fsyncs", Head: "fsync", Group: "innodb io", Unit: "/s", Prom: "shakedown_server_log_fsyncs_per_second", Help: "rate of Innodb_os_log_fsyncs (Innodb_data_fsyncs where the server has no log-only counter)", calc: rateOf("Innodb_os_log_fsyncs", "Innodb_data_fsyncs")},
	{Key: "log_written", Head: "logKB", Group: "innodb io", Unit: "B/s", Prom: "shakedown_server_log_written_bytes_per_second", Help: "rate of Innodb_os_log_written (redo log bytes)", calc: rateOf("Innodb_os_log_written")},

	{Key: "bytes_received", Head: "recvKB", Group: "net", Unit: "B/s", Prom: "shakedown_server_received_bytes_per_second", Help: "rate of Bytes_received", calc: rateOf("Bytes_received")},
	{Key: "bytes_sent", Head: "sentKB", Group: "net", Unit: "B/s", Prom: "shakedown_server_sent_bytes_per_second", Help: "rate of Bytes_sent (includes the sampler's own status reads, about 20 KB each)", calc: rateOf("Bytes_sent")},

	{Key: "tmp_disk_tables", Head: "tmpdsk", Group: "other", Unit: "/s", Prom: "shakedown_server_tmp_disk_tables_per_second", Help: "rate of Created_tmp_disk_tables", calc: rateOf("Created_tmp_disk_tables"),
		attn: above(0.5, "temporary tables going to disk: raise tmp_table_size and max_heap_table_size")},
	{Key: "select_scan", Head: "scan", Group: "other", Unit: "/s", Prom: "shakedown_server_select_scans_per_second", Help: "rate of Select_scan (full scans of the first table)", calc: rateOf("Select_scan")},
	{Key: "sort_merge_passes", Head: "smerge", Group: "other", Unit: "/s", Prom: "shakedown_server_sort_merge_passes_per_second", Help: "rate of Sort_merge_passes", calc: rateOf("Sort_merge_passes"),
		attn: above(0.5, "sorts spilling to disk: raise sort_buffer_size")},
	{Key: "table_open_cache_misses", Head: "tcmiss", Group: "other", Unit: "/s", Prom: "shakedown_server_table_open_cache_misses_per_second", Help: "rate of Table_open_cache_misses", calc: rateOf("Table_open_cache_misses"),
		attn: above(10, "table cache misses: raise table_open_cache")},
	{Key: "slow_queries", Head: "slow", Group: "other", Unit: "/s", Prom: "shakedown_server_slow_queries_per_second", Help: "rate of Slow_queries", calc: rateOf("Slow_queries"),
		attn: above(0, "slow queries")},
	{Key: "aborted_connects", Head: "abrt", Group: "other", Unit: "/s", Prom: "shakedown_server_aborted_connects_per_second", Help: "rate of Aborted_connects", calc: rateOf("Aborted_connects"),
		attn: above(0, "connection attempts failing")},

	{Key: "history_list_length", Head: "hist", Group: "innodb", Prom: "shakedown_server_history_list_length",
		Help: "InnoDB history list length: undo not yet purged (Innodb_history_list_length, or SHOW ENGINE INNODB STATUS)",
		calc: gaugeOf("Innodb_history_list_length", "innodb.history_list_length"),
		attn: above(100000, "purge is lagging: history list over 100000")},
	{Key: "checkpoint_age", Head: "ckptMB", Group: "innodb", Unit: "B", Prom: "shakedown_server_checkpoint_age_bytes",
		Help: "redo written since the last checkpoint (Innodb_checkpoint_age, or LSN - last checkpoint from SHOW ENGINE INNODB STATUS)",
		calc: gaugeOf("Innodb_checkpoint_age", "innodb.checkpoint_age"),
		attn: func(v float64, d *delta, _ Limits) string {
			if m, ok := d.gauge("Innodb_checkpoint_max_age", "innodb.checkpoint_max_age"); ok && m > 0 && v > 0.75*m {
				return "checkpoint age above 75% of the redo log: flushing will stall writes"
			}
			return ""
		}},

	{Key: "cpu_user", Head: "usr", Group: "host cpu%", Unit: "%", Prom: "shakedown_host_cpu_user_percent", Help: "host CPU in user mode (user + nice), % of all cores", calc: cpuShare("user", "nice")},
	{Key: "cpu_sys", Head: "sys", Group: "host cpu%", Unit: "%", Prom: "shakedown_host_cpu_system_percent", Help: "host CPU in the kernel (system + irq + softirq), % of all cores", calc: cpuShare("system", "irq", "softirq")},
	{Key: "cpu_iowait", Head: "iow", Group: "host cpu%", Unit: "%", Prom: "shakedown_host_cpu_iowait_percent", Help: "host CPU idle waiting for I/O, % of all cores", calc: cpuShare("iowait"),
		attn: above(10, "CPU waiting on I/O above 10%")},
	{Key: "cpu_steal", Head: "stl", Group: "host cpu%", Unit: "%", Prom: "shakedown_host_cpu_steal_percent", Help: "host CPU taken by the hypervisor, % of all cores", calc: cpuShare("steal"),
		attn: above(5, "CPU stolen by the hypervisor above 5%")},
	{Key: "cpu_idle", Head: "idle", Group: "host cpu%", Unit: "%", Prom: "shakedown_host_cpu_idle_percent", Help: "host CPU idle, % of all cores", calc: cpuShare("idle"),
		attn: func(v float64, d *delta, _ Limits) string {
			if v < 5 {
				return hostSaturated(d)
			}
			return ""
		}},
	{Key: "disk_reads", Head: "rd", Group: "host disk", Unit: "/s", Prom: "shakedown_host_disk_reads_per_second", Help: "reads completed by the host's disks", calc: rateOf("host.disk.reads")},
	{Key: "disk_writes", Head: "wr", Group: "host disk", Unit: "/s", Prom: "shakedown_host_disk_writes_per_second", Help: "writes completed by the host's disks", calc: rateOf("host.disk.writes")},
	{Key: "disk_read_bytes", Head: "rdKB", Group: "host disk", Unit: "B/s", Prom: "shakedown_host_disk_read_bytes_per_second", Help: "bytes read from the host's disks", calc: rateOf("host.disk.read_bytes")},
	{Key: "disk_write_bytes", Head: "wrKB", Group: "host disk", Unit: "B/s", Prom: "shakedown_host_disk_written_bytes_per_second", Help: "bytes written to the host's disks", calc: rateOf("host.disk.write_bytes")},
	{Key: "net_rx_bytes", Head: "rxKB", Group: "host net", Unit: "B/s", Prom: "shakedown_host_network_received_bytes_per_second", Help: "bytes received by the host's network interfaces other than loopback", calc: rateOf("host.net.rx_bytes")},
	{Key: "net_tx_bytes", Head: "txKB", Group: "host net", Unit: "B/s", Prom: "shakedown_host_network_sent_bytes_per_second", Help: "bytes sent by the host's network interfaces other than loopback", calc: rateOf("host.net.tx_bytes")},
	{Key: "ctx_switches", Head: "cs", Group: "host kernel", Unit: "/s", Prom: "shakedown_host_context_switches_per_second",
		Help: "context switches on the host (/proc/stat ctxt): many more threads than cores switch more", calc: rateOf(kCtxt)},
	{Key: "swap_ins", Head: "swpin", Group: "host kernel", Unit: "/s", Prom: "shakedown_host_swap_ins_per_second",
		Help: "pages swapped in on the host (/proc/vmstat pswpin)", calc: rateOf(kSwapIns),
		attn: above(0, "the host is swapping pages in")},
	{Key: "syncookies_sent", Head: "syncK", Group: "host kernel", Unit: "/s", Prom: "shakedown_host_syncookies_sent_per_second",
		Help: "SYN cookies sent: a listen socket's SYN backlog was full (TcpExt SyncookiesSent)", calc: rateOf(kSyncookiesSent),
		attn: above(0, "SYN backlog full: SYN cookies sent (tcp_max_syn_backlog, back_log)")},
	{Key: "listen_overflows", Head: "lsnOv", Group: "host kernel", Unit: "/s", Prom: "shakedown_host_listen_overflows_per_second",
		Help: "connections the accept queue of a listen socket had no room for (TcpExt ListenOverflows)", calc: rateOf(kListenOverflows),
		attn: above(0, "listen queue overflowing (somaxconn, back_log)")},
	{Key: "listen_drops", Head: "lsnDr", Group: "host kernel", Unit: "/s", Prom: "shakedown_host_listen_drops_per_second",
		Help: "connection attempts a listen socket dropped, overflows included (TcpExt ListenDrops)", calc: rateOf(kListenDrops)},
	{Key: "server_cpu", Head: "srv%", Group: "process cpu%", Unit: "%", Prom: "shakedown_server_process_cpu_percent", Help: "the server process's CPU (user + system), % of one core", calc: cpuPercent("proc.server.cpu_s")},
	{Key: "throttled_pct", Head: "thr%", Group: "cgroup", Unit: "%", Prom: "shakedown_server_cgroup_throttled_periods_percent",
		Help: "periods in which the server's cgroup spent its CPU quota and was throttled: nr_throttled / nr_periods over the interval",
		calc: func(d *delta) (float64, bool) {
			p, ok := d.counter("cgroup.cpu.nr_periods")
			if !ok || p <= 0 {
				return 0, false // no quota: the cgroup counts no periods
			}
			t, _ := d.counter("cgroup.cpu.nr_throttled")
			return 100 * t / p, true
		},
		attn: above(10, "the server's cgroup CPU quota throttled it in over 10% of periods")},
	{Key: "throttled_ms", Head: "thrms", Group: "cgroup", Unit: "/s", Prom: "shakedown_server_cgroup_throttled_seconds_per_second", PromScale: 0.001,
		Help: "time the server's cgroup was throttled per second (throttled_usec; ms per second in samples)",
		calc: func(d *delta) (float64, bool) {
			v, ok := d.rate("cgroup.cpu.throttled_usec")
			return v / 1000, ok
		}},
	{Key: "client_cpu", Head: "cli%", Group: "process cpu%", Unit: "%", Prom: "shakedown_client_process_cpu_percent", Help: "shakedown's own CPU (user + system), % of one core", calc: cpuPercent("proc.client.cpu_s")},
}

// cpuStates are the fields of /proc/stat's cpu line that make up its total
// (guest time is already inside user).
var cpuStates = []string{"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"}

// compute turns two readings into a sample.
func compute(prev, cur *Reading, lim Limits) result.Sample {
	d := newDelta(prev, cur)
	s := result.Sample{ElapsedS: stats.Round(d.sec, 3), Values: map[string]float64{}, Wall: cur.At}
	for _, c := range columns {
		v, ok := c.calc(d)
		if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		s.Values[c.Key] = stats.Round(v, 3)
		if c.attn != nil {
			if why := c.attn(v, d, lim); why != "" {
				if s.Attention == nil {
					s.Attention = map[string]string{}
				}
				s.Attention[c.Key] = why
			}
		}
	}
	if len(cur.Failed) > 0 {
		s.Failed = map[string]string{}
		for k, v := range cur.Failed {
			s.Failed[k] = v
		}
	}
	return s
}
