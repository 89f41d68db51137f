#!/usr/bin/env bash
# capacity on a quiet machine with the client on cores of its own: the two
# checks of the capacity issue that a busy 2-core host cannot make. Runs
# inside a bundle that scripts/bundle.sh made with CAPACITY_TEST=1 (which
# adds bin/capacity.test, the static test binary of internal/capacity),
# unpacked on the machine; it needs bash, coreutils, grep and awk there.
#
#   tar xzf shakedown-bench-linux-amd64.tar.gz
#   cd shakedown-bench && OUT=/somewhere ./device-capacity.sh
#
# It makes two servers from the bundle's data directory, each on a copy of
# its own, both pinned to SERVER_CPUS: "durable" (a binary log,
# innodb_flush_log_at_trx_commit=1, sync_binlog=1) and "relaxed" (a binary
# log, 0 and 0), both with the thread pool. The test binary runs pinned to
# CLIENT_CPUS:
#
#  1. TestSearchMatchesScan against the relaxed server, four connections
#     whose every event sleeps 2ms (a ceiling near 2,000/s), SLO p95<=40ms,
#     steps of 1 s with no warm-up: two searches to a 2% bracket, each
#     within 5% of the highest rate that a scan in 2% steps holds twice,
#     and within 5% of each other. About 60 s, at most 100 s (a narrow
#     miss is measured again). CHECKS=scan BUDGET=120 runs it alone.
#  2. TestDurableAgainstRelaxed: oltp_write_only, 16 threads, 4 tables of
#     ROWS rows, SLO p95<=100ms with errors<=1%, four searches a side in
#     turn to a 10% bracket: the relaxed server is "faster" with a 95%
#     interval of the ratio above 1. About 70 s.
#
# Everything it prints is appended to $OUT/capacity-device.txt as it goes;
# the servers' logs go to $OUT too. At most BUDGET seconds in all: each
# test gets what is left of it, the scan test 100 s at most and the other
# 120 s. It exits non-zero when a check failed.
#
# Knobs (environment), defaults in brackets: OUT [./out] SERVER_CPUS [0-7]
# CLIENT_CPUS [8-15] ROWS [10000] BUDGET [195] PORT [13316, and the next]
# CHECKS ["scan durable"].
set -uo pipefail
B=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/bench-lib.sh
. "$B/bench-lib.sh"

OUT=${OUT:-$B/out}
SERVER_CPUS=${SERVER_CPUS:-0-7}
CLIENT_CPUS=${CLIENT_CPUS:-8-15}
ROWS=${ROWS:-10000}
BUDGET=${BUDGET:-195}
PORT=${PORT:-13316}
CHECKS=${CHECKS:-scan durable}
mkdir -p "$OUT"
RES=$OUT/capacity-device.txt
say() { echo "$*" | tee -a "$RES"; }

if [ ! -x "$B/bin/capacity.test" ]; then
	say "device-capacity.sh: $B/bin/capacity.test is missing: make the bundle with CAPACITY_TEST=1 scripts/bundle.sh"
	exit 1
fi
say "# capacity on $(nproc) cores, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(head -2 "$B/README" | tail -1)"
say "# server CPUs $SERVER_CPUS, client CPUs $CLIENT_CPUS, load average $(cut -d' ' -f1-3 /proc/loadavg)"

work=$B/run-capacity
rm -rf "$work"
mkdir -p "$work"
declare -A pid
stop_all() {
	local side
	for side in durable relaxed; do
		[ -n "${pid[$side]:-}" ] || continue
		SERVER_PID=${pid[$side]}
		bundle_server_stop "$work/$side" >/dev/null 2>&1 || say "# the $side server did not shut down cleanly"
		cp "$work/$side/run/error.log" "$OUT/capacity-$side-error.log" 2>/dev/null
		pid[$side]=
	done
}
trap stop_all EXIT

# up SIDE PORT SETTINGS...: a server of its own on a copy of the bundle's
# data directory, which must not be in use (bench-pinned.sh's server
# stopped).
up() {
	local side=$1 port=$2 d=$work/$1
	shift 2
	mkdir -p "$d/run"
	for f in bin lib share my.cnf; do ln -s "$B/$f" "$d/$f"; done
	cp -a --sparse=always "$B/data" "$d/data"
	echo "CREATE DATABASE IF NOT EXISTS capdev;" >"$d/init.sql"
	bundle_server_start "$d" "$port" "$SERVER_CPUS" "--init-file=$d/init.sql" "--log-bin=$d/run/binlog" --server-id=1 \
		--thread-handling=pool-of-threads "$@" || return 1
	pid[$side]=$SERVER_PID
	say "# $side server on port $port, pid $SERVER_PID: $*"
}
t0=$SECONDS
up durable "$PORT" --innodb-flush-log-at-trx-commit=1 --sync-binlog=1 || exit 1
up relaxed "$((PORT + 1))" --innodb-flush-log-at-trx-commit=0 --sync-binlog=0 || exit 1
say "# servers up in $((SECONDS - t0)) s"
url() { echo "mysql://shakedown@127.0.0.1:$1/capdev"; }

# check NAME TEST CAP: runs one test of the binary pinned to CLIENT_CPUS
# with what is left of the budget, CAP seconds at most, its output
# appended to RES as it comes.
failed=0
check() {
	local name=$1 test=$2 left=$((BUDGET - SECONDS)) rc
	[ "$left" -le "$3" ] || left=$3
	if [ "$left" -lt 30 ]; then
		say "# $name: skipped, $left s of the budget left"
		failed=1
		return
	fi
	say "## $name ($test, at most $left s)"
	local s=$SECONDS
	(cd "$work" && HOME=$work bundle_exec "$B" taskset -c "$CLIENT_CPUS" "$B/bin/capacity.test" \
		-test.run "^$test\$" -test.v -test.count=1 -test.timeout "${left}s") 2>&1 | tee -a "$RES"
	rc=${PIPESTATUS[0]}
	say "# $name: exit $rc after $((SECONDS - s)) s"
	[ "$rc" = 0 ] || failed=1
}
export SHAKEDOWN_TEST_CAPACITY_SLEEP_URL SHAKEDOWN_TEST_CAPACITY_DURABLE_URL SHAKEDOWN_TEST_CAPACITY_RELAXED_URL
export SHAKEDOWN_TEST_CAPACITY_ROWS=$ROWS
SHAKEDOWN_TEST_CAPACITY_SLEEP_URL=$(url "$((PORT + 1))")
SHAKEDOWN_TEST_CAPACITY_DURABLE_URL=$(url "$PORT")
SHAKEDOWN_TEST_CAPACITY_RELAXED_URL=$(url "$((PORT + 1))")
for c in $CHECKS; do
	case $c in
	scan) check "done-when 1: search against a scan" TestSearchMatchesScan 100 ;;
	durable) check "done-when 2: durable against relaxed" TestDurableAgainstRelaxed 120 ;;
	*) say "# unknown check $c (want scan or durable)"; failed=1 ;;
	esac
done
stop_all
say "# done in $SECONDS s: $([ "$failed" = 0 ] && echo "every check passed" || echo "a check failed or was skipped")"
exit "$failed"
