#!/usr/bin/env bash
# Benchmark of shakedown capture beside pt-query-digest on the same
# generated logs: a slow log (MySQL 8 format, every entry with its headers)
# and a general log (MySQL 8 format, ISO times), each SIZE MB, of SESSIONS
# sessions of point selects, ranges, sums and updates. Rounds alternate the
# two tools; the figures are medians over ROUNDS: wall seconds, MB of log a
# wall second, MB a CPU second (user + system, which a loaded machine
# inflates less than wall time), and peak RSS.
#
#   scripts/bench-capture.sh
#   SIZE=200 ROUNDS=5 scripts/bench-capture.sh
#
# Knobs (environment): SIZE (50, MB of each log), ROUNDS (3), SESSIONS (8),
# BIN (bin/shakedown), PT (1; 0 leaves pt-query-digest out), KEEP=1 keeps
# the logs.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE=${SIZE:-50}
ROUNDS=${ROUNDS:-3}
SESSIONS=${SESSIONS:-8}
BIN=${BIN:-bin/shakedown}
PT=${PT:-1}
[ -x /usr/bin/time ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null
make -s build

work=$(mktemp -d /tmp/shakedown-bench-capture.XXXXXX)
cleanup() {
	if [ "${KEEP:-0}" = 1 ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# genlog FORMAT BYTES: a log of about BYTES bytes.
genlog() {
	awk -v fmt="$1" -v size="$2" -v s="$SESSIONS" 'BEGIN {
		srand(1)
		if (fmt == "general") print "Time                 Id Command    Argument"
		ts = 1700654400; n = 0
		while (n < size) {
			id = (i % s) + 1; i++
			if (i % 50 == 0) ts++
			a = int(rand() * 99900) + 1; r = rand()
			if (r < 0.4) q = "SELECT c FROM sbtest1 WHERE id = " a
			else if (r < 0.7) q = "SELECT id, k FROM sbtest1 WHERE id BETWEEN " a " AND " a + 9 " ORDER BY id"
			else if (r < 0.9) q = "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN " a " AND " a + 99
			else q = "UPDATE sbtest1 SET k = k + 1 WHERE id = " a
			t = strftime("%Y-%m-%dT%H:%M:%S", ts, 1) sprintf(".%06dZ", (i * 7) % 1000000)
			if (fmt == "slow")
				line = sprintf("# Time: %s\n# User@Host: app[app] @ localhost []  Id: %5d\n# Query_time: 0.000%03d  Lock_time: 0.000001 Rows_sent: 1  Rows_examined: 10\nSET timestamp=%d;\n%s;", t, id, int(rand() * 1000), ts, q)
			else
				line = sprintf("%s\t%5d Query\t%s", t, id, q)
			print line
			n += length(line) + 1
		}
	}'
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

echo "# shakedown $("$BIN" version | cut -d' ' -f2) capture and $(pt-query-digest --version 2>&1 | head -1)"
echo "# $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "# size=${SIZE}MB rounds=$ROUNDS sessions=$SESSIONS"
for fmt in slow general; do
	log=$work/$fmt.log
	genlog "$fmt" $((SIZE * 1024 * 1024)) >"$log"
	mb=$(awk -v b="$(stat -c %s "$log")" 'BEGIN {printf "%.1f", b / 1048576}')
	stmts=$(if [ "$fmt" = slow ]; then grep -c '^# Query_time' "$log"; else grep -c ' Query	' "$log"; fi)
	pttype=$([ "$fmt" = slow ] && echo slowlog || echo genlog)
	for tool in sd pt; do : >"$work/$tool.wall"; : >"$work/$tool.cpu"; : >"$work/$tool.rss"; done
	for r in $(seq 1 "$ROUNDS"); do
		for tool in $([ $((r % 2)) = 1 ] && echo "sd pt" || echo "pt sd"); do
			if [ "$tool" = sd ]; then
				/usr/bin/time -f "%e %U %S %M" -o "$work/t" "$BIN" capture "$log" -o "$work/x.capture" --summary >/dev/null 2>"$work/sd.err"
			elif [ "$PT" = 1 ]; then
				/usr/bin/time -f "%e %U %S %M" -o "$work/t" pt-query-digest --type "$pttype" "$log" >/dev/null 2>"$work/pt.err"
			else
				continue
			fi
			read -r wall user sys rss < <(tail -1 "$work/t")
			echo "$wall" >>"$work/$tool.wall"
			awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}' >>"$work/$tool.cpu"
			echo "$rss" >>"$work/$tool.rss"
		done
		echo "round $r ($fmt): shakedown $(tail -1 "$work/sd.wall") s$([ "$PT" = 1 ] && echo ", pt-query-digest $(tail -1 "$work/pt.wall") s")"
	done
	n=$("$BIN" capture "$work/x.capture" --summary 2>/dev/null | awk 'NR == 1 {print $1}')
	for tool in sd pt; do
		if [ "$tool" = pt ] && [ "$PT" != 1 ]; then continue; fi
		name=$([ "$tool" = sd ] && echo "shakedown capture" || echo "pt-query-digest")
		w=$(median <"$work/$tool.wall")
		c=$(median <"$work/$tool.cpu")
		m=$(median <"$work/$tool.rss")
		echo "$fmt log ${mb} MB, $stmts statements: $name median ${w} s wall ($(awk -v a="$mb" -v b="$w" 'BEGIN {printf "%.1f", a / b}') MB/s), ${c} s CPU ($(awk -v a="$mb" -v b="$c" 'BEGIN {printf "%.1f", a / b}') MB per CPU second), peak RSS $((m / 1024)) MB"
	done
	echo "$fmt log: shakedown captured $n of $stmts statements"
	rm -f "$log" "$work/x.capture"
done
