# shellcheck shell=bash
# Functions shared by the benchmark scripts (sourced, not run): those that
# start local sandboxes (scripts/bench*.sh), those that run in a bundle
# (scripts/bench-pinned*.sh, bench-core.sh, bench-copy-pinned.sh,
# device-capacity.sh) and scripts/bundle.sh.
#
# A "bundle" is the directory scripts/bundle.sh packs: bin/ (shakedown,
# mariadbd, sysbench, GNU time, taskset), lib/ (every library they link,
# with the dynamic loader, so that they run through lib/ld-linux-x86-64.so.2
# and need nothing of the host's), share/ (sysbench's Lua scripts, the
# server's messages and character sets), my.cnf and data/.

# knobs NAME=DEFAULT...: each NAME keeps the value the environment gives
# it, or takes DEFAULT when that is unset or empty.
knobs() {
	local kv k
	for kv; do
		k=${kv%%=*}
		[ -n "${!k:-}" ] || printf -v "$k" '%s' "${kv#*=}"
	done
}

# whole_numbers SCRIPT NAME...: exits 2, naming SCRIPT and the knob, unless
# every NAME holds a whole number above 0.
whole_numbers() {
	local script=$1 v
	shift
	for v; do
		if ! [[ ${!v} =~ ^[0-9]+$ ]] || [ "${!v}" -eq 0 ]; then
			echo "$script: $v=${!v}: want a whole number above 0" >&2
			exit 2
		fi
	done
}

# round_order ROUND ITEM...: the items in ROUND's order, one a line: as
# given in odd rounds, reversed in even ones, so that no tool always runs
# first on a shared machine.
round_order() {
	local r=$1 i
	shift
	if [ $((r % 2)) -eq 0 ]; then
		for ((i = $#; i >= 1; i--)); do echo "${!i}"; done
	else
		printf '%s\n' "$@"
	fi
}

# bench_home NAME: BIN (bin/shakedown unless set), and SHAKEDOWN_HOME
# exported: the environment's, or a new /tmp/shakedown-bench-NAME.*, named
# in own_home for the cleanup to remove.
bench_home() {
	BIN=${BIN:-bin/shakedown}
	own_home=
	if [ -z "${SHAKEDOWN_HOME:-}" ]; then
		SHAKEDOWN_HOME=$(mktemp -d "/tmp/shakedown-bench-$1.XXXXXX")
		own_home=$SHAKEDOWN_HOME
	fi
	export SHAKEDOWN_HOME
}

# bench_local NAME: what a benchmark on local sandboxes needs first, run
# from the repository's root: bench_home NAME, the programs scripts/deps.sh
# installs, and bin/shakedown built.
bench_local() {
	bench_home "$1"
	bash scripts/deps.sh
	make -s build
}

# port_of URL: the port of a mysql:// URL.
port_of() {
	local p=${1##*:}
	echo "${p%%/*}"
}

# bench_pair NAME SRC DST [ARGS...] [-- DST_ARGS...]: a work directory (work,
# /tmp/shakedown-bench-NAME-out.*) and two sandboxes, SRC and DST, each
# started with ARGS and DST also with DST_ARGS: their URLs in src_url and
# dst_url, their ports in sp and dp. At exit both sandboxes, own_home and
# work go, unless KEEP=1: then the sandboxes and own_home stay, and work
# too where keep_work=1 (the script sets it), which is then named.
bench_pair() {
	local name=$1 a=() b=()
	pair=("$2" "$3")
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		a+=("$1")
		shift
	done
	[ $# -eq 0 ] || b=("${@:2}")
	work=$(mktemp -d "/tmp/shakedown-bench-$name-out.XXXXXX")
	trap bench_pair_cleanup EXIT
	src_url=$("$BIN" sandbox up "${pair[0]}" --url-only "${a[@]}")
	dst_url=$("$BIN" sandbox up "${pair[1]}" --url-only "${a[@]}" "${b[@]}")
	sp=$(port_of "$src_url")
	dp=$(port_of "$dst_url")
}

bench_pair_cleanup() {
	if [ "${KEEP:-0}" != 1 ]; then
		"$BIN" sandbox down "${pair[0]}" >/dev/null 2>&1 || true
		"$BIN" sandbox down "${pair[1]}" >/dev/null 2>&1 || true
		[ -z "$own_home" ] || rm -rf "$own_home"
	elif [ "${keep_work:-0}" = 1 ]; then
		echo "kept: $work, sandboxes ${pair[*]} in $SHAKEDOWN_HOME" >&2
		return
	fi
	rm -rf "$work"
}

# bench_machine: a comment line on the server version, the cores and the
# load, for the head of a local benchmark's output.
bench_machine() {
	echo "# $("$BIN" sandbox list 2>/dev/null | grep -m1 -o 'MariaDB [0-9.]*' || true), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

# same_found LABEL SAME PEER MINE THEIRS: what shakedown found (the lines
# of MINE) against what PEER found (THEIRS): "LABEL: shakedown N, PEER M",
# then "SAME: yes" with MINE's lines, or "SAME: NO" with the difference, and
# a non-zero return.
same_found() {
	echo "$1: shakedown $(wc -l <"$4"), $3 $(wc -l <"$5")"
	if cmp -s "$4" "$5"; then
		echo "$2: yes"
		sed 's/^/  /' "$4"
		return 0
	fi
	echo "$2: NO"
	diff "$4" "$5" | sed 's/^/  /' || true
	return 1
}

# median: the median of the numbers on stdin, 0 when there are none.
median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) {print 0} else if (NR%2) {print a[(NR+1)/2]} else {print (a[NR/2]+a[NR/2+1])/2}}'; }

# ratio A B: A/B to two places, n/a when B is 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b==0) print "n/a"; else printf "%.2f", a/b }'; }

# queries_of LOG, qps_of LOG: the totals of the "queries: N (X per sec.)"
# line that sysbench and shakedown run both print; empty when there is none.
queries_of() { awk '/^ *queries: /{print $2}' "$1" | tail -1; }
qps_of() { awk '/^ *queries: /{gsub(/\(/,"",$3); print $3}' "$1" | tail -1; }

# proc_ticks PID: the CPU clock ticks (user+system) PID has used, 0 when it
# is gone. Read before and after a run, the difference is the server's CPU.
proc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# resched_ipis: rescheduling interrupts between CPUs, summed over the CPUs,
# since boot (machine-wide: everything running counts). A task woken on a
# CPU other than the waker's costs one when that CPU must be made to run
# it; under a hypervisor each is an exit to it.
resched_ipis() { awk '$1 == "RES:" {for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i} END {print n + 0}' /proc/interrupts 2>/dev/null || echo 0; }

# bundle_exec DIR PROG ARGS...: runs DIR/bin/PROG through the bundle's own
# loader and libraries. The loader is named, not found by the kernel, so
# the host's /lib64 and its libraries play no part.
bundle_exec() {
	local dir=$1 prog=$2
	shift 2
	"$dir/lib/ld-linux-x86-64.so.2" --library-path "$dir/lib" "$dir/bin/$prog" "$@"
}

# bundle_server_start DIR PORT CPUS [ARGS...]: starts the bundle's mariadbd
# on 127.0.0.1:PORT with DIR/my.cnf and DIR/data, pinned to CPUS with
# taskset when CPUS is not empty, and waits (at most $START_TIMEOUT
# seconds, default 180) for it to take connections. Sets SERVER_PID. Every
# path the server reads is inside DIR: basedir, plugins, messages and
# character sets. The server runs in a session of its own (setsid, where
# the bundle has it), as a sandbox's or a service's does: with the kernel's
# autogroups, a server in the clients' session shares their scheduling
# group, and on shared cores the loops' replies then come in bursts that
# they do not come in otherwise (see docs/PERFORMANCE.md, "The server's
# scheduling group").
bundle_server_start() {
	local dir=$1 port=$2 cpus=$3
	shift 3
	local run=$dir/run
	mkdir -p "$run/tmp"
	# A Unix socket path may have ~108 bytes.
	local sock=$run/mysqld.sock
	[ ${#sock} -lt 100 ] || sock=/tmp/shakedown-bench-$port.sock
	local extra=("$@")
	[ "$(id -u)" != 0 ] || extra+=(--user=root)
	[ ! -f "$run/error.log" ] || mv "$run/error.log" "$run/error.log.prev"
	local pin=()
	[ -z "$cpus" ] || pin=("$dir/lib/ld-linux-x86-64.so.2" --library-path "$dir/lib" "$dir/bin/taskset" -c "$cpus")
	# --wait: where setsid must fork (the caller leads its process group),
	# it waits for the server, so that the check below sees the server end;
	# once the server is up, SERVER_PID is the server's own pid.
	[ ! -x "$dir/bin/setsid" ] || pin=("$dir/lib/ld-linux-x86-64.so.2" --library-path "$dir/lib" "$dir/bin/setsid" --wait "${pin[@]}")
	# --defaults-file must come first.
	"${pin[@]}" "$dir/lib/ld-linux-x86-64.so.2" --library-path "$dir/lib" "$dir/bin/mariadbd" \
		"--defaults-file=$dir/my.cnf" "--basedir=$dir" "--datadir=$dir/data" "--plugin-dir=$dir/lib/plugin" \
		"--lc-messages-dir=$dir/share/mysql" --lc-messages=en_US "--character-sets-dir=$dir/share/mysql/charsets" \
		"--socket=$sock" "--pid-file=$run/mysqld.pid" "--log-error=$run/error.log" "--port=$port" \
		"--tmpdir=$run/tmp" "${extra[@]}" >"$run/console.log" 2>&1 &
	SERVER_PID=$!
	local deadline=$((SECONDS + ${START_TIMEOUT:-180}))
	while ! grep -q "ready for connections" "$run/error.log" 2>/dev/null; do
		if ! kill -0 "$SERVER_PID" 2>/dev/null; then
			echo "mariadbd exited while starting; its log:" >&2
			tail -30 "$run/error.log" "$run/console.log" >&2 2>/dev/null
			return 1
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "mariadbd did not take connections within ${START_TIMEOUT:-180}s; its log:" >&2
			tail -30 "$run/error.log" >&2 2>/dev/null
			return 1
		fi
		sleep 0.2
	done
	# The server's own pid, where setsid stayed as its parent.
	local pid
	pid=$(cat "$run/mysqld.pid" 2>/dev/null) && [ -n "$pid" ] && SERVER_PID=$pid
	return 0
}

# bundle_server_stop DIR: shuts the server down cleanly (SIGTERM) and waits
# for it, at most $STOP_TIMEOUT seconds (default 180), then kills it.
# Returns non-zero unless the log says the shutdown completed.
bundle_server_stop() {
	local dir=$1
	[ -n "${SERVER_PID:-}" ] || return 0
	kill -TERM "$SERVER_PID" 2>/dev/null || true
	local deadline=$((SECONDS + ${STOP_TIMEOUT:-180}))
	while kill -0 "$SERVER_PID" 2>/dev/null; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "mariadbd did not stop within ${STOP_TIMEOUT:-180}s; killing it" >&2
			kill -KILL "$SERVER_PID" 2>/dev/null || true
			SERVER_PID=
			return 1
		fi
		sleep 0.2
	done
	wait "$SERVER_PID" 2>/dev/null || true
	SERVER_PID=
	grep -q "Shutdown complete" "$dir/run/error.log"
}

# print_medians FILE: the medians of a results.tsv (tool mode workload
# threads round qps cpu_us_per_query rss_kb server_us_per_query) per
# workload, threads, tool and mode, each against sysbench's in the same
# workload and threads, as a markdown table.
print_medians() {
	local f=$1 key w t tool mode q c m s sq sc sm n ipis=
	# A tenth column, where a file has one, is bench.sh's rescheduling
	# IPIs a query (resched_ipis).
	[ "$(head -1 "$f" | awk -F'\t' '{print NF}')" -lt 10 ] || ipis=1
	echo "| workload | threads | client | runs | QPS | vs sysbench | client CPU us/query | vs sysbench | RSS KB | vs sysbench | server CPU us/query |${ipis:+ rescheduling IPIs a query |}"
	echo "|---|---|---|---|---|---|---|---|---|---|---|${ipis:+---|}"
	awk -F'\t' 'NR>1 {print $3 "\t" $4 "\t" $1 "\t" $2}' "$f" | sort -t"$(printf '\t')" -k1,1 -k2,2n -k3,3r -k4,4 -u |
		while IFS=$'\t' read -r w t tool mode; do
			col() { awk -F'\t' -v w="$w" -v t="$t" -v tool="$1" -v mode="$2" -v n="$3" 'NR>1 && $3==w && $4==t && $1==tool && $2==mode {print $n}' "$f" | median; }
			n=$(awk -F'\t' -v w="$w" -v t="$t" -v tool="$tool" -v mode="$mode" 'NR>1 && $3==w && $4==t && $1==tool && $2==mode' "$f" | wc -l)
			q=$(col "$tool" "$mode" 6); c=$(col "$tool" "$mode" 7); m=$(col "$tool" "$mode" 8); s=$(col "$tool" "$mode" 9)
			sq=$(col sysbench - 6); sc=$(col sysbench - 7); sm=$(col sysbench - 8)
			key=$tool
			[ "$mode" = - ] || key="$tool $mode"
			printf '| %s | %s | %s | %d | %.0f | %s | %.2f | %s | %.0f | %s | %.2f |' "$w" "$t" "$key" "$n" "$q" "$(ratio "$q" "$sq")" \
				"$c" "$(ratio "$c" "$sc")" "$m" "$(ratio "$m" "$sm")" "$s"
			if [ -n "$ipis" ]; then printf ' %.3f |' "$(col "$tool" "$mode" 10)"; fi
			echo
		done
}
