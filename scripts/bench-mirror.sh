#!/usr/bin/env bash
# Benchmark of shakedown mirror: what a client pays for going through the
# mirror, on two local sandboxes, the control and a candidate (a copy of
# the control's sysbench tables, made by shakedown copy).
#
# For each of WORKLOADS and THREADS_LIST, in each of ROUNDS rounds, three
# legs run one after another, their order reversed every other round:
#   direct   sysbench straight to the control
#   mirror   sysbench through shakedown mirror (a mirror started for the
#            leg, with the candidate; stopped after it with SIGTERM)
#   run      shakedown run straight to the control, for its client CPU
#            per query, the mirror's yardstick
# sysbench runs with --db-ps-mode=disable (the mirror mirrors text
# statements; prepared ones are relayed only) and --histogram, from which
# p50, p95 and p99 are read the way sysbench reads its own --percentile:
# the first bucket at which the count reaches the share. Latency is
# sysbench's per event: for oltp_point_select one statement, for
# oltp_read_only sixteen (BEGIN, 14 SELECTs, COMMIT).
#
# Figures, medians over the rounds, per workload and threads:
#   QPS ratio        mirror leg's QPS over the direct leg's
#   added p50/p95/p99  mirror leg's percentile less the direct leg's, us
#   mirror CPU       the mirror process's utime+stime (/proc/PID/stat) from
#                    sysbench's start to its end, over the statements the
#                    mirror counts through (its --json summary), us
#   run client CPU   shakedown run's user+sys (GNU time) over its queries, us
#   dropped          reads the mirror dropped (a full queue or the candidate
#                    down) over the reads it meant to mirror
#
#   scripts/bench-mirror.sh
#   ROUNDS=2 SECONDS_PER_RUN=5 scripts/bench-mirror.sh
#   THREADS_LIST="16 64" WORKLOADS=oltp_point_select scripts/bench-mirror.sh
#
# Knobs (environment): ROUNDS (3), SECONDS_PER_RUN (10), THREADS_LIST
# (1 16 64), WORKLOADS (oltp_read_only oltp_point_select), TABLES (4), ROWS
# (100000, per table), QUEUE (64, the mirror's --queue), LEGS (direct
# mirror run), SETTLE (120: after the prepare and the copy, the most
# seconds to wait while the servers write their dirty pages; 0: no wait),
# BIN (bin/shakedown, built by make; a BIN given is used as it is,
# unbuilt), KEEP=1 keeps the sandboxes and the work directory.
#
# Where it runs: with 8 CPUs or more, each of the four (the control, the
# candidate, the mirror, the clients) gets a quarter of them, the servers
# through sandbox up --cpus, the mirror and the clients under taskset;
# CONTROL_CPUS, CANDIDATE_CPUS, MIRROR_CPUS and CLIENT_CPUS set each
# (PLACE=shared: no binding at all). Under 8 CPUs everything shares them.
#
# Goals (issue #46): at 16 and 64 threads, with the mirror on cores of its
# own, at least 0.9x the direct QPS; added p50 at 1 thread (point select)
# at most 50 us; the mirror's CPU per statement at most 1.0x run's client
# CPU per query.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh

knobs ROUNDS=3 SECONDS_PER_RUN=10 "THREADS_LIST=1 16 64" "WORKLOADS=oltp_read_only oltp_point_select" TABLES=4 ROWS=100000 \
	QUEUE=64 "LEGS=direct mirror run" SETTLE=120 PLACE=auto
whole_numbers bench-mirror ROUNDS SECONDS_PER_RUN TABLES ROWS QUEUE
[[ $SETTLE =~ ^[0-9]+$ ]] || { echo "bench-mirror: SETTLE=$SETTLE: want a whole number" >&2; exit 2; }
for l in $LEGS; do
	case $l in direct | mirror | run) ;; *) echo "bench-mirror: LEGS: $l: want direct, mirror or run" >&2; exit 2 ;; esac
done
cmdline="ROUNDS=$ROUNDS SECONDS_PER_RUN=$SECONDS_PER_RUN THREADS_LIST=\"$THREADS_LIST\" WORKLOADS=\"$WORKLOADS\" TABLES=$TABLES ROWS=$ROWS QUEUE=$QUEUE scripts/bench-mirror.sh"

ncpu=$(nproc)
if [ "$PLACE" = auto ] && [ "$ncpu" -ge 8 ]; then
	q=$((ncpu / 4))
	CONTROL_CPUS=${CONTROL_CPUS:-0-$((q - 1))}
	CANDIDATE_CPUS=${CANDIDATE_CPUS:-$q-$((2 * q - 1))}
	MIRROR_CPUS=${MIRROR_CPUS:-$((2 * q))-$((3 * q - 1))}
	CLIENT_CPUS=${CLIENT_CPUS:-$((3 * q))-$((ncpu - 1))}
elif [ "$PLACE" != auto ]; then
	CONTROL_CPUS= CANDIDATE_CPUS= MIRROR_CPUS= CLIENT_CPUS=
fi
CONTROL_CPUS=${CONTROL_CPUS:-} CANDIDATE_CPUS=${CANDIDATE_CPUS:-} MIRROR_CPUS=${MIRROR_CPUS:-} CLIENT_CPUS=${CLIENT_CPUS:-}
# own_cores: whether the mirror has CPUs that nothing else is bound to
# (the QPS goal's condition).
own_cores=no
[ -z "$MIRROR_CPUS" ] || [ -z "$CONTROL_CPUS" ] || [ -z "$CANDIDATE_CPUS" ] || [ -z "$CLIENT_CPUS" ] || own_cores=yes
pin_mirror=()
[ -z "$MIRROR_CPUS" ] || pin_mirror=(taskset -c "$MIRROR_CPUS")
pin_client=()
[ -z "$CLIENT_CPUS" ] || pin_client=(taskset -c "$CLIENT_CPUS")

names=("mctl$$" "mcand$$")
work=
mpid= # the mirror, while it runs
cleanup() {
	local n
	if [ -n "$mpid" ] && kill -0 "$mpid" 2>/dev/null; then
		kill -TERM "$mpid" 2>/dev/null || true
		wait "$mpid" 2>/dev/null || true
	fi
	if [ "${KEEP:-0}" = 1 ]; then
		echo "kept: $work, sandboxes ${names[*]} in $SHAKEDOWN_HOME" >&2
		return
	fi
	for n in "${names[@]}"; do
		"$BIN" sandbox down "$n" >/dev/null 2>&1 || true
	done
	[ -z "$own_home" ] || rm -rf "$own_home"
	[ -z "$work" ] || rm -rf "$work"
}
build=1
[ -z "${BIN:-}" ] || build=
bench_home mirror
trap cleanup EXIT
bash scripts/deps.sh
if [ ! -x /usr/bin/time ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null
fi
[ -z "$build" ] || make -s build
work=$(mktemp -d /tmp/shakedown-bench-mirror-out.XXXXXX)
ulimit -n 65535 2>/dev/null || true

up() { # up NAME CPUS: a sandbox's URL
	local place=()
	[ -z "$2" ] || place=(--cpus "$2")
	"$BIN" sandbox up "$1" --url-only "${place[@]}"
}
ctl_url=$(up "${names[0]}" "$CONTROL_CPUS")
cand_url=$(up "${names[1]}" "$CANDIDATE_CPUS")
cp=$(port_of "$ctl_url")
dp=$(port_of "$cand_url")
sq() { local p=$1; shift; mariadb -ushakedown -h127.0.0.1 -P"$p" -N -B "$@"; }

echo "# command: $cmdline"
echo "# date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "# machine: $ncpu cores (nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# shakedown $("$BIN" version | cut -d' ' -f2-), $(sysbench --version), server $(sq "$cp" -e 'SELECT VERSION()')"
echo "# placement: control ${CONTROL_CPUS:-shared}, candidate ${CANDIDATE_CPUS:-shared}, mirror ${MIRROR_CPUS:-shared}, clients ${CLIENT_CPUS:-shared}"

start=$(date +%s)
"$BIN" prepare oltp_read_only --target "$ctl_url" --tables "$TABLES" --table-size "$ROWS" --threads 4 >/dev/null
"$BIN" copy "$ctl_url" "$cand_url" --allow-write --replace --threads 4 --no-verify --progress 0 >"$work/copy.out" 2>&1 ||
	{ cat "$work/copy.out" >&2; echo "bench-mirror: the copy to the candidate failed" >&2; exit 1; }
echo "# data ready in $(($(date +%s) - start)) s: $TABLES x $ROWS rows on the control, copied to the candidate"

# settle: both servers write the pages the prepare and the copy left dirty
# (at most SETTLE seconds), so that no leg shares the CPU with them.
settle() {
	[ "$SETTLE" -gt 0 ] || return 0
	local t0=$SECONDS p d busy
	declare -A was=()
	for p in "$cp" "$dp"; do
		was[$p]=$(sq "$p" -e "SELECT CONCAT('SET GLOBAL innodb_max_dirty_pages_pct = ', @@innodb_max_dirty_pages_pct, ', GLOBAL innodb_io_capacity = ', @@innodb_io_capacity, ', GLOBAL innodb_io_capacity_max = ', @@innodb_io_capacity_max)")
		sq "$p" -e "SET GLOBAL innodb_io_capacity_max = 100000, GLOBAL innodb_io_capacity = 100000, GLOBAL innodb_max_dirty_pages_pct = 0"
	done
	while :; do
		busy=0
		for p in "$cp" "$dp"; do
			d=$(sq "$p" -e "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'" | awk '{print $2}')
			[ "$d" -lt 200 ] || busy=1
		done
		[ "$busy" = 1 ] && [ $((SECONDS - t0)) -lt "$SETTLE" ] || break
		sleep 1
	done
	for p in "$cp" "$dp"; do sq "$p" -e "${was[$p]}"; done
	echo "# settled for $((SECONDS - t0)) s"
}
settle

# pcts LOG: p50 p95 p99 in ms from sysbench's latency histogram in LOG:
# for each share, the first bucket at which the count reaches it.
pcts() {
	awk '/Latency histogram/ {h = 1; next}
		h && /^ *[0-9.]+ \|/ {v[++n] = $1; c[n] = $NF; total += $NF; next}
		h && n && !/^ *[0-9.]+ \|/ {h = 0}
		END {
			split("0.50 0.95 0.99", ps, " ")
			for (k = 1; k <= 3; k++) {
				cum = 0; out = "0"
				for (i = 1; i <= n; i++) { cum += c[i]; if (cum >= ps[k] * total) { out = v[i]; break } }
				printf "%s%s", out, (k < 3 ? " " : "\n")
			}
		}' "$1"
}
errors_of() { awk '/^ *errors: /{print $2}' "$1" | tail -1; }

# sb PORT WORKLOAD THREADS LOG: sysbench to PORT, its output in LOG.
sb() {
	"${pin_client[@]}" sysbench "$2" --mysql-host=127.0.0.1 "--mysql-port=$1" --mysql-user=shakedown --mysql-db=sbtest \
		"--tables=$TABLES" "--table-size=$ROWS" "--threads=$3" "--time=$SECONDS_PER_RUN" --db-ps-mode=disable \
		--histogram=on --percentile=95 --report-interval=0 run >"$4" 2>&1 || { cat "$4" >&2; echo "bench-mirror: sysbench failed" >&2; exit 1; }
}

# json_num FILE KEY: a top-level number of the mirror's --json summary.
json_num() { sed -n "s/^  \"$2\": \([0-9.]*\).*/\1/p" "$1" | head -1; }

res=$work/results.tsv
printf 'leg\tworkload\tthreads\tround\tqps\tp50\tp95\tp99\terrors\tcpu_us\tstatements\tdropped_pct\n' >"$res"
hz=$(getconf CLK_TCK)

leg_direct() { # WORKLOAD THREADS ROUND
	local log=$work/direct-$1-$2-$3.log
	sb "$cp" "$1" "$2" "$log"
	printf 'direct\t%s\t%s\t%s\t%s\t%s\t%s\t-\t0\t-\n' "$1" "$2" "$3" "$(qps_of "$log")" "$(pcts "$log" | tr ' ' '\t')" "$(errors_of "$log")" >>"$res"
	echo "#   direct: $(qps_of "$log") qps, p50/p95/p99 $(pcts "$log") ms"
}

leg_mirror() {
	local log=$work/mirror-$1-$2-$3.log mo=$work/mirror-$1-$2-$3.out me=$work/mirror-$1-$2-$3.err mj=$work/mirror-$1-$2-$3.json
	local addr port t0 t1 rc stmts mirrored dropped differing cpu_us drop_pct deadline=$((SECONDS + 30))
	rm -f "$mj"
	: >"$mo"
	: >"$me"
	"${pin_mirror[@]}" "$BIN" mirror --listen 127.0.0.1:0 --control "$ctl_url" --candidate "cand=$cand_url" --queue "$QUEUE" \
		--progress 1h --snapshot 0 --json "$mj" >"$mo" 2>"$me" &
	mpid=$!
	until addr=$(sed -n 's/^mirror: listening on \([^;]*\);.*/\1/p' "$me") && [ -n "$addr" ]; do
		kill -0 "$mpid" 2>/dev/null || { cat "$me" >&2; echo "bench-mirror: the mirror ended" >&2; exit 1; }
		[ "$SECONDS" -lt "$deadline" ] || { cat "$me" >&2; echo "bench-mirror: the mirror did not listen within 30 s" >&2; exit 1; }
		sleep 0.1
	done
	port=$(port_of "mysql://x@$addr/")
	t0=$(proc_ticks "$mpid")
	sb "$port" "$1" "$2" "$log"
	t1=$(proc_ticks "$mpid")
	kill -TERM "$mpid"
	rc=0
	wait "$mpid" || rc=$?
	mpid=
	[ "$rc" = 0 ] || [ "$rc" = 3 ] || { cat "$me" >&2; echo "bench-mirror: the mirror exited $rc" >&2; exit 1; }
	stmts=$(json_num "$mj" statements_through)
	mirrored=$(json_num "$mj" mirrored)
	dropped=$(json_num "$mj" dropped)
	differing=$(json_num "$mj" differing)
	cpu_us=$(awk -v t=$((t1 - t0)) -v hz="$hz" -v n="$stmts" 'BEGIN{if (n > 0) printf "%.2f", t / hz / n * 1e6; else print 0}')
	drop_pct=$(awk -v d="$dropped" -v m="$mirrored" 'BEGIN{if (d + m > 0) printf "%.1f", d / (d + m) * 100; else print 0}')
	printf 'mirror\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$(qps_of "$log")" "$(pcts "$log" | tr ' ' '\t')" "$(errors_of "$log")" \
		"$cpu_us" "$stmts" "$drop_pct" >>"$res"
	echo "#   mirror: $(qps_of "$log") qps, p50/p95/p99 $(pcts "$log") ms; $stmts statements through (sysbench: $(queries_of "$log")), CPU $cpu_us us each; $mirrored mirrored, $dropped dropped ($drop_pct%), $differing differing"
}

leg_run() {
	local log=$work/run-$1-$2-$3.log tim=$work/run-$1-$2-$3.time u s q cpu_us
	/usr/bin/time -o "$tim" -f "%U %S" "${pin_client[@]}" "$BIN" run "$1" --target "$ctl_url" --tables "$TABLES" --table-size "$ROWS" \
		--threads "$2" --time "$SECONDS_PER_RUN" --db-ps-mode disable >"$log" 2>&1 || { cat "$log" >&2; echo "bench-mirror: shakedown run failed" >&2; exit 1; }
	read -r u s <"$tim"
	q=$(queries_of "$log")
	cpu_us=$(awk -v u="$u" -v s="$s" -v n="${q:-0}" 'BEGIN{if (n > 0) printf "%.2f", (u + s) / n * 1e6; else print 0}')
	printf 'run\t%s\t%s\t%s\t%s\t-\t-\t-\t0\t%s\t%s\t-\n' "$1" "$2" "$3" "$(qps_of "$log")" "$cpu_us" "${q:-0}" >>"$res"
	echo "#   run: $(qps_of "$log") qps, client CPU $cpu_us us a query"
}

for r in $(seq 1 "$ROUNDS"); do
	for w in $WORKLOADS; do
		for t in $THREADS_LIST; do
			# shellcheck disable=SC2086 # LEGS is a list
			order=$(round_order "$r" $LEGS | tr '\n' ' ')
			echo "# round $r: $w, $t threads: ${order% } (load average $(cut -d' ' -f1 /proc/loadavg))"
			for l in $order; do "leg_$l" "$w" "$t" "$r"; done
		done
	done
done

# col LEG WORKLOAD THREADS N: the median of column N over the rounds.
col() { awk -F'\t' -v l="$1" -v w="$2" -v t="$3" -v n="$4" 'NR > 1 && $1 == l && $2 == w && $3 == t && $n != "-" {print $n}' "$res" | median; }
# added A B: (A - B) in us from ms, to one place.
added() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%+.0f", (a - b) * 1000}'; }

echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "Medians over $ROUNDS rounds of ${SECONDS_PER_RUN} s (latency per sysbench event, ms; added: mirror less direct, us):"
echo
echo "| workload | threads | direct QPS | mirror QPS | ratio | p50 direct / mirror (added) | p95 (added) | p99 (added) | mirror CPU us/stmt | run client CPU us/query | ratio | dropped | client errors |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
goal_qps=() goal_p50= goal_cpu=()
for w in $WORKLOADS; do
	for t in $THREADS_LIST; do
		dq=$(col direct "$w" "$t" 5); mq=$(col mirror "$w" "$t" 5)
		d50=$(col direct "$w" "$t" 6); m50=$(col mirror "$w" "$t" 6)
		d95=$(col direct "$w" "$t" 7); m95=$(col mirror "$w" "$t" 7)
		d99=$(col direct "$w" "$t" 8); m99=$(col mirror "$w" "$t" 8)
		mc=$(col mirror "$w" "$t" 10); rcpu=$(col run "$w" "$t" 10)
		errs=$(awk -F'\t' -v w="$w" -v t="$t" 'NR > 1 && $1 == "mirror" && $2 == w && $3 == t {n += $9} END {print n + 0}' "$res")
		printf '| %s | %s | %.0f | %.0f | %s | %.3f / %.3f (%s) | %.3f / %.3f (%s) | %.3f / %.3f (%s) | %.2f | %.2f | %s | %.1f%% | %s |\n' "$w" "$t" "$dq" "$mq" "$(ratio "$mq" "$dq")" \
			"$d50" "$m50" "$(added "$m50" "$d50")" "$d95" "$m95" "$(added "$m95" "$d95")" "$d99" "$m99" "$(added "$m99" "$d99")" \
			"$mc" "$rcpu" "$(ratio "$mc" "$rcpu")" "$(col mirror "$w" "$t" 12)" "$errs"
		[ "$t" != 16 ] && [ "$t" != 64 ] || goal_qps+=("$w/$t:$(ratio "$mq" "$dq")")
		[ "$t" != 1 ] || [ "$w" != oltp_point_select ] || goal_p50=$(added "$m50" "$d50")
		goal_cpu+=("$w/$t:$(ratio "$mc" "$rcpu")")
	done
done
echo
# verdict LIST OP BOUND: met where every NAME:VALUE in LIST holds VALUE OP BOUND.
verdict() {
	local op=$2 bound=$3 v bad=()
	for v in $1; do
		awk -v x="${v##*:}" -v b="$bound" -v op="$op" 'BEGIN{exit !(x != "n/a" && (op == ">=" ? x >= b : x <= b))}' || bad+=("${v%%:*}")
	done
	[ ${#bad[@]} -eq 0 ] && echo "met" || echo "NOT met at ${bad[*]}"
}
if [ ${#goal_qps[@]} -eq 0 ]; then
	echo "goal: 0.9x direct QPS at 16 and 64 threads: not measured (THREADS_LIST has neither)"
elif [ "$own_cores" = yes ]; then
	echo "goal: 0.9x direct QPS at 16 and 64 threads, the mirror on cores of its own: ${goal_qps[*]}: $(verdict "${goal_qps[*]}" '>=' 0.9)"
else
	echo "goal: 0.9x direct QPS at 16 and 64 threads: cannot be judged here, the mirror shares its cores with the servers and the clients (${goal_qps[*]})"
fi
if [ -n "$goal_p50" ]; then
	echo "goal: added p50 at 1 thread (oltp_point_select) at most 50 us: $goal_p50 us: $(verdict "p50:${goal_p50#+}" '<=' 50)"
else
	echo "goal: added p50 at 1 thread: not measured (needs oltp_point_select at 1 thread)"
fi
echo "goal: the mirror's CPU per statement at most 1.0x run's client CPU per query: ${goal_cpu[*]}: $(verdict "${goal_cpu[*]}" '<=' 1.0)"
