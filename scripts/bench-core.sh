#!/usr/bin/env bash
# The I/O loops' cases on a machine with cores of its own, run inside the
# bundle (scripts/bundle.sh) with bench-pinned.sh; no run starts after TOTAL
# seconds (the last run and the server's shutdown add about 10):
#
#   hold    oltp_point_select at 1 and 16 threads: sysbench, --client-io
#           auto, auto with SHAKEDOWN_IOLOOP_HOLD=off (the loops wait the
#           ordinary way, giving their processor away), and auto with
#           SHAKEDOWN_IOLOOP_WATCH=on (loops as many as the CPUs wait with
#           no timeout, woken when idle by a watch on a processor more,
#           as more loops than CPUs do on shared cores)
#   levels  oltp_point_select at 64 and 256 threads: sysbench, auto, and
#           auto with SHAKEDOWN_IOLOOP_BIND=on (each loop bound to one of
#           the clients' CPUs, which auto does only on cores shared with
#           the server); oltp_read_write at 16: sysbench and auto
#   burst   oltp_point_select at 3000 threads: sysbench, auto, and auto with
#           SHAKEDOWN_IOLOOP_BURST=$BURST (a loop turns at most that many
#           replies into statements at once, 256 by default): whether
#           bursts make the server's threads contend (server CPU per query)
#
#   ./bench-core.sh
#
# Knobs (environment): TOTAL (210) seconds, ROUNDS (2),
# SECS (4), BURST (32), the thread counts HOLD_THREADS ("1 16"),
# BURST_THREADS (3000) and LEVELS ("64 256"), and bench-pinned.sh's
# SERVER_CPUS (0-7), CLIENT_CPUS (8-15), TABLES, ROWS and PORT; OUT (the
# bundle's directory): results go to $OUT/core.tsv as each run ends (one
# line per run, bench-pinned.sh's columns) and the log to $OUT/core.log;
# the medians of all of it are printed at the end.
set -uo pipefail
B=$(cd "$(dirname "$0")" && pwd)
TOTAL=${TOTAL:-210}
BURST=${BURST:-32}
OUT=${OUT:-$B}
mkdir -p "$OUT"
export ROUNDS=${ROUNDS:-2} SECS=${SECS:-4} RESULTS=$OUT/core.tsv
t0=$SECONDS
rc=0
# part WORKLOADS THREADS CLIENT_IO: one bench-pinned.sh call with what is
# left of TOTAL as its budget.
part() {
	local left=$((TOTAL - (SECONDS - t0)))
	if [ "$left" -le 10 ]; then
		echo "# skipped for TOTAL=$TOTAL: $1 at $2 threads" | tee -a "$OUT/core.log"
		return
	fi
	echo "# $1 threads=\"$2\" client-io=\"$3\" budget ${left}s" | tee -a "$OUT/core.log"
	WORKLOADS=$1 THREADS=$2 CLIENT_IO=$3 BUDGET=$left "$B/bench-pinned.sh" 2>&1 |
		tee -a "$OUT/core.log" | grep -E '^  |FAILED|skipped'
	[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
}
part oltp_point_select "${HOLD_THREADS:-1 16}" "auto auto+SHAKEDOWN_IOLOOP_HOLD=off auto+SHAKEDOWN_IOLOOP_WATCH=on"
part oltp_point_select "${BURST_THREADS:-3000}" "auto auto+SHAKEDOWN_IOLOOP_BURST=$BURST"
part oltp_point_select "${LEVELS:-64 256}" "auto auto+SHAKEDOWN_IOLOOP_BIND=on"
part oltp_read_write 16 auto
. "$B/bench-lib.sh"
echo
echo "Medians of $RESULTS, $((SECONDS - t0))s in all:" | tee -a "$OUT/core.log"
print_medians "$RESULTS" | tee -a "$OUT/core.log"
exit "$rc"
