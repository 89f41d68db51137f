#!/usr/bin/env bash
# shakedown copy against mariadb-dump | mariadb and mydumper + myloader, on
# a quiet machine with no network. Runs inside a bundle that
# scripts/bundle.sh made with COPY_TOOLS=1 (which adds mariadb-dump,
# mariadb, mydumper and myloader with their libraries) and that was
# unpacked there; without those tools it measures shakedown copy alone.
#
#   tar xzf shakedown-bench-linux-amd64.tar.gz
#   cd shakedown-bench && OUT=/some/dir ./bench-copy-pinned.sh
#
# Two servers of the bundle (source and target, each with a copy of the
# bundle's data directory under copybench/), both pinned to SERVER_CPUS;
# shakedown prepare makes TABLES sbtest tables of ROWS rows on the source.
# Then, in rounds whose order turns each round, each tool copies sbtest
# into a database of its own on the target, pinned to CLIENT_CPUS under GNU
# time: shakedown copy without its verify (--no-verify, ANALYZE TABLE
# still runs) and with it, mariadb-dump --single-transaction | mariadb, and
# mydumper | myloader (dump to disk, then load), with THREADS where the
# tool has threads. Each run appends a line to RESULTS as it ends: tool,
# round, wall seconds, client CPU seconds (user+sys), the source's and the
# target's server CPU seconds, and the rows on the target. At the end it
# prints the medians and the ratios against dump | load and mydumper.
#
# Knobs (environment), defaults in brackets:
#   SERVER_CPUS [0-7]  CLIENT_CPUS [8-15]  THREADS [8]  ROUNDS [2]
#   TABLES [8] ROWS [250000]: 8 x 1,000,000 does not fit BUDGET on 8
#     server cores with dump | load in every round
#   BUDGET [200] seconds: no run starts that could end later than this
#     after the start (its estimate: the tool's last run, or a guess from
#     the rows); what was skipped is listed
#   PORT [13316] (the target: PORT+1)  OUT [the bundle's run dir]: RESULTS
#     (copy-results.tsv) and LOG (bench-copy.log) go there
#   SHAKEDOWN_ARGS [""] more options for shakedown copy
#   TOOLS [all]: the tools to run and their first round's order, e.g.
#     "dump copy mydumper"; DUMP_RATE [60000] rows/s, dump | load's guess
#   COPY_VARIANTS ["--chunk-rows 50000|--threads 16"]: more runs of shakedown
#     copy without verify, one per |-separated set of options, as tools
#     copy_v1, copy_v2...: chunk sizes and stream counts side by side
#
# For shakedown's runs, RESULTS also has the seconds of the rows alone
# (data_s) and of the indexes, keys and triggers added after them (post_s),
# from copy's own output.
set -uo pipefail
B=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/bench-lib.sh
. "$B/bench-lib.sh"

knobs SERVER_CPUS=0-7 CLIENT_CPUS=8-15 THREADS=8 ROUNDS=2 TABLES=8 ROWS=250000 BUDGET=200 PORT=13316 OUT="$B/copybench"
read -r -a shakedown_args <<<"${SHAKEDOWN_ARGS:-}"
whole_numbers bench-copy-pinned.sh THREADS ROUNDS TABLES ROWS BUDGET PORT
started=$SECONDS
W=$B/copybench
mkdir -p "$OUT" "$W/logs"
RESULTS=$OUT/copy-results.tsv
LOG=$OUT/bench-copy.log
# Everything printed also goes to LOG as it happens.
exec > >(tee -a "$LOG") 2>&1

export SHAKEDOWN_HOME=$W/home HOME=$W/home
mkdir -p "$HOME"
ulimit -n 65535 2>/dev/null || true
LD=("$B/lib/ld-linux-x86-64.so.2" --library-path "$B/lib")
pin=("${LD[@]}" "$B/bin/taskset" -c "$CLIENT_CPUS")
gnutime=("${LD[@]}" "$B/bin/time")
have() { [ -x "$B/bin/$1" ]; }
tools=(copy copy_verify)
IFS='|' read -r -a variants <<<"${COPY_VARIANTS---chunk-rows 50000|--threads 16}"
for i in "${!variants[@]}"; do tools+=("copy_v$((i + 1))"); done
if have mariadb-dump && have mariadb; then tools+=(dump); else echo "# no mariadb-dump or mariadb in the bundle (COPY_TOOLS=1 adds them): dump | load skipped"; fi
if have mydumper && have myloader && have mariadb; then tools+=(mydumper); else echo "# no mydumper or myloader in the bundle (COPY_TOOLS=1 adds them): mydumper skipped"; fi
# TOOLS, when given, picks the tools and the first round's order.
if [ -n "${TOOLS:-}" ]; then read -r -a tools <<<"$TOOLS"; fi

# Two servers, each in a directory of its own that shares the bundle's
# programs and settings and holds a copy of its data directory (copied
# while no server of the bundle runs).
for side in src dst; do
	d=$W/$side
	if [ ! -d "$d/data" ]; then
		if [ -f "$B/run/mysqld.pid" ] && kill -0 "$(cat "$B/run/mysqld.pid")" 2>/dev/null; then
			echo "bench-copy-pinned.sh: the bundle's server runs (run/mysqld.pid): stop it first" >&2
			exit 1
		fi
		mkdir -p "$d"
		for f in bin lib share my.cnf; do ln -sfn "$B/$f" "$d/$f"; done
		cp -a --sparse=always "$B/data" "$d/data.tmp" && mv "$d/data.tmp" "$d/data"
	fi
	mkdir -p "$d/run"
done
SRC_PID= DST_PID=
stop_all() {
	SERVER_PID=$SRC_PID bundle_server_stop "$W/src" >/dev/null 2>&1
	SERVER_PID=$DST_PID bundle_server_stop "$W/dst" >/dev/null 2>&1
}
trap stop_all EXIT
echo "# $(date -u +%Y-%m-%dT%H:%MZ) bundle $B: $("$B/bin/shakedown" version), mariadbd $(bundle_exec "$B" mariadbd --version | awk '{print $3}')"
echo "# $(nproc) CPUs; servers on $SERVER_CPUS, clients on $CLIENT_CPUS; $TABLES tables x $ROWS rows; threads=$THREADS rounds=$ROUNDS budget=${BUDGET}s"
bundle_server_start "$W/src" "$PORT" "$SERVER_CPUS" || exit 1
SRC_PID=$SERVER_PID
bundle_server_start "$W/dst" "$((PORT + 1))" "$SERVER_CPUS" || exit 1
DST_PID=$SERVER_PID
src_url="mysql://shakedown@127.0.0.1:$PORT/sbtest"
dst_base="mysql://shakedown@127.0.0.1:$((PORT + 1))"
echo "# servers up in $((SECONDS - started))s"

p0=$SECONDS
{
	"${pin[@]}" "$B/bin/shakedown" cleanup oltp_read_write --target "$src_url" --tables 64 &&
		"${pin[@]}" "$B/bin/shakedown" prepare oltp_read_write --target "$src_url" --tables "$TABLES" --table-size "$ROWS" --threads "$TABLES"
} >"$W/logs/prepare.log" 2>&1 || {
	echo "bench-copy-pinned.sh: prepare failed:" >&2
	tail -20 "$W/logs/prepare.log" >&2
	exit 1
}
prep=$((SECONDS - p0))
echo "# prepared $TABLES x $ROWS rows in ${prep}s"
[ -s "$RESULTS" ] || printf 'tool\tround\twall_s\tclient_cpu_s\tsrc_cpu_s\tdst_cpu_s\trows\ttables\tthreads\tdata_s\tpost_s\toptions\n' >"$RESULTS"

sql() { "${LD[@]}" "$B/bin/mariadb" --no-defaults -ushakedown -h127.0.0.1 -P"$((PORT + 1))" "$@"; }
# rows_on DB: the rows of DB's sbtest tables on the target, counted; "-"
# without the mariadb client (copy_verify's verify then is the check).
rows_on() {
	have mariadb || { echo -; return; }
	local q="SELECT 0" t
	for t in $(seq 1 "$TABLES"); do q="$q + (SELECT COUNT(*) FROM $1.sbtest$t)"; done
	sql -N -e "$q" 2>/dev/null || echo "?"
}
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
declare -A last
skipped=()
failed=0

# run TOOL ROUND: one copy by TOOL, measured, its line appended.
run() {
	local tool=$1 r=$2 db=cp_$1 log=$W/logs/$1-$2.log tim=$W/time.out
	# Until a tool has run, guess: dump | load at 60,000 rows/s, the rest
	# at 150,000 rows/s, plus 5 s.
	local rate=150000
	[ "$tool" != dump ] || rate=${DUMP_RATE:-60000}
	local est=${last[$tool]:-$((TABLES * ROWS / rate + 5))}
	if [ $((SECONDS - started + est)) -gt "$BUDGET" ]; then
		skipped+=("$tool round $r (~${est}s)")
		return
	fi
	local s0 d0 s1 d1 rc=0 cmd
	case $tool in
	copy | copy_verify | copy_v*)
		local v=(--no-verify)
		[ "$tool" != copy_verify ] || v=()
		if [[ $tool == copy_v[0-9]* ]]; then
			local extra
			read -r -a extra <<<"${variants[$((${tool#copy_v} - 1))]}"
			v+=("${extra[@]}")
		fi
		cmd=("$B/bin/shakedown" copy "$src_url" "$dst_base/$db" --allow-write --replace --threads "$THREADS" --progress 0 "${v[@]}" "${shakedown_args[@]}")
		;;
	dump)
		sql -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db" || return
		cmd=(bash -c "\"\$0\" --library-path \"\$1\" \"\$1/../bin/mariadb-dump\" --no-defaults -ushakedown -h127.0.0.1 -P$PORT --single-transaction --quick sbtest |
			\"\$0\" --library-path \"\$1\" \"\$1/../bin/mariadb\" --no-defaults -ushakedown -h127.0.0.1 -P$((PORT + 1)) $db" "$B/lib/ld-linux-x86-64.so.2" "$B/lib")
		;;
	mydumper)
		sql -e "DROP DATABASE IF EXISTS $db; CREATE DATABASE $db" || return
		rm -rf "$W/myd"
		cmd=(bash -c "\"\$0\" --library-path \"\$1\" \"\$1/../bin/mydumper\" -h 127.0.0.1 -P $PORT -u shakedown -B sbtest -t $THREADS -r 100000 --trx-consistency-only -o \"\$2\" &&
			\"\$0\" --library-path \"\$1\" \"\$1/../bin/myloader\" -h 127.0.0.1 -P $((PORT + 1)) -u shakedown -d \"\$2\" -B $db -s sbtest -t $THREADS -o" "$B/lib/ld-linux-x86-64.so.2" "$B/lib" "$W/myd")
		;;
	esac
	s0=$(proc_ticks "$SRC_PID")
	d0=$(proc_ticks "$DST_PID")
	"${gnutime[@]}" -o "$tim" -f "%e %U %S" "${pin[@]}" "${cmd[@]}" >"$log" 2>&1 || rc=$?
	s1=$(proc_ticks "$SRC_PID")
	d1=$(proc_ticks "$DST_PID")
	local e u s rows
	read -r e u s <"$tim" 2>/dev/null || { e=0 u=0 s=0; }
	[[ $e =~ ^[0-9.]+$ ]] || { e=0 u=0 s=0; }
	rows=$(rows_on "$db")
	if [ "$rc" -ne 0 ] || { [ "$rows" != - ] && [ "$rows" != $((TABLES * ROWS)) ]; } || { [ "$tool" = copy_verify ] && ! grep -q "tables equal" "$log"; }; then
		echo "  FAILED $tool round $r (exit $rc, rows $rows of $((TABLES * ROWS)), log $log):"
		tail -5 "$log"
		failed=$((failed + 1))
		return
	fi
	last[$tool]=$(awk -v e="$e" 'BEGIN{printf "%d", e + 1}')
	# copy prints "... (rows 3.2s: ...)" and logs "... added in 1.1s".
	local data_s post_s opts=-
	data_s=$(grep -o '(rows [0-9.]*s' "$log" | tr -dc '0-9.' || true)
	post_s=$(grep -o 'triggers added in [0-9.]*s' "$log" | tr -dc '0-9.' || true)
	[ "${cmd[0]}" != "$B/bin/shakedown" ] || opts="${cmd[*]:4}"
	printf '%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%d\t%d\t%s\t%s\t%s\n' "$tool" "$r" "$e" "$(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}')" \
		"$(awk -v a="$s0" -v b="$s1" -v hz="$hz" 'BEGIN{print (b-a)/hz}')" "$(awk -v a="$d0" -v b="$d1" -v hz="$hz" 'BEGIN{print (b-a)/hz}')" \
		"$rows" "$TABLES" "$THREADS" "${data_s:--}" "${post_s:--}" "$opts" >>"$RESULTS"
	echo "  $(tail -1 "$RESULTS" | awk -F'\t' '{printf "%-12s round %s: %6.2fs wall, client CPU %6.2fs, source CPU %6.2fs, target CPU %6.2fs, rows %ss, indexes %ss", $1, $2, $3, $4, $5, $6, $10, $11}')"
}

for r in $(seq 1 "$ROUNDS"); do
	n=${#tools[@]}
	for i in $(seq 0 $((n - 1))); do
		run "${tools[$(((i + r - 1) % n))]}" "$r"
	done
done
echo "# done in $((SECONDS - started))s (prepare ${prep}s); results: $RESULTS"
[ ${#skipped[@]} -eq 0 ] || echo "# skipped for the budget: ${skipped[*]}"

col() { awk -F'\t' -v t="$1" -v n="$2" 'NR>1 && $1==t && $8==T && ($7=="-" || $7+0==R) {print $n}' R=$((TABLES * ROWS)) T="$TABLES" "$RESULTS" | median; }
d=$(col dump 3)
m=$(col mydumper 3)
printf '%-14s %5s %8s %10s %10s %10s %8s %8s\n' tool runs "wall s" "client s" "source s" "target s" "vs dump" "vs myd"
for t in "${tools[@]}"; do
	n=$(awk -F'\t' -v t="$t" 'NR>1 && $1==t' "$RESULTS" | wc -l)
	[ "$n" -gt 0 ] || continue
	w=$(col "$t" 3)
	printf '%-14s %5d %8.2f %10.2f %10.2f %10.2f %8s %8s\n' "$t" "$n" "$w" "$(col "$t" 4)" "$(col "$t" 5)" "$(col "$t" 6)" "$(ratio "$w" "${d:-0}")" "$(ratio "$w" "${m:-0}")"
done
[ "$failed" -eq 0 ] || { echo "bench-copy-pinned.sh: $failed run(s) failed" >&2; exit 1; }
