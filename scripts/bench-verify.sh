#!/usr/bin/env bash
# Benchmark of shakedown verify against pt-table-sync --print (Debian's
# percona-toolkit) on the same pair of local MariaDB sandboxes: the source
# gets sysbench tables (shakedown prepare oltp_read_write), the target a
# copy (mariadb-dump | mariadb), then the same handful of updates, deletes
# and inserts on the target. Both tools are timed on the pair, alternately,
# ROUNDS times; the script prints the median wall times, their ratio, and
# the differing rows each tool found (table, kind, id), which must be the
# same. It also prints the CPU time both servers spent on each run: on a
# small machine both servers share the cores, and that CPU time, not the
# tools' waiting, bounds the wall time.
#
#   scripts/bench-verify.sh
#   ROUNDS=5 TABLES=4 ROWS=1000000 scripts/bench-verify.sh
#
# Knobs (environment): ROUNDS (3), TABLES (4), ROWS (1000000), THREADS (4,
# verify's --threads), BIN (bin/shakedown), KEEP=1 keeps the sandboxes.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh

knobs ROUNDS=3 TABLES=4 ROWS=1000000 THREADS=4
bench_local verify
need=()
command -v pt-table-sync >/dev/null 2>&1 || need+=(percona-toolkit)
[ -x /usr/bin/time ] || need+=(time)
if [ "${#need[@]}" -gt 0 ]; then
	sudo=()
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	echo "bench-verify: installing ${need[*]}" >&2
	"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi

bench_pair verify "vbsrc$$" "vbdst$$"
client() { mariadb -ushakedown -h127.0.0.1 -P"$1" sbtest; }

echo "# shakedown $("$BIN" version | cut -d' ' -f2) verify vs $(pt-table-sync --version 2>&1 | head -1)"
bench_machine
echo "# $TABLES tables x $ROWS rows, rounds=$ROUNDS"

start=$(date +%s)
"$BIN" prepare oltp_read_write --target "$src_url" --tables "$TABLES" --table-size "$ROWS" --threads 4 >/dev/null
mariadb-dump -ushakedown -h127.0.0.1 -P"$sp" --single-transaction --quick sbtest | client "$dp"
echo "# data ready in $(( $(date +%s) - start ))s"

# The differences: on the target only.
last=$ROWS
client "$dp" <<SQL
UPDATE sbtest1 SET c = 'changed-1' WHERE id = 500;
UPDATE sbtest1 SET k = k + 1, pad = 'changed' WHERE id = $((last / 2));
DELETE FROM sbtest1 WHERE id = $((last - 1));
UPDATE sbtest2 SET k = k + 1 WHERE id IN (10, $((last - 1)));
DELETE FROM sbtest$(( TABLES >= 3 ? 3 : 1 )) WHERE id IN (77, $((last / 2 + 1)));
INSERT INTO sbtest$TABLES (id, k, c, pad) VALUES ($((last + 1)), 1, 'new', 'new');
UPDATE sbtest$TABLES SET pad = 'x' WHERE id = 123456 OR id = $((last / 3));
SQL

tables=$(seq -f 'sbtest%g' -s, 1 "$TABLES")

# rows_from FILE: "table kind id" lines from repair SQL, either tool's.
rows_from() {
	sed -nE \
		-e 's/^UPDATE `[^`]+`\.`([^`]+)` SET .* WHERE `id` ?= ?'"'"'?([0-9]+)'"'"'? LIMIT 1.*/\1 changed \2/p' \
		-e 's/^(REPLACE|INSERT) INTO `[^`]+`\.`([^`]+)` ?\(.*\) VALUES \('"'"'?([0-9]+)'"'"'?,.*/\2 missing \3/p' \
		-e 's/^DELETE FROM `[^`]+`\.`([^`]+)` WHERE `id` ?= ?'"'"'?([0-9]+)'"'"'? LIMIT 1.*/\1 extra \2/p' "$1" | sort
}

# server_ticks: CPU time (clock ticks) both servers have used so far.
server_ticks() {
	local t=0 n
	for n in "${pair[@]}"; do
		t=$((t + $(proc_ticks "$(cat "$SHAKEDOWN_HOME/sandboxes/$n/mysqld.pid")")))
	done
	echo "$t"
}
hz=$(getconf CLK_TCK)

for f in sd.times pt.times sd.cpu pt.cpu; do : >"$work/$f"; done
for r in $(seq 1 "$ROUNDS"); do
	for tool in $(round_order "$r" sd pt); do
		before=$(server_ticks)
		if [ "$tool" = sd ]; then
			/usr/bin/time -f %e -o "$work/t" "$BIN" verify "$src_url" "$dst_url" --threads "$THREADS" --tables "$tables" \
				--fix-sql "$work/sd.sql" --json "$work/sd.json" --progress 0 >"$work/sd.out" 2>&1 || [ $? = 3 ]
			tail -1 "$work/t" >>"$work/sd.times"
		else
			/usr/bin/time -f %e -o "$work/t" pt-table-sync --print --databases sbtest --tables "$tables" \
				"h=127.0.0.1,P=$sp,u=shakedown" "h=127.0.0.1,P=$dp,u=shakedown" >"$work/pt.sql" 2>"$work/pt.err" || [ $? = 2 ]
			tail -1 "$work/t" >>"$work/pt.times"
		fi
		awk -v a="$before" -v b="$(server_ticks)" -v hz="$hz" 'BEGIN {printf "%.2f\n", (b - a) / hz}' >>"$work/$tool.cpu"
	done
	echo "round $r: shakedown verify $(tail -1 "$work/sd.times")s (servers' CPU $(tail -1 "$work/sd.cpu")s), pt-table-sync --print $(tail -1 "$work/pt.times")s (servers' CPU $(tail -1 "$work/pt.cpu")s)"
done

sd=$(median <"$work/sd.times")
pt=$(median <"$work/pt.times")
rows_from "$work/sd.sql" >"$work/sd.rows"
rows_from "$work/pt.sql" >"$work/pt.rows"
echo
echo "shakedown verify:      median ${sd}s  (times: $(tr '\n' ' ' <"$work/sd.times"))"
echo "pt-table-sync --print: median ${pt}s  (times: $(tr '\n' ' ' <"$work/pt.times"))"
echo "servers' CPU time:     shakedown median $(median <"$work/sd.cpu")s, pt-table-sync median $(median <"$work/pt.cpu")s"
echo "ratio shakedown/pt:    $(awk -v a="$sd" -v b="$pt" 'BEGIN {printf "%.2f", a / b}')  (target <= 0.50)"
same_found "rows found" "same rows" pt-table-sync "$work/sd.rows" "$work/pt.rows" || exit 1
