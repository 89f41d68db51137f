#!/usr/bin/env bash
# shakedown against sysbench 1.0.20 with the client on cores of its own. Runs
# inside a bundle that scripts/bundle.sh made and that was unpacked on the
# machine to measure; it needs nothing there but bash, coreutils, grep and
# awk: the server, sysbench, shakedown, GNU time, taskset and setsid run from the
# bundle through its own loader and libraries.
#
#   tar xzf shakedown-bench-linux-amd64.tar.gz
#   cd shakedown-bench && ./bench-pinned.sh
#
# It starts the bundle's MariaDB (the settings of `shakedown sandbox up`,
# sbtest with 4 tables of 100,000 rows) pinned to
# SERVER_CPUS, then for each workload and thread count runs, in alternating
# rounds (the order flips every round), sysbench with its own Lua script and
# `shakedown run --client-io=MODE` for each MODE in CLIENT_IO, all pinned to
# CLIENT_CPUS and under GNU time. Each run appends one line to RESULTS as
# soon as it ends: tool, mode, workload, threads, round, QPS, client CPU
# (user+sys) per query in microseconds, client max RSS in KB and the
# server's CPU per query. At the end it prints the medians of RESULTS.
#
# Knobs (environment), defaults in brackets:
#   SERVER_CPUS [0-7]  CLIENT_CPUS [8-15]  THREADS ["1 16 64 256 1024 3000"]
#   WORKLOADS ["oltp_point_select oltp_read_write"]  CLIENT_IO ["auto polled"]
#     An item MODE+VAR=VALUE[,VAR=VALUE] runs MODE with those variables
#     set, as a client of its own: "auto auto+SHAKEDOWN_IOLOOP_HOLD=off"
#     compares the I/O loops with and without holding their processor,
#     "auto+SHAKEDOWN_IOLOOP_BURST=32" a smaller burst of statements,
#     "auto+SHAKEDOWN_IOLOOP_LOOPS=16" 16 loops in place of the rule.
#   ROUNDS [2]  SECS [5] seconds per run  PORT [13306]
#   TABLES [4] ROWS [100000]: sbtest's size; the first start makes it with
#     shakedown prepare (unless the bundle was packed with PREPARED=1), and
#     again whenever these change
#   BUDGET [540] seconds: no run starts that could end later than this after
#     the start, so that one command fits a 10-minute limit; what was
#     skipped is listed. Split a long plan over several calls with WORKLOADS
#     or THREADS; RESULTS accumulates and the medians cover all of it.
#   RESULTS [results.tsv in the bundle]  SHAKEDOWN_ARGS [""] more options
#   for shakedown run  SYSBENCH_ARGS [""] more options for sysbench
#
# With every default: 2 workloads x 6 thread counts x 2 rounds x 3 clients
# of 5 s, about 8 to 9 minutes.
set -uo pipefail
B=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/bench-lib.sh
. "$B/bench-lib.sh"

knobs SERVER_CPUS=0-7 CLIENT_CPUS=8-15 THREADS="1 16 64 256 1024 3000" WORKLOADS="oltp_point_select oltp_read_write" \
	CLIENT_IO="auto polled" ROUNDS=2 SECS=5 PORT=13306 BUDGET=540 RESULTS="$B/results.tsv" TABLES=4 ROWS=100000
read -r -a shakedown_args <<<"${SHAKEDOWN_ARGS:-}"
read -r -a sysbench_args <<<"${SYSBENCH_ARGS:-}"
whole_numbers bench-pinned.sh ROUNDS SECS PORT BUDGET TABLES ROWS

started=$SECONDS
# A HOME of its own: no option file of the host's reaches a client.
export SHAKEDOWN_HOME=$B/run/home HOME=$B/run/home
mkdir -p "$SHAKEDOWN_HOME" "$B/run/logs"
# sysbench 3000 threads and the server's open_files_limit need descriptors.
ulimit -n 65535 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
export LUA_PATH="$B/share/sysbench/?.lua;;"

LD=("$B/lib/ld-linux-x86-64.so.2" --library-path "$B/lib")
client=("${LD[@]}" "$B/bin/taskset" -c "$CLIENT_CPUS")
gnutime=("${LD[@]}" "$B/bin/time")

trap 'bundle_server_stop "$B" >/dev/null 2>&1' EXIT
echo "# bundle $B: $(bundle_exec "$B" shakedown version), $(bundle_exec "$B" sysbench --version), mariadbd $(bundle_exec "$B" mariadbd --version | awk '{print $3}')"
echo "# $(nproc) CPUs; server on $SERVER_CPUS, clients on $CLIENT_CPUS; $TABLES tables x $ROWS rows; rounds=$ROUNDS secs=$SECS threads=\"$THREADS\" client-io=\"$CLIENT_IO\""
bundle_server_start "$B" "$PORT" "$SERVER_CPUS" || exit 1
echo "# server up in $((SECONDS - started))s (pid $SERVER_PID)"
if [ "$(cat "$B/data/.prepared" 2>/dev/null)" != "$TABLES $ROWS" ]; then
	# The first start (or new TABLES, ROWS): make sbtest, then restart the
	# server so that every run starts from flushed tables, as a packed data
	# directory would.
	p0=$SECONDS
	target="mysql://shakedown@127.0.0.1:$PORT/sbtest"
	: >"$B/run/prepare.log"
	if [ -f "$B/data/.prepared" ]; then
		read -r old _ <"$B/data/.prepared"
		drop=$((old > TABLES ? old : TABLES))
		"${LD[@]}" "$B/bin/taskset" -c "$CLIENT_CPUS" "$B/bin/shakedown" cleanup oltp_read_write --target "$target" --tables "$drop" >>"$B/run/prepare.log" 2>&1
		rm -f "$B/data/.prepared"
	fi
	if ! "${LD[@]}" "$B/bin/taskset" -c "$CLIENT_CPUS" "$B/bin/shakedown" prepare oltp_read_write --target "$target" \
		--tables "$TABLES" --table-size "$ROWS" --threads "$TABLES" >>"$B/run/prepare.log" 2>&1; then
		echo "bench-pinned.sh: prepare failed:" >&2
		tail -20 "$B/run/prepare.log" >&2
		exit 1
	fi
	echo "$TABLES $ROWS" >"$B/data/.prepared"
	bundle_server_stop "$B" || { echo "bench-pinned.sh: the server did not shut down cleanly after prepare; see $B/run/error.log" >&2; exit 1; }
	bundle_server_start "$B" "$PORT" "$SERVER_CPUS" || exit 1
	echo "# prepared $TABLES tables x $ROWS rows and restarted the server in $((SECONDS - p0))s"
fi
echo "# results in $RESULTS"
[ -s "$RESULTS" ] || printf 'tool\tmode\tworkload\tthreads\tround\tqps\tcpu_us_per_query\trss_kb\tserver_us_per_query\n' >"$RESULTS"

hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
failed=0
skipped=()

# measure TOOL MODE WORKLOAD THREADS ROUND CMD...: runs CMD pinned to the
# client CPUs under GNU time and appends its line to RESULTS.
measure() {
	local tool=$1 mode=$2 w=$3 t=$4 r=$5
	shift 5
	local log=$B/run/logs/$w-$t-$r-$tool-$mode.log tim=$B/run/time.out
	# A run takes SECS plus connecting and tearing down 3000 threads.
	if [ $((SECONDS - started + SECS + 5 + t / 200)) -gt "$BUDGET" ]; then
		skipped+=("$tool/$mode $w $t round $r")
		return
	fi
	local c0 c1 rc queries qps
	c0=$(proc_ticks "$SERVER_PID")
	"${gnutime[@]}" -o "$tim" -f "%U %S %M %e" "${client[@]}" "$@" >"$log" 2>&1
	rc=$?
	c1=$(proc_ticks "$SERVER_PID")
	queries=$(queries_of "$log")
	qps=$(qps_of "$log")
	if [ "$rc" -ne 0 ] || [ -z "$qps" ] || [ "${queries:-0}" = 0 ]; then
		echo "  FAILED $tool $mode $w $t round $r (exit $rc, log $log):" >&2
		tail -5 "$log" >&2
		failed=$((failed + 1))
		if ! kill -0 "$SERVER_PID" 2>/dev/null; then
			echo "bench-pinned.sh: the server is gone; its log: $B/run/error.log" >&2
			exit 1
		fi
		return
	fi
	local u s m e
	read -r u s m e <"$tim"
	awk -v tool="$tool" -v mode="$mode" -v w="$w" -v t="$t" -v r="$r" -v qps="$qps" -v q="$queries" \
		-v u="$u" -v s="$s" -v m="$m" -v c0="$c0" -v c1="$c1" -v hz="$hz" \
		'BEGIN {printf "%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%d\t%.2f\n", tool, mode, w, t, r, qps, (u+s)/q*1e6, m, (c1-c0)/hz/q*1e6}' >>"$RESULTS"
	tail -1 "$RESULTS" | awk -F'\t' '{printf "  %-9s %-7s %-18s %5d threads round %d: %9.0f qps %7.2f us/q %8d KB RSS (server %.2f us/q)\n", $1, $2, $3, $4, $5, $6, $7, $8, $9}'
	# What --client-io came to, on the first round only.
	[ "$tool" != shakedown ] || [ "$r" != 1 ] || sed -n 's/^Client I\/O: /            client I\/O: /p' "$log"
}

conn=(--mysql-host=127.0.0.1 "--mysql-port=$PORT" --mysql-user=shakedown --mysql-db=sbtest "--tables=$TABLES" "--table-size=$ROWS")
clients=(sysbench)
for mode in $CLIENT_IO; do clients+=("shakedown:$mode"); done
for w in $WORKLOADS; do
	for t in $THREADS; do
		for r in $(seq "$ROUNDS"); do
			for c in $(round_order "$r" "${clients[@]}"); do
				if [ "$c" = sysbench ]; then
					measure sysbench - "$w" "$t" "$r" "${LD[@]}" "$B/bin/sysbench" "$B/share/sysbench/$w.lua" "${conn[@]}" \
						"--threads=$t" "--time=$SECS" "${sysbench_args[@]}" run
				else
					mode=${c#shakedown:}
					pre=()
					if [[ $mode == *+* ]]; then
						IFS=, read -r -a pre <<<"${mode#*+}"
						pre=(env "${pre[@]}")
					fi
					measure shakedown "$mode" "$w" "$t" "$r" "${pre[@]}" "$B/bin/shakedown" run "$w" "${conn[@]}" \
						"--threads=$t" "--time=$SECS" "--client-io=${mode%%+*}" "${shakedown_args[@]}"
				fi
			done
		done
	done
done

bundle_server_stop "$B" || echo "bench-pinned.sh: the server did not shut down cleanly; see $B/run/error.log" >&2
trap - EXIT
echo
echo "Medians of $RESULTS ($(($(wc -l <"$RESULTS") - 1)) runs; ratios against sysbench at the same workload and threads):"
echo
print_medians "$RESULTS"
echo
echo "# $((SECONDS - started))s in all; $failed runs failed, ${#skipped[@]} skipped for BUDGET=$BUDGET"
for s in "${skipped[@]}"; do echo "#   skipped: $s"; done
[ "$failed" -eq 0 ]
