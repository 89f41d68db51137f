#!/usr/bin/env bash
# Side-by-side benchmark of shakedown against sysbench 1.0.20 on one local
# MariaDB sandbox: the same workload and threads, alternating rounds, medians.
#
#   scripts/bench.sh                 all cases
#   CASES="point_select" scripts/bench.sh
#
# Cases:
#   point_select   oltp_point_select, 16 threads: QPS and client CPU per query
#   read_write     oltp_read_write, 16 threads: QPS and client CPU per query
#   threads1000    oltp_point_select, 1000 threads: peak RSS of the client
#   prepare        prepare --tables 4 --table-size 1000000 --threads 4: wall time
#
# Knobs (environment): ROUNDS (5), SECONDS_PER_RUN (15), PREP_ROUNDS (1),
# PREP_TABLES (4), PREP_ROWS (1000000), BIN (bin/shakedown).
# Client CPU is user+sys of the client process as GNU time reports it.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
SECS=${SECONDS_PER_RUN:-15}
PREP_ROUNDS=${PREP_ROUNDS:-1}
PREP_TABLES=${PREP_TABLES:-4}
PREP_ROWS=${PREP_ROWS:-1000000}
BIN=${BIN:-bin/shakedown}
CASES=${CASES:-"point_select read_write threads1000 prepare"}
export SHAKEDOWN_HOME=${SHAKEDOWN_HOME:-$(mktemp -d /tmp/shakedown-bench.XXXXXX)}

bash scripts/deps.sh
if [ ! -x /usr/bin/time ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null
fi
make -s build

work=$(mktemp -d /tmp/shakedown-bench-out.XXXXXX)
name=bench$$
url=$("$BIN" sandbox up "$name" --url-only)
trap '"$BIN" sandbox down "$name" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
port=${url##*:}
port=${port%%/*}
sb_conn=(--mysql-host=127.0.0.1 "--mysql-port=$port" --mysql-user=shakedown --mysql-db=sbtest)

server=$( (mariadbd --version || /usr/sbin/mariadbd --version || mysqld --version) 2>/dev/null | head -1 | awk '{print $3}' || true)
echo "# shakedown $("$BIN" version | cut -d' ' -f2) vs $(sysbench --version), server $server, $(nproc) cores"
echo "# rounds=$ROUNDS seconds=$SECS"

# measure TOOL OUTFILE CMD...: runs CMD under GNU time; appends
# "tool qps cpu_s queries rss_kb wall_s" to OUTFILE.
measure() {
	local tool=$1 out=$2
	shift 2
	local log=$work/log.$$ tim=$work/time.$$
	/usr/bin/time -o "$tim" -f "%U %S %M %e" "$@" >"$log" 2>&1 || { cat "$log" >&2; return 1; }
	local queries qps
	queries=$(awk '/^ *queries: /{print $2}' "$log" | tail -1)
	qps=$(awk '/^ *queries: /{gsub(/\(/,"",$3); print $3}' "$log" | tail -1)
	read -r u s m e <"$tim"
	echo "$tool ${qps:-0} $(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}') ${queries:-0} $m $e" >>"$out"
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) {print 0} else if (NR%2) {print a[(NR+1)/2]} else {print (a[NR/2]+a[NR/2+1])/2}}'; }

# med_col TOOL N FILE: the median of field N over TOOL's rows.
med_col() { awk -v t="$1" -v n="$2" '$1==t {print $n}' "$3" | median; }
cpu_per_query() { awk -v t="$1" '$1==t && $4>0 {print $3/$4*1e6}' "$2" | median; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b==0) print "n/a"; else printf "%.2f", a/b }'; }

run_case() {
	local label=$1 workload=$2 threads=$3 rows=$4
	local out=$work/$label.txt
	: >"$out"
	for r in $(seq "$ROUNDS"); do
		measure sysbench "$out" sysbench "$workload" "${sb_conn[@]}" --tables=1 "--table-size=$rows" "--threads=$threads" "--time=$SECS" run
		measure shakedown "$out" "$BIN" run "$workload" --target="$url" --tables=1 "--table-size=$rows" "--threads=$threads" "--time=$SECS"
		echo "  round $r: $(tail -2 "$out" | awk '{printf "%s %.0f qps %.2f us/q %d KB  ", $1, $2, $3/$4*1e6, $5}')"
	done
	local sq dq sc dc sm dm
	sq=$(med_col sysbench 2 "$out"); dq=$(med_col shakedown 2 "$out")
	sc=$(cpu_per_query sysbench "$out"); dc=$(cpu_per_query shakedown "$out")
	sm=$(med_col sysbench 5 "$out"); dm=$(med_col shakedown 5 "$out")
	printf '| %s | %d | %.0f | %.0f | %s | %.2f | %.2f | %s | %d | %d | %s |\n' \
		"$workload" "$threads" "$sq" "$dq" "$(ratio "$dq" "$sq")" "$sc" "$dc" "$(ratio "$dc" "$sc")" "$sm" "$dm" "$(ratio "$dm" "$sm")" >>"$work/summary.md"
}

prepare_rows() {
	"$BIN" cleanup oltp_read_write --target="$url" "--tables=$PREP_TABLES" >/dev/null
	"$BIN" prepare oltp_read_write --target="$url" --tables=1 "--table-size=$1" >/dev/null
}

echo "| workload | threads | sysbench QPS | shakedown QPS | ratio | sysbench CPU us/query | shakedown CPU us/query | ratio | sysbench RSS KB | shakedown RSS KB | ratio |" >"$work/summary.md"
echo "|---|---|---|---|---|---|---|---|---|---|---|" >>"$work/summary.md"

for c in $CASES; do
	case $c in
	point_select)
		echo "== oltp_point_select, 16 threads"
		prepare_rows 100000
		run_case point_select oltp_point_select 16 100000
		;;
	read_write)
		echo "== oltp_read_write, 16 threads"
		prepare_rows 100000
		run_case read_write oltp_read_write 16 100000
		;;
	threads1000)
		echo "== oltp_point_select, 1000 threads"
		prepare_rows 100000
		ROUNDS=1 run_case threads1000 oltp_point_select 1000 100000
		;;
	prepare)
		echo "== prepare --tables $PREP_TABLES --table-size $PREP_ROWS --threads 4"
		out=$work/prepare.txt
		: >"$out"
		for r in $(seq "$PREP_ROUNDS"); do
			"$BIN" cleanup oltp_read_write --target="$url" "--tables=$PREP_TABLES" >/dev/null
			/usr/bin/time -o "$work/t" -f "%e" sysbench oltp_read_write "${sb_conn[@]}" "--tables=$PREP_TABLES" "--table-size=$PREP_ROWS" --threads=4 prepare >/dev/null
			echo "sysbench $(cat "$work/t")" >>"$out"
			"$BIN" cleanup oltp_read_write --target="$url" "--tables=$PREP_TABLES" >/dev/null
			/usr/bin/time -o "$work/t" -f "%e" "$BIN" prepare oltp_read_write --target="$url" "--tables=$PREP_TABLES" "--table-size=$PREP_ROWS" --threads=4 >/dev/null
			echo "shakedown $(cat "$work/t")" >>"$out"
			echo "  round $r: $(tail -2 "$out" | tr '\n' ' ')"
		done
		st=$(med_col sysbench 2 "$out"); dt=$(med_col shakedown 2 "$out")
		echo "" >>"$work/summary.md"
		echo "| prepare | sysbench wall s | shakedown wall s | ratio |" >>"$work/summary.md"
		echo "|---|---|---|---|" >>"$work/summary.md"
		printf '| --tables %s --table-size %s --threads 4 | %.1f | %.1f | %s |\n' "$PREP_TABLES" "$PREP_ROWS" "$st" "$dt" "$(ratio "$dt" "$st")" >>"$work/summary.md"
		;;
	*)
		echo "bench.sh: unknown case $c (point_select read_write threads1000 prepare)" >&2
		exit 2
		;;
	esac
done

echo
echo "Medians over alternating rounds (ratio = shakedown / sysbench):"
echo
cat "$work/summary.md"
