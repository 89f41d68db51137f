#!/usr/bin/env bash
# Benchmark of a capacity search against a local sandbox, beside the rate
# the client itself can offer.
#
# 1. The search: shakedown capacity WORKLOAD --slo SLO on one sandbox,
#    timed from the outside; the steps and their own elapsed times come
#    from its --json. Wall time over steps is the time per step, the
#    warm-up, the measurement and the cost of starting each step.
# 2. The client's ceiling: shakedown run sql with a statement the server
#    answers nearly for free (DO 1) at rising --rate, CLIENT_THREADS
#    threads, until a run is marked client-bound or its achieved rate falls
#    short of the arrivals that fell due (2%, as a capacity step judges);
#    the server's CPU over the run says whether it had any to spare (under
#    half a core: "server idle"). The last rate achieved before that
#    is the most a search can offer on this host: a capacity near it
#    measures the client, and the client-bound rule is what stops a search
#    there.
#
#   scripts/bench-capacity.sh
#   SERVER_CPUS=0 CLIENT_CPUS=1 scripts/bench-capacity.sh        # pinned
#   RATES="2000 4000 8000" SKIP_SEARCH=1 scripts/bench-capacity.sh
#
# Knobs (environment): BIN (bin/shakedown, built by make build), WORKLOAD
# (oltp_point_select), SLO (p99<=20ms), THREADS (8), TABLES (4), ROWS
# (10000), STEP (2) and WARM (1) seconds a step, CLIENT_THREADS (16),
# RATES (250 500 1000 2000 4000 8000 16000 32000 64000), RATE_TIME (3),
# SERVER_CPUS and CLIENT_CPUS (taskset lists; empty: not pinned),
# SKIP_SEARCH=1, KEEP=1 keeps the sandbox. Results: a markdown table on
# standard output, logs in a temporary directory named at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh

knobs WORKLOAD=oltp_point_select SLO="p99<=20ms" THREADS=8 TABLES=4 ROWS=10000 STEP=2 WARM=1 CLIENT_THREADS=16 \
	RATES="250 500 1000 2000 4000 8000 16000 32000 64000" RATE_TIME=3
bench_home capacity

[ "$BIN" != bin/shakedown ] || make -s build
work=$(mktemp -d /tmp/shakedown-bench-capacity-out.XXXXXX)
name=capb$$
cleanup() {
	if [ "${KEEP:-0}" != 1 ]; then
		"$BIN" sandbox down "$name" >/dev/null 2>&1 || true
		[ -z "$own_home" ] || rm -rf "$own_home"
	fi
}
trap cleanup EXIT
up=(sandbox up "$name" --url-only)
[ -z "${SERVER_CPUS:-}" ] || up+=(--cpus "$SERVER_CPUS")
url=$("$BIN" "${up[@]}")
port=$(port_of "$url")
server_pid=$(pgrep -o -f -- "--port=$port" || true)
client=("$BIN")
[ -z "${CLIENT_CPUS:-}" ] || client=(taskset -c "$CLIENT_CPUS" "$BIN")
ticks=$(getconf CLK_TCK)

echo "# shakedown $("$BIN" version | cut -d' ' -f2), $(mariadbd --version 2>/dev/null | awk '{print $3}'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "# server CPUs: ${SERVER_CPUS:-any}, client CPUs: ${CLIENT_CPUS:-any}"

if [ "${SKIP_SEARCH:-0}" != 1 ]; then
	"$BIN" prepare "$WORKLOAD" --target "$url" --tables "$TABLES" --table-size "$ROWS" --threads 4 >/dev/null
	t0=$(date +%s.%N)
	rc=0
	"${client[@]}" capacity "$WORKLOAD" --target "$url" --slo "$SLO" --threads "$THREADS" --tables "$TABLES" --table-size "$ROWS" \
		--step-time "$STEP" --step-warmup "$WARM" --json "$work/search.json" >"$work/search.out" 2>"$work/search.err" || rc=$?
	wall=$(echo "$(date +%s.%N) - $t0" | bc)
	steps=$(jq '[.targets[].steps | length] | add' "$work/search.json")
	inside=$(jq '[.targets[].steps[].elapsed_s] | add' "$work/search.json")
	echo
	echo "| search | outcome | capacity/s | probe peak/s | steps | step (warm-up + measured) | wall s | per step s | inside the steps s |"
	echo "|---|---|---|---|---|---|---|---|---|"
	jq -r --arg w "$wall" --arg n "$steps" --arg in "$inside" --arg s "$WARM s + $STEP s" --arg cmd "capacity $WORKLOAD --slo '$SLO' --threads $THREADS (exit $rc)" \
		'.targets[0] | "| `\($cmd)` | \(.outcome) | \(.capacity | floor) | \(.peak | floor) | \($n) | \($s) | \($w | tonumber | . * 10 | round / 10) | \(($w | tonumber) / ($n | tonumber) | . * 100 | round / 100) | \($in | tonumber | . * 10 | round / 10) |"' \
		"$work/search.json"
fi

echo 'DO 1;' >"$work/free.sql"
echo
echo "| offered/s | due/s | achieved/s | client CPU % of its cores | client wait % | client-bound | server CPU % of a core | limit |"
echo "|---|---|---|---|---|---|---|---|"
best=0
for rate in $RATES; do
	s0=$(proc_ticks "${server_pid:-0}")
	t0=$(date +%s.%N)
	"${client[@]}" run sql --file "$work/free.sql" --target "$url" --threads "$CLIENT_THREADS" --rate "$rate" \
		--time "$RATE_TIME" --warmup-time 1 --monitor=off --json "$work/rate-$rate.json" >"$work/rate-$rate.out" 2>&1 || true
	wall=$(echo "$(date +%s.%N) - $t0" | bc)
	s1=$(proc_ticks "${server_pid:-0}")
	server=$(awk -v d=$((s1 - s0)) -v t="$ticks" -v w="$wall" 'BEGIN{printf "%.0f", 100*d/t/w}')
	# Over the run's time, not the threads' span: under a rate they end
	# once the arrivals they took fall past it (as a capacity step counts).
	read -r due achieved cpu wait bound < <(jq -r --argjson t "$RATE_TIME" '([.time_s, $t] | max) as $s |
		[(.arrivals / $s), (.transactions / $s), .client.cpu_pct, .client.wait_pct, .client.bound] | map(tostring) | join(" ")' "$work/rate-$rate.json")
	limit=-
	short=$(awk -v a="$achieved" -v d="$due" 'BEGIN{print (a < 0.98*d) ? 1 : 0}')
	if [ "$bound" = true ]; then
		limit="client-bound"
	elif [ "$short" = 1 ] && [ "$server" -lt 50 ]; then
		limit="short of the rate, server idle"
	elif [ "$short" = 1 ]; then
		limit="short of the rate, server busy"
	fi
	printf '| %d | %.0f | %.0f | %.0f | %.0f | %s | %s | %s |\n' "$rate" "$due" "$achieved" "$cpu" "$wait" "$bound" "$server" "$limit"
	[ "$limit" = - ] || break
	best=$achieved
done
printf '\nThe client offered and achieved up to %.0f/s before the limit (logs: %s)\n' "$best" "$work"
