#!/usr/bin/env bash
# Benchmark of shakedown's follower (copy --follow) beside a native MariaDB
# parallel replica (slave_parallel_threads=4, slave_parallel_mode=optimistic)
# of one source under shakedown run oltp_write_only, on three local
# sandboxes: the source (binary log on, binlog_format=ROW), the follower's
# target and the replica, each a server of its own.
#
# Each round both copies start from the same data: the source is quiet
# while shakedown copy copies it to the follower's target (--follow: the
# follower then applies the source's binary log from the snapshot's
# position) and to the replica's server (then SET GLOBAL gtid_slave_pos to
# the copy's GTID position, CHANGE MASTER TO ... MASTER_USE_GTID=slave_pos,
# START SLAVE); which of the two starts first turns each round, and the
# script checks that the source's position did not move between the two
# snapshots. Then the load runs for SECONDS_PER_RUN seconds while both
# apply it.
#
# Lag is measured the same way on both sides by scripts/followlag: a
# heartbeat row on the source (sbtest.followlag_heartbeat, in the followed
# database) set to the source's NOW(6) every 100 ms, read on each side every
# 100 ms; lag = the time of the reply less the value seen. Figures per round
# and medians over the rounds, per side:
#   lag p50/p99/max   during the load
#   catch-up          from the load's end to the side seeing the last
#                     heartbeat (written when the load ended)
#   rows/s            the source's row changes in the load (Handler_write,
#                     Handler_update, Handler_delete) over the time from
#                     the load's start to the catch-up
#   client CPU/row    the follower process's utime+stime (/proc/PID/stat)
#                     from the load's start to its catch-up, over the rows
#                     its summary says it applied; the replica has no client
#   server CPU/row    the side's server process, the same way, over the
#                     source's row changes
#   CPU/row           client and server together: what applying a row
#                     costs the machine
#   reported lag      what each says of itself, read beside the heartbeat:
#                     the follower's saved lag_seconds (its progress line's
#                     lag), the replica's Seconds_Behind_Master
# After each round the three servers' CHECKSUM TABLE must agree.
#
#   scripts/bench-follow.sh
#   ROUNDS=1 SECONDS_PER_RUN=20 scripts/bench-follow.sh
#   TABLES=8 ROWS=1000000 scripts/bench-follow.sh
#
# Knobs (environment): ROUNDS (3), SECONDS_PER_RUN (60; SECONDS=N in the
# environment is taken too: bash's own clock starts at N, read here before
# it moves), THREADS (16, the load's), TABLES (4), ROWS (100000, per
# table), WORKERS (4, the follower's --workers), PARALLEL (4, the replica's
# slave_parallel_threads), MODE (optimistic, its slave_parallel_mode),
# COPY_THREADS (4), CATCHUP_TIMEOUT (600 s), SETTLE (120: before each load,
# the most seconds to wait while the servers write the pages the copies
# left dirty, see settle; 0: no wait), BIN (bin/shakedown, built by make;
# a BIN given is used as it is, unbuilt), KEEP=1 keeps the sandboxes and
# the work directory.
#
# Goal (the issue's): the follower's catch-up at most 1.0x the replica's,
# its lag p99 under 2 s.
set -euo pipefail
# Before anything else: $SECONDS is 0 here unless the environment set it.
secs_env=$SECONDS
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh

[ "$secs_env" -eq 0 ] || SECONDS_PER_RUN=${SECONDS_PER_RUN:-$secs_env}
knobs ROUNDS=3 SECONDS_PER_RUN=60 THREADS=16 TABLES=4 ROWS=100000 WORKERS=4 PARALLEL=4 MODE=optimistic \
	COPY_THREADS=4 CATCHUP_TIMEOUT=600 SETTLE=120
whole_numbers bench-follow ROUNDS SECONDS_PER_RUN THREADS TABLES ROWS WORKERS PARALLEL COPY_THREADS CATCHUP_TIMEOUT
[[ $SETTLE =~ ^[0-9]+$ ]] || { echo "bench-follow: SETTLE=$SETTLE: want a whole number" >&2; exit 2; }
cmdline="ROUNDS=$ROUNDS SECONDS_PER_RUN=$SECONDS_PER_RUN THREADS=$THREADS TABLES=$TABLES ROWS=$ROWS WORKERS=$WORKERS PARALLEL=$PARALLEL MODE=$MODE COPY_THREADS=$COPY_THREADS scripts/bench-follow.sh"

names=("fsrc$$" "ftgt$$" "frep$$")
work=
fpid= # the follower, while it runs
cleanup() {
	local n
	if [ -n "$fpid" ] && kill -0 "$fpid" 2>/dev/null; then
		kill -TERM "$fpid" 2>/dev/null || true
		wait "$fpid" 2>/dev/null || true
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
# BIN given: that binary as it is (a build of another revision, while
# this tree does not build); else bin/shakedown, built here.
build=1
[ -z "${BIN:-}" ] || build=
bench_home follow
trap cleanup EXIT
bash scripts/deps.sh
[ -z "$build" ] || make -s build
work=$(mktemp -d /tmp/shakedown-bench-follow-out.XXXXXX)
go build -o "$work/followlag" ./scripts/followlag

src_url=$("$BIN" sandbox up "${names[0]}" --url-only --set log_bin=ON --set binlog_format=ROW --set server_id=1)
tgt_url=$("$BIN" sandbox up "${names[1]}" --url-only --set server_id=2)
rep_url=$("$BIN" sandbox up "${names[2]}" --url-only --set server_id=3 \
	--set "slave_parallel_threads=$PARALLEL" --set "slave_parallel_mode=$MODE")
sp=$(port_of "$src_url")
tp=$(port_of "$tgt_url")
rp=$(port_of "$rep_url")
sq() { local p=$1; shift; mariadb -ushakedown -h127.0.0.1 -P"$p" -N -B "$@"; }
server_pid() { cat "$SHAKEDOWN_HOME/sandboxes/$1/mysqld.pid"; }
binlog_at() { sq "$sp" -e "SHOW MASTER STATUS" | awk '{print $1 ":" $2}'; }
# src_rows: the rows the source's handlers have written, changed and
# deleted so far (MariaDB counts internal temporary tables apart, in
# Handler_tmp_*).
src_rows() { sq "$sp" -e "SHOW GLOBAL STATUS WHERE Variable_name IN ('Handler_write', 'Handler_update', 'Handler_delete')" | awk '{n += $2} END {print n + 0}'; }

echo "# command: $cmdline"
echo "# date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "# machine: $(nproc) cores (nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# shakedown $("$BIN" version | cut -d' ' -f2-), server $(sq "$sp" -e 'SELECT VERSION()')"
echo "# load: $BIN run oltp_write_only --tables $TABLES --table-size $ROWS --threads $THREADS --time $SECONDS_PER_RUN"
echo "# follower: $BIN copy SRC TGT --allow-write --replace --threads $COPY_THREADS --follow --workers $WORKERS (batch rows: its default)"
echo "# replica: slave_parallel_threads=$PARALLEL slave_parallel_mode=$MODE, MASTER_USE_GTID=slave_pos; binary log off on it and on the follower's target"

start=$(date +%s)
"$BIN" prepare oltp_write_only --target "$src_url" --tables "$TABLES" --table-size "$ROWS" --threads 4 >/dev/null
sq "$sp" sbtest -e "CREATE TABLE followlag_heartbeat (id INT PRIMARY KEY, ts DATETIME(6) NOT NULL); INSERT INTO followlag_heartbeat VALUES (1, NOW(6))"
echo "# data ready in $(($(date +%s) - start))s"
tables=$(seq -f 'sbtest%g' -s, 1 "$TABLES"),followlag_heartbeat

# wait_for WHAT SECS CMD...: runs CMD every 0.2 s until it succeeds, at
# most SECS seconds, else names WHAT and fails.
wait_for() {
	local what=$1 secs=$2 deadline=$((SECONDS + $2))
	shift 2
	until "$@"; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			echo "bench-follow: $what: not within $secs s" >&2
			return 1
		fi
		sleep 0.2
	done
}

# start_follower R: the follower's copy, then its following, in the
# background (fpid); returns once the copy has printed its position, with
# that position in at. (Not run in $(...): the follower must be this
# shell's child.)
start_follower() {
	local out=$work/follower-$1.out err=$work/follower-$1.err
	sq "$tp" -e "DROP DATABASE IF EXISTS shakedown_follow"
	: >"$out"
	"$BIN" copy "$src_url" "$tgt_url" --allow-write --replace --threads "$COPY_THREADS" --follow \
		--workers "$WORKERS" --server-id 100 --progress 1s >"$out" 2>"$err" &
	fpid=$!
	wait_for "the follower's copy" 600 follower_copied "$out" "$err"
	at=$(sed -n 's/^source position: \([^ ]*\) .*/\1/p' "$out")
}

# follower_copied OUT ERR: whether the follower's copy has printed its
# position on OUT; exits, showing OUT and ERR, where the follower ended.
follower_copied() {
	kill -0 "$fpid" 2>/dev/null || { cat "$1" "$2" >&2; echo "bench-follow: the follower ended" >&2; exit 1; }
	grep -q '^source position: ' "$1"
}

# replica_running: whether both the replica's threads run.
replica_running() { [ "$(mariadb -ushakedown -h127.0.0.1 -P"$rp" -e 'SHOW SLAVE STATUS\G' | grep -cE 'Slave_(IO|SQL)_Running: Yes')" = 2 ]; }

# start_replica R: the replica's copy, then its replication from the
# copy's GTID position; returns once both its threads run, with the copy's
# position in at.
start_replica() {
	local out=$work/replica-$1.out gtid
	sq "$rp" -e "STOP SLAVE; RESET SLAVE ALL" 2>/dev/null || true
	"$BIN" copy "$src_url" "$rep_url" --allow-write --replace --threads "$COPY_THREADS" --no-verify --progress 0 >"$out" 2>"$work/replica-$1.err" ||
		{ cat "$out" "$work/replica-$1.err" >&2; echo "bench-follow: the replica's copy failed" >&2; exit 1; }
	gtid=$(sed -n 's/^source position: .* gtid "\(.*\)"$/\1/p' "$out")
	[ -n "$gtid" ] || { cat "$out" >&2; echo "bench-follow: the replica's copy printed no GTID position" >&2; exit 1; }
	sq "$rp" -e "SET GLOBAL gtid_slave_pos = '$gtid'; CHANGE MASTER TO MASTER_HOST = '127.0.0.1', MASTER_PORT = $sp,
		MASTER_USER = 'shakedown', MASTER_PASSWORD = '', MASTER_USE_GTID = slave_pos; START SLAVE"
	wait_for "the replica's threads" 60 replica_running
	at=$(sed -n 's/^source position: \([^ ]*\) .*/\1/p' "$out")
}

# settle: has every server write the pages the copies (and the last
# round's load) left dirty, before the load, so that no side starts it
# with a backlog of writes the others lack: innodb_max_dirty_pages_pct at
# 0 and the I/O capacity raised until the dirty pages are few (at most
# SETTLE seconds), then both as they were.
# Left alone, MariaDB 10.11 keeps such pages dirty while idle and writes
# them under the load's redo pressure instead.
settle() {
	[ "$SETTLE" -gt 0 ] || return 0
	local t0=$SECONDS p d busy
	declare -A was=() left=()
	for p in "$sp" "$tp" "$rp"; do
		was[$p]=$(sq "$p" -e "SELECT CONCAT('SET GLOBAL innodb_max_dirty_pages_pct = ', @@innodb_max_dirty_pages_pct,
			', GLOBAL innodb_io_capacity = ', @@innodb_io_capacity, ', GLOBAL innodb_io_capacity_max = ', @@innodb_io_capacity_max)")
		sq "$p" -e "SET GLOBAL innodb_io_capacity_max = 100000, GLOBAL innodb_io_capacity = 100000, GLOBAL innodb_max_dirty_pages_pct = 0"
	done
	while :; do
		busy=0
		for p in "$sp" "$tp" "$rp"; do
			d=$(sq "$p" -e "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'" | awk '{print $2}')
			left[$p]=$d
			[ "$d" -lt 200 ] || busy=1
		done
		[ "$busy" = 1 ] && [ $((SECONDS - t0)) -lt "$SETTLE" ] || break
		sleep 1
	done
	for p in "$sp" "$tp" "$rp"; do
		sq "$p" -e "${was[$p]}"
	done
	echo "#   settled for $((SECONDS - t0)) s: dirty pages left: source ${left[$sp]}, follower's target ${left[$tp]}, replica ${left[$rp]}"
}

# field LINE KEY: the value of KEY=VALUE in a followlag line.
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

res=$work/results.tsv
printf 'side\tround\tlag_p50\tlag_p99\tlag_max\tcatchup\trows_per_s\tclient_us_per_row\tserver_us_per_row\trep_p50\trep_p99\trep_max\tall_us_per_row\n' >"$res"
for r in $(seq 1 "$ROUNDS"); do
	order=$(round_order "$r" follower replica | tr '\n' ' ')
	echo "# round $r: starts ${order% }"
	at0=$(binlog_at)
	for s in $order; do
		"start_$s" "$r"
		[ "$at" = "$at0" ] || { echo "bench-follow: the $s's copy is at $at, the source was at $at0 before the copies" >&2; exit 1; }
	done
	[ "$(binlog_at)" = "$at0" ] || { echo "bench-follow: the source moved during the copies" >&2; exit 1; }
	echo "#   both copies at the source's $at0"
	settle

	rows0=$(src_rows)
	lagrc=0
	"$work/followlag" --source "$src_url" \
		--side follower="$tgt_url" --reported follower=follow --cpu "follower/client=$fpid" --cpu "follower/server=$(server_pid "${names[1]}")" \
		--side replica="$rep_url" --reported replica=slave --cpu "replica/server=$(server_pid "${names[2]}")" \
		--catchup-timeout "${CATCHUP_TIMEOUT}s" --load-log "$work/load-$r.log" -- \
		"$BIN" run oltp_write_only --target "$src_url" --tables "$TABLES" --table-size "$ROWS" --threads "$THREADS" --time "$SECONDS_PER_RUN" \
		>"$work/lag-$r.txt" 2>"$work/lag-$r.err" || lagrc=$?
	rows=$(($(src_rows) - rows0))
	if [ "$lagrc" != 0 ]; then
		cat "$work/lag-$r.txt" "$work/lag-$r.err" >&2
		tail -20 "$work/load-$r.log" >&2 2>/dev/null || true
		echo "bench-follow: round $r: followlag failed ($lagrc)" >&2
		exit 1
	fi
	sed 's/^/#   followlag: /' "$work/lag-$r.err"

	# The follower's summary comes on its exit.
	kill -TERM "$fpid"
	frc=0
	wait "$fpid" || frc=$?
	fpid=
	fout=$work/follower-$r.out
	[ "$frc" = 0 ] || { tail -20 "$fout" "$work/follower-$r.err" >&2; echo "bench-follow: round $r: the follower exited $frc" >&2; exit 1; }
	frows=$(sed -nE 's/.* ([0-9]+) rows applied in .*/\1/p' "$fout" | tail -1)
	sq "$rp" -e "STOP SLAVE"

	# The three servers agree once both sides have caught up.
	for p in "$sp" "$tp" "$rp"; do sq "$p" sbtest -e "CHECKSUM TABLE $tables" >"$work/sum-$p"; done
	differ=()
	cmp -s "$work/sum-$sp" "$work/sum-$tp" || differ+=("the follower's target")
	cmp -s "$work/sum-$sp" "$work/sum-$rp" || differ+=("the replica")
	equal=yes
	[ "${#differ[@]}" -eq 0 ] || equal="NO: ${differ[*]} differ from the source"

	load=$(grep '^load ' "$work/lag-$r.txt")
	tps=$(awk '/^ *transactions: /{gsub(/\(/,"",$3); print $3}' "$work/load-$r.log" | tail -1)
	lsecs=$(awk -v a="$(field "$load" start)" -v b="$(field "$load" end)" 'BEGIN{printf "%.1f", b - a}')
	echo "#   load: ${tps:-?} transactions/s for ${lsecs} s, $rows rows changed on the source ($(awk -v n="$rows" -v s="$lsecs" 'BEGIN{printf "%.0f", n / s}') rows/s); the follower applied ${frows:-?} rows; tables equal: $equal"
	for s in follower replica; do
		line=$(grep "^side $s " "$work/lag-$r.txt")
		caught=$(field "$line" caught)
		span=$(awk -v a="$(field "$load" start)" -v b="$(field "$line" caught_at)" 'BEGIN{print b - a}')
		rps=$(awk -v n="$rows" -v s="$span" -v c="$caught" 'BEGIN{if (c == 1 && s > 0) printf "%.0f", n / s; else print 0}')
		server_us=$(awk -v c="$(field "$line" cpu.server)" -v n="$rows" 'BEGIN{if (n > 0) printf "%.2f", c / n * 1e6; else print 0}')
		client_us=-
		[ "$s" = replica ] || client_us=$(awk -v c="$(field "$line" cpu.client)" -v n="${frows:-0}" 'BEGIN{if (n > 0) printf "%.2f", c / n * 1e6; else print 0}')
		all_us=$(awk -v c="$client_us" -v s="$server_us" 'BEGIN{printf "%.2f", (c == "-" ? 0 : c) + s}')
		catchup=$(field "$line" catchup)
		[ "$caught" = 1 ] || catchup=$CATCHUP_TIMEOUT
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$s" "$r" "$(field "$line" p50)" "$(field "$line" p99)" "$(field "$line" max)" \
			"$catchup" "$rps" "$client_us" "$server_us" "$(field "$line" reported_p50)" "$(field "$line" reported_p99)" "$(field "$line" reported_max)" "$all_us" >>"$res"
		printf '#   %-8s lag p50 %s s, p99 %s s, max %s s (%s samples); catch-up %s s%s; %s rows/s; CPU us/row client %s, server %s; it reports lag p50 %s s, p99 %s s, max %s s\n' \
			"$s" "$(field "$line" p50)" "$(field "$line" p99)" "$(field "$line" max)" "$(field "$line" samples)" "$catchup" \
			"$([ "$caught" = 1 ] || echo " (not caught up: the timeout)")" "$rps" "$client_us" "$server_us" \
			"$(field "$line" reported_p50)" "$(field "$line" reported_p99)" "$(field "$line" reported_max)"
	done
	reconnects=$(grep -c 'applying the batch again' "$work/follower-$r.err" || true)
	echo "#   follower: $(grep -m1 -E '^  lag p50' "$fout" | sed 's/^ *//') by its own summary; $reconnects batches applied again; its last progress line: $(grep '^follow: ' "$work/follower-$r.err" | tail -1)"
	[ "$equal" = yes ] || { echo "bench-follow: round $r: tables equal: $equal" >&2; exit 1; }
done

# col SIDE N: the median of column N over SIDE's rounds.
col() { awk -F'\t' -v s="$1" -v n="$2" 'NR > 1 && $1 == s && $n != "-" {print $n}' "$res" | median; }
echo
echo "Medians over $ROUNDS rounds (lag and catch-up in seconds, by the heartbeat; reported: each side's own figure):"
echo
echo "| side | lag p50 | lag p99 | lag max | catch-up | vs replica | rows/s | client CPU us/row | server CPU us/row | CPU us/row | vs replica | reported lag p50 / p99 / max |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
rc=$(col replica 6)
ra=$(col replica 13)
for s in follower replica; do
	c=$(col "$s" 6)
	allc=$(col "$s" 13)
	client=-
	[ "$s" = replica ] || client=$(printf '%.2f' "$(col "$s" 8)")
	printf '| %s | %.3f | %.3f | %.3f | %.2f | %s | %.0f | %s | %.2f | %.2f | %s | %.1f / %.1f / %.1f |\n' "$s" "$(col "$s" 3)" "$(col "$s" 4)" "$(col "$s" 5)" \
		"$c" "$(ratio "$c" "$rc")" "$(col "$s" 7)" "$client" "$(col "$s" 9)" "$allc" "$(ratio "$allc" "$ra")" "$(col "$s" 10)" "$(col "$s" 11)" "$(col "$s" 12)"
done
fc=$(col follower 6)
fp=$(col follower 4)
echo
echo "goal: the follower's catch-up at most 1.0x the replica's: $(ratio "$fc" "$rc")x, $(awk -v f="$fc" -v r="$rc" 'BEGIN{print (f <= r ? "met" : "NOT met")}'); its lag p99 under 2 s: $fp s, $(awk -v p="$fp" 'BEGIN{print (p < 2 ? "met" : "NOT met")}')"
