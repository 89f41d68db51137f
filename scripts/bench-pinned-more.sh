#!/usr/bin/env bash
# Two more measurements of the client on cores of its own, run inside the
# bundle beside bench-pinned.sh (same server, settings and data; run
# bench-pinned.sh first once, which prepares sbtest):
#
#   segments  oltp_point_select at THREADS (64) threads: one shakedown
#             process, against SEGMENTS (4) processes of THREADS/SEGMENTS
#             threads each (--segment I/N, started together with
#             --start-at); QPS of each side (the processes' sum).
#   replay    shakedown replay --speed 0 of a capture of point selects
#             (LOG, a MariaDB general log; capture makes the capture here;
#             without one, a log of STATEMENTS point selects in SESSIONS
#             sessions is written there)
#             with the server as both control and candidate, against
#             shakedown run sql --db-ps-mode disable with the same statement
#             at as many threads as the log has sessions: client CPU per
#             execution (a statement on one target) and per query. With
#             BASE (a second shakedown binary, say a build before a change),
#             the replay runs with both, alternately (the order flips every
#             round).
#   stall     shakedown run oltp_point_select at THREADS threads with
#             --stall (a trigger that never fires at this load) against
#             without, alternating: the cost of watching for stalls.
#
#   ./bench-pinned-more.sh                    both cases
#   CASES=replay LOG=ps.log ./bench-pinned-more.sh
#
# Knobs (environment): CASES ("segments replay"), SERVER_CPUS (0-7),
# CLIENT_CPUS (8-15), ROUNDS (2), SECS (5), THREADS (64), SEGMENTS (4),
# LOG (ps.log in the bundle), SESSIONS (64, the log's), STATEMENTS
# (600000, of a log written here), PORT (13306),
# TABLES (4), ROWS (100000), BASE (none). Results: one line per run in RESULTS
# (more.tsv in the bundle) as it ends, medians at the end.
set -uo pipefail
B=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/bench-lib.sh
. "$B/bench-lib.sh"

knobs CASES="segments replay stall" SERVER_CPUS=0-7 CLIENT_CPUS=8-15 ROUNDS=2 SECS=5 THREADS=64 SEGMENTS=4 LOG="$B/ps.log" \
	SESSIONS=64 STATEMENTS=600000 PORT=13306 TABLES=4 ROWS=100000 BASE= RESULTS="$B/more.tsv"

export SHAKEDOWN_HOME=$B/run/home HOME=$B/run/home
mkdir -p "$SHAKEDOWN_HOME" "$B/run/logs"
ulimit -n 65535 2>/dev/null || true
LD=("$B/lib/ld-linux-x86-64.so.2" --library-path "$B/lib")
client=("${LD[@]}" "$B/bin/taskset" -c "$CLIENT_CPUS")
gnutime=("${LD[@]}" "$B/bin/time")
url="mysql://shakedown@127.0.0.1:$PORT/sbtest"

if [ "$(cat "$B/data/.prepared" 2>/dev/null)" != "$TABLES $ROWS" ]; then
	echo "bench-pinned-more.sh: sbtest is not prepared with $TABLES x $ROWS; run bench-pinned.sh first" >&2
	exit 2
fi
trap 'bundle_server_stop "$B" >/dev/null 2>&1' EXIT
bundle_server_start "$B" "$PORT" "$SERVER_CPUS" || exit 1
[ -s "$RESULTS" ] || printf 'case\tside\tround\tqps\tcpu_us\n' >"$RESULTS"
first=$(($(wc -l <"$RESULTS") + 1)) # this call's first line: earlier calls' lines stay out of its medians
echo "# $(nproc) CPUs; server on $SERVER_CPUS, clients on $CLIENT_CPUS; rounds=$ROUNDS secs=$SECS; results in $RESULTS"

# record CASE SIDE ROUND QPS CPU_US: one line of RESULTS, echoed.
record() {
	printf '%s\t%s\t%s\t%.2f\t%.2f\n' "$@" >>"$RESULTS"
	printf '  %-9s %-22s round %s: %10.0f per s  %7.2f us client CPU each\n' "$@"
}

# cpu_of FILE...: user+sys seconds summed over GNU time outputs.
cpu_of() { cat "$@" | awk '{s += $1 + $2} END {print s}'; }

segments() {
	local r=$1 log=$B/run/logs/seg-one-$r.log
	"${gnutime[@]}" -o "$B/run/t.one" -f "%U %S" "${client[@]}" "$B/bin/shakedown" run oltp_point_select --target "$url" \
		--tables "$TABLES" --table-size "$ROWS" --threads "$THREADS" --time "$SECS" >"$log" 2>&1
	local q
	q=$(queries_of "$log")
	record segments "one process x $THREADS" "$r" "$(qps_of "$log")" "$(awk -v c="$(cpu_of "$B/run/t.one")" -v q="${q:-1}" 'BEGIN {print c / q * 1e6}')"
	# --start-at: every process connects first, then all start together.
	local at pids=() i total=0 queries=0
	at=$(date -u -d "+3 seconds" +%Y-%m-%dT%H:%M:%SZ)
	for i in $(seq "$SEGMENTS"); do
		"${gnutime[@]}" -o "$B/run/t.seg$i" -f "%U %S" "${client[@]}" "$B/bin/shakedown" run oltp_point_select --target "$url" \
			--tables "$TABLES" --table-size "$ROWS" --threads "$THREADS" --time "$SECS" \
			--segment "$i/$SEGMENTS" --start-at "$at" >"$B/run/logs/seg-$i-$r.log" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	for i in $(seq "$SEGMENTS"); do
		total=$(awk -v a="$total" -v b="$(qps_of "$B/run/logs/seg-$i-$r.log")" 'BEGIN {print a + b}')
		queries=$((queries + $(queries_of "$B/run/logs/seg-$i-$r.log")))
	done
	local cpus=()
	for i in $(seq "$SEGMENTS"); do cpus+=("$B/run/t.seg$i"); done
	record segments "$SEGMENTS processes x $((THREADS / SEGMENTS))" "$r" "$total" "$(awk -v c="$(cpu_of "${cpus[@]}")" -v q="$queries" 'BEGIN {print c / q * 1e6}')"
}

replay() {
	local r=$1 bins=("$B/bin/shakedown") names=("replay (2 targets)")
	if [ -n "$BASE" ]; then
		bins+=("$BASE") names+=("replay, BASE (2 targets)")
		[ $((r % 2)) -eq 1 ] || bins=("${bins[1]}" "${bins[0]}") names=("${names[1]}" "${names[0]}")
	fi
	local i log n e
	for i in "${!bins[@]}"; do
		log=$B/run/logs/replay-$i-$r.log
		"${gnutime[@]}" -o "$B/run/t.rp" -f "%U %S %e" "${client[@]}" "${bins[$i]}" replay "$B/run/ps.capture" \
			--control "$url" --candidate "$url" --speed 0 --progress 0 >"$log" 2>&1
		n=$(awk '/^statements replayed:/ {print $3}' "$log")
		e=$(awk '{print $3}' "$B/run/t.rp")
		record replay "${names[$i]}" "$r" "$(awk -v n="${n:-0}" -v e="$e" 'BEGIN {print 2 * n / e}')" \
			"$(awk -v c="$(cpu_of "$B/run/t.rp")" -v n="${n:-1}" 'BEGIN {print c / (2 * n) * 1e6}')"
	done
	log=$B/run/logs/runsql-$r.log
	"${gnutime[@]}" -o "$B/run/t.rs" -f "%U %S" "${client[@]}" "$B/bin/shakedown" run sql --file "$B/run/ps.sql" \
		--target "$url" --db-ps-mode disable --threads "$SESSIONS" --time "$SECS" >"$log" 2>&1
	local q
	q=$(queries_of "$log")
	record replay "run sql (text)" "$r" "$(qps_of "$log")" "$(awk -v c="$(cpu_of "$B/run/t.rs")" -v q="${q:-1}" 'BEGIN {print c / q * 1e6}')"
}

# genlog: a MariaDB general log of STATEMENTS point selects on sbtest1 in
# SESSIONS sessions, interleaved.
genlog() {
	awk -v n="$STATEMENTS" -v s="$SESSIONS" -v rows="$ROWS" 'BEGIN {
		srand(1)
		print "Time\t\t    Id Command\tArgument"
		for (i = 1; i <= s; i++) printf "261122 12:00:00\t%6d Connect\tshakedown@127.0.0.1 on sbtest using TCP/IP\n", i
		for (j = 0; j < n; j++)
			printf "\t\t%6d Query\tSELECT c FROM sbtest1 WHERE id = %d\n", j % s + 1, int(rand() * (rows - 100)) + 1
		for (i = 1; i <= s; i++) printf "\t\t%6d Quit\t\n", i
	}'
}

stall() {
	local r=$1 sides="off on"
	[ $((r % 2)) -eq 1 ] || sides="on off" # the order flips every round
	for side in $sides; do
		local log=$B/run/logs/stall-$side-$r.log args=()
		[ "$side" = off ] || args=(--stall)
		"${gnutime[@]}" -o "$B/run/t.st" -f "%U %S" "${client[@]}" "$B/bin/shakedown" run oltp_point_select --target "$url" \
			--tables "$TABLES" --table-size "$ROWS" --threads "$THREADS" --time "$SECS" "${args[@]}" >"$log" 2>&1
		local q
		q=$(queries_of "$log")
		record stall "--stall $side" "$r" "$(qps_of "$log")" "$(awk -v c="$(cpu_of "$B/run/t.st")" -v q="${q:-1}" 'BEGIN {print c / q * 1e6}')"
	done
}

for c in $CASES; do
	case $c in
	segments | stall) ;;
	replay)
		[ -f "$LOG" ] || genlog >"$LOG" || { echo "bench-pinned-more.sh: cannot write $LOG (LOG=)" >&2; exit 2; }
		"${client[@]}" "$B/bin/shakedown" capture "$LOG" -o "$B/run/ps.capture" 2>&1 | tail -1
		printf 'SELECT c FROM sbtest1 WHERE id = {{uniform 1 %d}};\n' $((ROWS - 100)) >"$B/run/ps.sql"
		;;
	*)
		echo "bench-pinned-more.sh: unknown case $c (segments, replay, stall)" >&2
		exit 2
		;;
	esac
	for r in $(seq "$ROUNDS"); do "$c" "$r"; done
done

echo
echo "Medians of this call (lines $first on of $RESULTS):"
mine=$(tail -n "+$first" "$RESULTS")
awk -F'\t' '{print $1 "\t" $2}' <<<"$mine" | sort -u | while IFS=$'\t' read -r c s; do
	q=$(awk -F'\t' -v c="$c" -v s="$s" '$1 == c && $2 == s {print $4}' <<<"$mine" | median)
	u=$(awk -F'\t' -v c="$c" -v s="$s" '$1 == c && $2 == s {print $5}' <<<"$mine" | median)
	printf '  %-9s %-22s %10.0f per s  %7.2f us client CPU each\n' "$c" "$s" "$q" "$u"
done
if [[ " $CASES " == *" replay "* ]]; then
	# The goal: a replay's client CPU an execution at most 1.5x run's a query.
	printf '  replay against run sql, paired median: %.3fx client CPU an execution\n' "$(awk -F'\t' '
		$1 == "replay" && $2 == "replay (2 targets)" {u[$3] = $5}
		$1 == "replay" && $2 == "run sql (text)" {ru[$3] = $5}
		END {for (r in u) if (ru[r] > 0) print u[r] / ru[r]}' <<<"$mine" | median)"
fi
if [ -n "$BASE" ] && [[ " $CASES " == *" replay "* ]]; then
	# Paired: each round's new replay against BASE's in the same round.
	pairs=$(awk -F'\t' '$1 == "replay" && $2 == "replay (2 targets)" {q[$3] = $4; u[$3] = $5}
		$1 == "replay" && $2 == "replay, BASE (2 targets)" {bq[$3] = $4; bu[$3] = $5}
		END {for (r in q) if (bq[r] > 0 && bu[r] > 0) print q[r] / bq[r], u[r] / bu[r]}' <<<"$mine")
	printf '  replay against BASE, paired medians: %.3fx executions a second, %.3fx client CPU an execution\n' \
		"$(awk '{print $1}' <<<"$pairs" | median)" "$(awk '{print $2}' <<<"$pairs" | median)"
fi
