#!/usr/bin/env bash
# Scale of a load split over runners (issue "Load past one machine"), on
# this machine against local sandboxes:
#
#   scripts/split-scale.sh                  all cases
#   CASES="connections" scripts/split-scale.sh
#
# Cases:
#   merge        merging 16 runners x 600 one-second intervals (counts and
#                HDR histograms added, intervals aligned by wall clock):
#                go test -bench BenchmarkMerge16x600 ./internal/result
#   connections  4 runners (run oltp_point_select --segment i/4) of 250
#                threads each against one sandbox: the most connections the
#                server saw at once (Threads_connected, sampled every 0.2 s,
#                and Max_used_connections) and every runner's exit code
#   qps          4 runners of 16 threads (--threads=64 --segment i/4) against
#                one runner of 64 threads on one sandbox, ROUNDS rounds,
#                alternately (the order flips every round); the 4 runners'
#                QPS added per round; both sides judged by stats.Compare
#                (scripts/qpscompare), as a sweep's report judges them
#
# Knobs (environment): BIN (bin/shakedown), ROUNDS (5), SECONDS_PER_RUN
# (10), CONN_SECONDS (15), LEAD (seconds from now to --start-at: 5).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-bin/shakedown}
ROUNDS=${ROUNDS:-5}
SECS=${SECONDS_PER_RUN:-10}
CONN_SECS=${CONN_SECONDS:-15}
LEAD=${LEAD:-5}
CASES=${CASES:-"merge connections qps"}
bash scripts/deps.sh
# jq reads the runners' result documents.
command -v jq >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq >/dev/null
[ -x "$BIN" ] || make build >/dev/null
BIN=$(realpath "$BIN")

work=$(mktemp -d)
export SHAKEDOWN_HOME=$work/home
up=""
cleanup() {
	[ -n "$up" ] && "$BIN" sandbox down split-scale >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

sandbox() {
	if [ -z "$up" ]; then
		url=$("$BIN" sandbox up split-scale --url-only)
		up=1
		port=${url##*:}
		port=${port%%/*}
		"$BIN" prepare oltp_point_select --target "$url" --tables=1 --table-size=10000 >/dev/null
	fi
}

status() { # the value of a global status variable
	mariadb -h 127.0.0.1 -P "$port" -u shakedown -N -B -e "SHOW GLOBAL STATUS LIKE '$1'" | awk '{print $2}'
}

start_at() { date -u -d "+$LEAD sec" +%Y-%m-%dT%H:%M:%S.%NZ; }

case_merge() {
	echo "== merge: 16 runners x 600 one-second intervals"
	echo "\$ go test -run '^\$' -bench BenchmarkMerge16x600 -benchtime 5x ./internal/result"
	go test -run '^$' -bench BenchmarkMerge16x600 -benchtime 5x ./internal/result | grep -E 'Benchmark|ok'
}

case_connections() {
	sandbox
	echo "== connections: 4 runners x 250 threads, ${CONN_SECS} s"
	local start pids=() max=0 n
	start=$(start_at)
	for i in 1 2 3 4; do
		"$BIN" run oltp_point_select --target "$url" --tables=1 --table-size=10000 --threads=1000 --segment="$i/4" \
			--start-at="$start" --time="$CONN_SECS" >"$work/conn-$i.log" 2>&1 &
		pids+=($!)
	done
	while kill -0 "${pids[0]}" 2>/dev/null; do
		n=$(status Threads_connected)
		((n > max)) && max=$n
		sleep 0.2
	done
	local codes=""
	for p in "${pids[@]}"; do
		if wait "$p"; then codes+="0 "; else codes+="$? "; fi
	done
	for i in 1 2 3 4; do
		grep -E '^Segment|queries:|reconnects|errors:' "$work/conn-$i.log" | head -3 | sed "s/^/  runner $i: /"
	done
	echo "  most connections at once (Threads_connected, every 0.2 s, the sampler's own included): $max"
	echo "  Max_used_connections: $(status Max_used_connections)"
	echo "  exit codes: $codes"
}

one() { # one runner of 64 threads; prints its QPS
	"$BIN" run oltp_point_select --target "$url" --tables=1 --table-size=10000 --threads=64 --time="$SECS" \
		--json "$work/one.json" >/dev/null 2>&1
	jq .qps "$work/one.json"
}

four() { # 4 runners of 16 threads started together; prints their QPS added
	local start pids=()
	start=$(start_at)
	for i in 1 2 3 4; do
		"$BIN" run oltp_point_select --target "$url" --tables=1 --table-size=10000 --threads=64 --segment="$i/4" \
			--start-at="$start" --time="$SECS" --json "$work/four-$i.json" >/dev/null 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	jq -s 'map(.qps) | add * 100 | round / 100' "$work"/four-{1,2,3,4}.json
}

case_qps() {
	sandbox
	echo "== qps: 4 runners x 16 threads against 1 runner x 64 threads, ${SECS} s runs, $ROUNDS rounds alternately"
	local a=() b=() r
	for ((r = 1; r <= ROUNDS; r++)); do
		if ((r % 2)); then
			a+=("$(one)")
			b+=("$(four)")
		else
			b+=("$(four)")
			a+=("$(one)")
		fi
		echo "  round $r: 1x64 ${a[-1]} qps, 4x16 ${b[-1]} qps"
	done
	local ca cb
	ca=$(IFS=,; echo "${a[*]}")
	cb=$(IFS=,; echo "${b[*]}")
	echo "\$ go run ./scripts/qpscompare --control $ca --candidate $cb"
	go run ./scripts/qpscompare --control "$ca" --candidate "$cb"
}

for c in $CASES; do
	"case_$c"
done
