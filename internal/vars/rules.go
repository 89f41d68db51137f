package vars

import (
	"fmt"
	"strconv"
	"strings"
)

// Rule says why a variable matters.
type Rule struct {
	Name    string
	Group   string // durability, memory, io, concurrency, semantics
	Explain string
	// note, when set, flags a candidate's value against the control's.
	note func(control, candidate string) string
}

// Rules returns the performance-relevant variables in the order they are
// listed: what changes commit cost first.
func Rules() []Rule { return rules }

var rules = []Rule{
	// Durability: what a commit waits for.
	{Name: "innodb_flush_log_at_trx_commit", Group: "durability", Explain: "1 writes and syncs the redo log at every commit (durable); 2 writes at commit and syncs once a second; 0 does both once a second: commits get far cheaper and up to a second of them can be lost in a crash"},
	{Name: "sync_binlog", Group: "durability", Explain: "1 syncs the binary log at every commit group; 0 leaves it to the OS; N syncs every N groups: with 1 each commit waits for one more fsync"},
	{Name: "binlog_group_commit_sync_delay", Group: "durability", Explain: "microseconds to wait before syncing the binary log so more commits share one fsync: fewer fsyncs, more latency per commit"},
	{Name: "binlog_commit_wait_usec", Group: "durability", Explain: "MariaDB: microseconds a commit waits for others to join its group commit: fewer fsyncs, more latency per commit"},
	{Name: "binlog_commit_wait_count", Group: "durability", Explain: "MariaDB: how many commits a group waits for (up to binlog_commit_wait_usec) before syncing the binary log"},
	{Name: "innodb_doublewrite", Group: "durability", Explain: "writes each flushed page twice to survive torn pages: off makes page writes cheaper and a crash riskier"},
	{Name: "innodb_flush_method", Group: "durability", Explain: "how InnoDB writes and syncs its files: O_DIRECT bypasses the OS cache, fsync caches pages twice"},
	{Name: "log_bin", Group: "durability", Explain: "the binary log is on: every commit also writes it (and syncs it per sync_binlog), a two-phase commit with InnoDB"},
	{Name: "binlog_format", Group: "durability", Explain: "ROW logs changed rows, STATEMENT the statements, MIXED either: row events are far larger for bulk changes"},
	{Name: "innodb_flush_log_at_timeout", Group: "durability", Explain: "seconds between redo log syncs when innodb_flush_log_at_trx_commit is 0 or 2: how much can be lost in a crash"},

	// Memory.
	{Name: "innodb_buffer_pool_size", Group: "memory", Explain: "InnoDB's page cache: a working set larger than it is read from disk", note: smallerThan(0.9, "buffer pool below 0.9x the control's: reads may go to disk that the control serves from memory")},
	{Name: "innodb_buffer_pool_instances", Group: "memory", Explain: "buffer pool partitions: more reduce mutex contention at high concurrency"},
	{Name: "tmp_table_size", Group: "memory", Explain: "in-memory temporary tables grow to the smaller of this and max_heap_table_size, then go to disk"},
	{Name: "max_heap_table_size", Group: "memory", Explain: "in-memory temporary tables grow to the smaller of this and tmp_table_size, then go to disk"},
	{Name: "sort_buffer_size", Group: "memory", Explain: "per-sort memory: sorts larger than it merge through disk (Sort_merge_passes)"},
	{Name: "join_buffer_size", Group: "memory", Explain: "per-join memory for joins without usable indexes"},
	{Name: "table_open_cache", Group: "memory", Explain: "open table handles kept for reuse: too few and tables are reopened under load (Table_open_cache_misses)"},
	{Name: "table_open_cache_instances", Group: "memory", Explain: "partitions of the table cache: more reduce contention at high concurrency"},
	{Name: "thread_cache_size", Group: "memory", Explain: "threads kept for new connections: too few and each connect creates a thread"},
	{Name: "innodb_log_buffer_size", Group: "memory", Explain: "redo buffered before it is written: large transactions wait when it is too small"},

	// I/O.
	{Name: "innodb_io_capacity", Group: "io", Explain: "background flushing rate (pages/s) InnoDB assumes the disk can take"},
	{Name: "innodb_io_capacity_max", Group: "io", Explain: "flushing rate InnoDB may reach when it falls behind"},
	{Name: redoCapacity, Group: "io", Explain: "total redo log size: a small one forces checkpoints (and flushing stalls) sooner under writes"},
	{Name: "innodb_redo_log_capacity", Group: "io", Explain: "total redo log size (MySQL 8.0.30+): a small one forces checkpoints sooner under writes"},
	{Name: "innodb_log_file_size", Group: "io", Explain: "size of each redo log file: with the number of files it bounds how much can be written before a checkpoint"},
	{Name: "innodb_log_files_in_group", Group: "io", Explain: "number of redo log files"},
	{Name: "innodb_read_io_threads", Group: "io", Explain: "threads serving InnoDB's read-ahead and background reads"},
	{Name: "innodb_write_io_threads", Group: "io", Explain: "threads writing InnoDB pages"},
	{Name: "innodb_page_cleaners", Group: "io", Explain: "threads flushing dirty pages"},
	{Name: "innodb_lru_scan_depth", Group: "io", Explain: "pages the cleaners scan per buffer pool instance each second to keep free pages"},
	{Name: "innodb_flush_neighbors", Group: "io", Explain: "also flushes neighbouring dirty pages: helps spinning disks, wastes writes on SSDs"},
	{Name: "innodb_purge_threads", Group: "io", Explain: "threads purging old row versions: too few and the history list grows under writes"},
	{Name: "innodb_use_native_aio", Group: "io", Explain: "Linux native asynchronous I/O for InnoDB"},

	// Concurrency.
	{Name: "innodb_thread_concurrency", Group: "concurrency", Explain: "threads allowed inside InnoDB at once (0 = no limit)"},
	{Name: "thread_handling", Group: "concurrency", Explain: "one thread per connection or a thread pool: the pool holds throughput up with many connections"},
	{Name: "thread_pool_size", Group: "concurrency", Explain: "thread pool groups (with thread_handling=pool-of-threads)"},
	{Name: "max_connections", Group: "concurrency", Explain: "connections the server accepts: runs with more threads fail to connect"},
	{Name: "innodb_adaptive_hash_index", Group: "concurrency", Explain: "hash index over hot B-tree pages: speeds point lookups, contends under writes"},
	{Name: "innodb_deadlock_detect", Group: "concurrency", Explain: "deadlock detection on every lock wait: off relies on innodb_lock_wait_timeout, cheaper at very high concurrency"},
	{Name: "innodb_lock_wait_timeout", Group: "concurrency", Explain: "seconds a transaction waits for a row lock before error 1205"},
	{Name: "transaction_isolation", Group: "concurrency", Explain: "default isolation level: REPEATABLE-READ keeps read views and gap locks that READ-COMMITTED does not"},
	{Name: "tx_isolation", Group: "concurrency", Explain: "default isolation level (older name of transaction_isolation)"},
	{Name: "performance_schema", Group: "concurrency", Explain: "instrumentation: on costs a few percent of throughput"},
	{Name: "query_cache_type", Group: "concurrency", Explain: "query cache: a global mutex on every query when on; results served without execution"},
	{Name: "query_cache_size", Group: "concurrency", Explain: "query cache memory (0 turns it off)"},
	{Name: "general_log", Group: "concurrency", Explain: "logs every statement: a large cost under load"},
	{Name: "slow_query_log", Group: "concurrency", Explain: "logs slow statements (long_query_time): costly when the threshold is low"},
	{Name: "long_query_time", Group: "concurrency", Explain: "seconds after which a statement counts as slow"},

	// Semantics: also what data verification depends on.
	{Name: "character_set_server", Group: "semantics", Explain: "default character set of new databases and tables"},
	{Name: "collation_server", Group: "semantics", Explain: "default collation: changes comparisons, sort order and uniqueness"},
	{Name: "time_zone", Group: "semantics", Explain: "session default time zone: TIMESTAMP values read back differently"},
	{Name: "sql_mode", Group: "semantics", Explain: "strictness and syntax: the same statement may fail, warn or truncate"},
	{Name: "lower_case_table_names", Group: "semantics", Explain: "how table names are stored and compared"},
	{Name: "explicit_defaults_for_timestamp", Group: "semantics", Explain: "whether TIMESTAMP columns get implicit defaults and auto-update"},

	// TiDB's own.
	{Name: "tidb_txn_mode", Group: "semantics", Explain: "TiDB: pessimistic (the default) locks rows as statements run, as InnoDB does; optimistic checks for conflicts at COMMIT, which then fails (9007, write conflict) instead of waiting"},
	{Name: "tidb_disable_txn_auto_retry", Group: "semantics", Explain: "TiDB: off retries an optimistic transaction that hit a write conflict at COMMIT, replaying its statements against data they did not read: updates can be lost"},
	{Name: "tidb_enable_noop_functions", Group: "semantics", Explain: "TiDB: accepts syntax it does not implement (START TRANSACTION READ ONLY, LOCK IN SHARE MODE, ...) and does nothing: statements that would fail succeed without their effect"},
	{Name: "tidb_enable_async_commit", Group: "durability", Explain: "TiDB: a commit returns once its primary lock is written and the secondaries are committed after: lower commit latency"},
	{Name: "tidb_enable_1pc", Group: "durability", Explain: "TiDB: a transaction within one region commits in one phase instead of two: lower commit latency"},
	{Name: "tidb_mem_quota_query", Group: "memory", Explain: "TiDB: memory one query may use before tidb_mem_oom_action acts (cancel the query, or spill to disk)"},
	{Name: "tidb_distsql_scan_concurrency", Group: "concurrency", Explain: "TiDB: coprocessor requests one query scans with at once: faster large scans, more load on the storage nodes"},
	{Name: "tidb_executor_concurrency", Group: "concurrency", Explain: "TiDB: threads of a query's operators (hash join, aggregation, projection)"},
}

var ruleIdx = func() map[string]int {
	m := make(map[string]int, len(rules))
	for i, r := range rules {
		m[r.Name] = i
	}
	return m
}()

func ruleFor(name string) (Rule, bool) {
	i, ok := ruleIdx[name]
	if !ok {
		return Rule{}, false
	}
	return rules[i], true
}

func ruleIndex(name string) int {
	if i, ok := ruleIdx[name]; ok {
		return i
	}
	return len(rules)
}

// smallerThan notes a candidate whose number is below factor x the
// control's.
func smallerThan(factor float64, why string) func(control, candidate string) string {
	return func(control, candidate string) string {
		a, err1 := strconv.ParseFloat(strings.TrimSpace(control), 64)
		b, err2 := strconv.ParseFloat(strings.TrimSpace(candidate), 64)
		if err1 != nil || err2 != nil || a <= 0 {
			return ""
		}
		if b < factor*a {
			return fmt.Sprintf("%s (%.2fx)", why, b/a)
		}
		return ""
	}
}
