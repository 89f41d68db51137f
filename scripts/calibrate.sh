#!/usr/bin/env bash
# The calibration runs of the comparison statistics (docs/STATISTICS.md):
#
#   scripts/calibrate.sh aa   A/A: one sandbox as both control and candidate.
#                             At most 1 of the 12 cells may come out faster
#                             or slower; every other is same or inconclusive.
#   scripts/calibrate.sh ab   A/B: a durable sandboxes (flush at every commit,
#                             sync_binlog=1) against a relaxed one (both 0):
#                             oltp_write_only must come out faster at 3 or
#                             more of the 4 thread levels.
#
# Both sweep oltp_point_select, oltp_read_only and oltp_write_only at 1, 4,
# 16 and 64 threads, 5 repeats of 5 s (after a 1 s warm-up) in
# counterbalanced order, then print the comparison and the per-cell states.
# About 13 minutes each on 2 cores. Everything (sandboxes, plan, store,
# report.html) goes under OUT (out/calibrate-KIND); the sandboxes are
# removed at the end, also on Ctrl-C.
#
# Knobs (environment): BIN (bin/shakedown), OUT, TIME (5), REPEATS (5),
# THREADS (1, 4, 16, 64).
set -euo pipefail
cd "$(dirname "$0")/.."

kind=${1:-}
case "$kind" in
aa | ab) ;;
*)
	echo "usage: scripts/calibrate.sh aa|ab" >&2
	exit 2
	;;
esac
BIN=${BIN:-bin/shakedown}
OUT=${OUT:-out/calibrate-$kind}
TIME=${TIME:-5}
REPEATS=${REPEATS:-5}
THREADS=${THREADS:-1, 4, 16, 64}

[ -x "$BIN" ] || make build
rm -rf "$OUT"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export SHAKEDOWN_HOME="$OUT"

common=(--set log_bin=ON --set innodb_buffer_pool_size=256M --set innodb_log_file_size=128M --set max_connections=500)
# MariaDB's thread pool, as the demo runs it (see shakedown demo --help).
if command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; then
	common+=(--set thread_handling=pool-of-threads)
fi

# up starts a sandbox and prints its URL. It runs in a subshell ($(up ...)),
# so the sandboxes to remove at the end are named here, not there.
names=(same durable relaxed)
cleanup() {
	for n in "${names[@]}"; do "$BIN" sandbox down "$n" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT

up() { # name, settings...
	local name=$1
	shift
	"$BIN" sandbox up "$name" --url-only "${common[@]}" "$@"
}

if [ "$kind" = aa ]; then
	url=$(up same --set innodb_flush_log_at_trx_commit=1 --set sync_binlog=1)
	control=$url
	candidate=$url
	cname=a
	dname=b
else
	control=$(up durable --set innodb_flush_log_at_trx_commit=1 --set sync_binlog=1)
	candidate=$(up relaxed --set innodb_flush_log_at_trx_commit=0 --set sync_binlog=0)
	cname=durable
	dname=relaxed
fi

cat >"$OUT/plan.yaml" <<PLAN
name: calibrate-$kind
targets:
  - name: $cname
    url: $control
    role: control
  - name: $dname
    url: $candidate
options: {tables: 4, table-size: 10000}
workloads: [oltp_point_select, oltp_read_only, oltp_write_only]
threads: [$THREADS]
time: $TIME
warmup: 1
repeats: $REPEATS
noise_threshold: 2%
order: counterbalanced
prepare: true
PLAN

start=$(date +%s)
"$BIN" sweep "$OUT/plan.yaml" --store "$OUT/shakedown.db"
echo "sweep took $(($(date +%s) - start)) s"
"$BIN" report --store "$OUT/shakedown.db" -o "$OUT/report.html"
echo
echo "per-cell states (QPS):"
"$BIN" report --store "$OUT/shakedown.db" --format csv |
	awk -F, 'NR > 1 && $4 == "candidate" { n[$19]++; print "  " $2 " " $5 " threads: " $18 " [" $20 ".." $21 "] " $19 }
	END { for (s in n) printf "%s: %d\n", s, n[s] }'
