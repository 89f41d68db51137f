#!/usr/bin/env bash
# Benchmark of shakedown copy against mariadb-dump | mariadb and against
# mydumper + myloader (Debian's mydumper package, installed if missing) on
# a pair of local MariaDB sandboxes: the source gets sysbench tables
# (shakedown prepare oltp_read_write), each tool copies them into a
# database of its own on the target, with the same thread count where the
# tool has one. Rounds alternate the tools (the order turns each round);
# the script prints median wall seconds and the ratios. shakedown copy is
# timed twice per round: without its final verify (--no-verify, which
# still runs ANALYZE TABLE) and with it (the default). mydumper's time is
# the dump plus the load; neither of the others verifies.
#
#   scripts/bench-copy.sh
#   ROUNDS=5 TABLES=8 ROWS=1000000 scripts/bench-copy.sh
#   TABLES=2000 ROWS=100 scripts/bench-copy.sh      # many small tables
#
# Knobs (environment): ROUNDS (3), TABLES (8), ROWS (1000000), THREADS (4),
# BIN (bin/shakedown), KEEP=1 keeps the sandboxes.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh

knobs ROUNDS=3 TABLES=8 ROWS=1000000 THREADS=4
bench_local copy
if ! command -v mydumper >/dev/null 2>&1; then
	sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	echo "bench-copy: installing mydumper" >&2
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mydumper >/dev/null
fi

bench_pair copy "cbsrc$$" "cbdst$$"
dst_base=${dst_url%/*}
target() { mariadb -ushakedown -h127.0.0.1 -P"$dp" "$@"; }

echo "# shakedown $("$BIN" version | cut -d' ' -f2) copy vs $(mariadb-dump --version | cut -d' ' -f1-6) and $(mydumper --version 2>&1 | head -1)"
bench_machine
echo "# $TABLES tables x $ROWS rows, threads=$THREADS, rounds=$ROUNDS"

start=$(date +%s)
"$BIN" prepare oltp_read_write --target "$src_url" --tables "$TABLES" --table-size "$ROWS" --threads 4 >/dev/null
echo "# data ready in $(( $(date +%s) - start ))s"

fresh() { target -e "DROP DATABASE IF EXISTS $1; CREATE DATABASE $1"; }
now() { date +%s.%N; }

run_copy() {
	fresh cp_shk
	local t0; t0=$(now)
	"$BIN" copy "$src_url" "$dst_base/cp_shk" --allow-write --replace --threads "$THREADS" --no-verify --progress 0 >"$work/copy.out" 2>"$work/copy.err"
	echo "$(now) - $t0" | bc >>"$work/copy"
}
run_copy_verify() {
	fresh cp_shkv
	local t0; t0=$(now)
	"$BIN" copy "$src_url" "$dst_base/cp_shkv" --allow-write --replace --threads "$THREADS" --progress 0 >"$work/copyv.out" 2>"$work/copyv.err"
	echo "$(now) - $t0" | bc >>"$work/copyv"
	grep -q "tables equal" "$work/copyv.out" || { cat "$work/copyv.out" >&2; echo "bench-copy: the copy did not verify" >&2; exit 1; }
}
run_dump() {
	fresh cp_dump
	local t0; t0=$(now)
	mariadb-dump -ushakedown -h127.0.0.1 -P"$sp" --single-transaction --quick sbtest | target cp_dump
	echo "$(now) - $t0" | bc >>"$work/dump"
}
run_mydumper() {
	fresh cp_myd
	rm -rf "$work/myd"
	local t0; t0=$(now)
	mydumper -h 127.0.0.1 -P "$sp" -u shakedown -B sbtest -t "$THREADS" -r 100000 --trx-consistency-only -o "$work/myd" >/dev/null 2>&1
	myloader -h 127.0.0.1 -P "$dp" -u shakedown -d "$work/myd" -B cp_myd -s sbtest -t "$THREADS" -o >/dev/null 2>&1
	echo "$(now) - $t0" | bc >>"$work/mydumper"
}

tools=(run_copy run_copy_verify run_dump run_mydumper)
for r in $(seq 1 "$ROUNDS"); do
	n=${#tools[@]}
	for i in $(seq 0 $((n - 1))); do
		"${tools[$(( (i + r - 1) % n ))]}"
	done
	echo "# round $r: copy $(tail -1 "$work/copy")s, copy+verify $(tail -1 "$work/copyv")s, dump|load $(tail -1 "$work/dump")s, mydumper+myloader $(tail -1 "$work/mydumper")s, load average $(cut -d' ' -f1 /proc/loadavg)"
done
for d in cp_shk cp_dump cp_myd; do
	rows=$(target -N -e "SELECT SUM(TABLE_ROWS) > 0, COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '$d'")
	echo "# $d: tables present: $rows"
done

c=$(median <"$work/copy"); cv=$(median <"$work/copyv"); d=$(median <"$work/dump"); m=$(median <"$work/mydumper")
printf '%-28s %10s %14s %18s\n' tool "median s" "vs dump|load" "vs mydumper+loader"
for row in "shakedown copy (no verify):$c" "shakedown copy + verify:$cv" "mariadb-dump | mariadb:$d" "mydumper + myloader:$m"; do
	name=${row%:*}; v=${row##*:}
	printf '%-28s %10.2f %14.2f %18.2f\n' "$name" "$v" "$(echo "$v / $d" | bc -l)" "$(echo "$v / $m" | bc -l)"
done
