#!/usr/bin/env bash
# The Kubernetes Job of deploy/kubernetes/, run on this machine: 4 runners
# of one sweep, each given its index the way an Indexed Job gives it
# (JOB_COMPLETION_INDEX=0..3), against two sandboxes (control and
# candidate), a third sandbox as the results store they share; then the
# merged report. It shows what the pods do and print, without a cluster.
#
#   scripts/split-local.sh
#
# Knobs (environment): BIN (bin/shakedown), RUNNERS (4), THREADS ("8, 32"),
# TIME (5), REPEATS (1), LEAD (seconds between now and --start-at: 10),
# KEEP (1: leave the sandboxes up).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-bin/shakedown}
RUNNERS=${RUNNERS:-4}
THREADS=${THREADS:-"8, 32"}
TIME=${TIME:-5}
REPEATS=${REPEATS:-1}
LEAD=${LEAD:-10}
[ -x "$BIN" ] || make build >/dev/null
BIN=$(realpath "$BIN")

work=$(mktemp -d)
export SHAKEDOWN_HOME=$work/home
cleanup() {
	if [ "${KEEP:-}" != 1 ]; then
		for s in split-control split-candidate split-results; do "$BIN" sandbox down "$s" >/dev/null 2>&1 || true; done
		rm -rf "$work"
	fi
}
trap cleanup EXIT

control=$("$BIN" sandbox up split-control --url-only)
candidate=$("$BIN" sandbox up split-candidate --url-only)
results=$("$BIN" sandbox up split-results --url-only)
# The store's database: the runners make it on first use.
store=${results%/sbtest}/shakedown

cat >"$work/plan.yaml" <<EOF
name: local-split
targets:
  - name: control
    url: $control
    role: control
  - name: candidate
    url: $candidate
options: {tables: 2, table-size: 10000}
workloads: [oltp_read_only]
threads: [$THREADS]
time: $TIME
repeats: $REPEATS
prepare: true
prepare_threads: 2
cleanup: true
order: interleave
EOF

start=$(date -u -d "+$LEAD sec" +%Y-%m-%dT%H:%M:%SZ)
echo "# $RUNNERS runners, start at $start, store $store"
pids=()
for ((i = 0; i < RUNNERS; i++)); do
	JOB_COMPLETION_INDEX=$i "$BIN" sweep "$work/plan.yaml" --segment-index-env=JOB_COMPLETION_INDEX --segments="$RUNNERS" \
		--start-at="$start" --store="$store" >"$work/runner-$i.log" 2>&1 &
	pids+=($!)
done
rc=0
for i in "${!pids[@]}"; do
	if ! wait "${pids[$i]}"; then
		echo "# runner $i failed:" && cat "$work/runner-$i.log"
		rc=1
	fi
done
for ((i = 0; i < RUNNERS; i++)); do
	echo "# runner $i (JOB_COMPLETION_INDEX=$i): its log, abridged"
	grep -E '^(plan |.*runner [0-9/]+ of |.*step [0-9]+/|sweep [0-9]+: )' "$work/runner-$i.log" || true
done
echo "# the merged report"
echo "\$ shakedown report --store $store"
"$BIN" report --store "$store"
exit $rc
