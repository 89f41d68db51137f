#!/usr/bin/env bash
# Benchmark of shakedown replay, side by side in one run on two local MariaDB
# sandboxes ("control", and "candidate" with div_precision_increment=8, so
# that the division statements differ and nothing else does):
#
#  1. speed: replay --speed 0 of a generated general log (SESSIONS sessions
#     of point selects, ranges, sums and divisions on sysbench's sbtest1)
#     against "shakedown run sql" with the same statements, the same mix and
#     the same concurrency, prepared (run's default) and as text (as the
#     captured statements are), all against one target (replay's control and
#     candidate are the same server, so both tools load one server);
#     statements per second, medians of ROUNDS alternating rounds. Replay
#     runs each statement twice and hashes every row. The replay on the two
#     servers is shown beside it.
#  2. pt-upgrade (percona-toolkit) on the same log (its first PT_STATEMENTS
#     statements) and the same hosts: the differing fingerprints each tool
#     finds, which must be the same, and the ratio of median wall times
#     over ROUNDS alternating rounds.
#  3. memory: peak RSS of capture and of replay for logs of growing size
#     (SIZES, in MB, same number of sessions): it must stay flat.
#
#   scripts/bench-replay.sh
#   ROUNDS=5 SECONDS_PER_RUN=8 SIZES="" CAPTURE_SIZE=0 scripts/bench-replay.sh
#   ROUNDS=1 SECONDS_PER_RUN=4 SIZES="" REPLAY_BIG=1 scripts/bench-replay.sh  # a 1 GB log
#   BASE_REV=7f9cbe7~1 ROUNDS=7 SIZES="" CAPTURE_SIZE=0 PT_STATEMENTS=0 scripts/bench-replay.sh
#
# With BASE_REV (a git revision), the speed part also replays with a binary
# built from that revision, alternating with this one round by round, and
# prints the paired medians of new/base: statements per second and client
# CPU a statement (user + system time of the replay process).
#
# Knobs (environment): ROUNDS (3), SESSIONS (8), STATEMENTS (40000, the
# speed test's log), SECONDS_PER_RUN (10), PT_STATEMENTS (2000), SIZES
# ("5 20 50"; replay time grows with them; empty for none), CAPTURE_SIZE
# (1000, MB of log read by capture; 0 for none), REPLAY_BIG (0; 1 replays
# that log's capture too, about half an hour), ROWS (100000), BIN
# (bin/shakedown), BASE_REV (none), KEEP=1 keeps the sandboxes and files.
# PT_STATEMENTS=0 leaves pt-upgrade out.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh

knobs ROUNDS=3 SESSIONS=8 STATEMENTS=40000 SECONDS_PER_RUN=10 PT_STATEMENTS=2000 CAPTURE_SIZE=1000 REPLAY_BIG=0 ROWS=100000
# Empty SIZES means no memory runs, so only an unset one takes the default.
SIZES=${SIZES-5 20 50}
bench_local replay
# jq reads the result documents; GNU time measures wall time and memory.
command -v jq >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq jq >/dev/null
[ -x /usr/bin/time ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null

keep_work=1
bench_pair replay "rbctl$$" "rbcand$$" -- --set div_precision_increment=8
ctl_url=$src_url cand_url=$dst_url cp_=$sp kp=$dp

echo "# shakedown $("$BIN" version | cut -d' ' -f2) replay vs run sql and $(pt-upgrade --version 2>&1 | head -1)"
bench_machine
echo "# sessions=$SESSIONS statements=$STATEMENTS rounds=$ROUNDS rows=$ROWS"
# The same data on both: sysbench's rows are random, so the candidate gets a
# copy of the control's.
"$BIN" prepare oltp_read_only --target "$ctl_url" --tables 1 --table-size "$ROWS" --threads 2 >/dev/null
mariadb-dump -ushakedown -h127.0.0.1 -P"$cp_" --single-transaction --quick sbtest | mariadb -ushakedown -h127.0.0.1 -P"$kp" sbtest

# genlog N SEED: a MariaDB general log of N statements in $SESSIONS
# sessions, interleaved; 40% point selects, 30% ranges, 20% sums, 10%
# divisions (which div_precision_increment changes).
genlog() {
	awk -v n="$1" -v s="$SESSIONS" -v rows="$ROWS" -v seed="$2" 'BEGIN {
		srand(seed)
		print "Time\t\t    Id Command\tArgument"
		for (i = 1; i <= s; i++) printf "261122 12:00:00\t%6d Connect\tshakedown@127.0.0.1 on sbtest using TCP/IP\n", i
		for (j = 0; j < n; j++) {
			id = (j % s) + 1
			r = rand(); a = int(rand() * (rows - 100)) + 1
			if (r < 0.4) q = "SELECT c FROM sbtest1 WHERE id = " a
			else if (r < 0.7) q = "SELECT id, k FROM sbtest1 WHERE id BETWEEN " a " AND " a + 9 " ORDER BY id"
			else if (r < 0.9) q = "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN " a " AND " a + 99
			else q = "SELECT k / 7 FROM sbtest1 WHERE id = " a
			printf "\t\t%6d Query\t%s\n", id, q
		}
		for (i = 1; i <= s; i++) printf "\t\t%6d Quit\t\n", i
	}'
}

cat >"$work/stmts.sql" <<SQL
-- @weight 4
SELECT c FROM sbtest1 WHERE id = {{uniform 1 $((ROWS - 100))}};
-- @weight 3
SELECT id, k FROM sbtest1 WHERE id BETWEEN {{a = uniform 1 $((ROWS - 100))}} AND {{a}} + 9 ORDER BY id;
-- @weight 2
SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN {{b = uniform 1 $((ROWS - 100))}} AND {{b}} + 99;
-- @weight 1
SELECT k / 7 FROM sbtest1 WHERE id = {{uniform 1 $((ROWS - 100))}};
SQL

# 1. Speed.
genlog "$STATEMENTS" 1 >"$work/speed.log"
"$BIN" capture "$work/speed.log" -o "$work/speed.capture" 2>/dev/null
for f in replay.sps replay2.sps run.qps runtext.qps ab.txt; do : >"$work/$f"; done
tools="replay run runtext"
if [ -n "${BASE_REV:-}" ]; then
	echo "# base: $BASE_REV ($(git rev-parse --short "$BASE_REV")), built beside this one; replay on two servers, base and new alternately"
	git worktree add -q --detach "$work/base-src" "$BASE_REV"
	(cd "$work/base-src" && CGO_ENABLED=0 go build -o "$work/shakedown-base" ./cmd/shakedown)
	git worktree remove --force "$work/base-src"
	tools="replay base new run runtext"
fi
# ab NAME BIN: one replay on the two servers, its statements per second and
# CPU seconds a statement, appended to ab.txt as "NAME sps cpu/statement".
ab() {
	/usr/bin/time -f "%U %S" -o "$work/t" "$2" replay "$work/speed.capture" --control "$ctl_url" --candidate "$cand_url" \
		--speed 0 --json "$work/ab.json" --progress 0 >"$work/ab.out" 2>&1 || [ $? = 3 ]
	read -r u s < <(tail -1 "$work/t")
	jq -r --arg n "$1" --arg c "$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')" \
		'"\($n) \(.statements_per_second) \(($c | tonumber) / .statements)"' "$work/ab.json" >>"$work/ab.txt"
}
# run sql prepares its statements by default; the captured statements are
# text, which costs the server a parse each: run sql --db-ps-mode disable
# sends them as replay does.
for r in $(seq 1 "$ROUNDS"); do
	for tool in $(round_order "$r" $tools); do
		case $tool in
		base) ab base "$work/shakedown-base" ;;
		new) ab new "$BIN" ;;
		replay)
			"$BIN" replay "$work/speed.capture" --control "$ctl_url" --candidate "$ctl_url" --speed 0 \
				--json "$work/replay.json" --progress 0 >"$work/replay.out" 2>&1 || [ $? = 3 ]
			jq -r .statements_per_second "$work/replay.json" >>"$work/replay.sps"
			"$BIN" replay "$work/speed.capture" --control "$ctl_url" --candidate "$cand_url" --speed 0 \
				--json "$work/replay2.json" --progress 0 >"$work/replay2.out" 2>&1 || [ $? = 3 ]
			jq -r .statements_per_second "$work/replay2.json" >>"$work/replay2.sps"
			;;
		run)
			"$BIN" run sql --file "$work/stmts.sql" --target "$ctl_url" --threads "$SESSIONS" --time "$SECONDS_PER_RUN" \
				--json "$work/run.json" >"$work/run.out" 2>&1
			jq -r .qps "$work/run.json" >>"$work/run.qps"
			;;
		runtext)
			"$BIN" run sql --file "$work/stmts.sql" --target "$ctl_url" --threads "$SESSIONS" --time "$SECONDS_PER_RUN" \
				--db-ps-mode disable --json "$work/run.json" >"$work/run.out" 2>&1
			jq -r .qps "$work/run.json" >>"$work/runtext.qps"
			;;
		esac
	done
	echo "round $r: replay $(tail -1 "$work/replay.sps" | cut -d. -f1) statements/s on one server ($(tail -1 "$work/replay2.sps" | cut -d. -f1) on two), run sql $(tail -1 "$work/run.qps") qps prepared, $(tail -1 "$work/runtext.qps") as text"
done
rs=$(median <"$work/replay.sps")
qs=$(median <"$work/run.qps")
ts=$(median <"$work/runtext.qps")
ratios=$(paste "$work/replay.sps" "$work/run.qps" | awk '{printf "%.2f\n", $1 / $2}')
tratios=$(paste "$work/replay.sps" "$work/runtext.qps" | awk '{printf "%.2f\n", $1 / $2}')
echo "per-round ratios replay / run sql prepared: $(echo "$ratios" | tr '\n' ' ')(median $(echo "$ratios" | median))"
echo "per-round ratios replay / run sql as text:  $(echo "$tratios" | tr '\n' ' ')(median $(echo "$tratios" | median))"
if [ -n "${BASE_REV:-}" ]; then
	awk '{printf "%s %.0f statements/s %.2f us/statement\n", $1, $2, $3 * 1e6}' "$work/ab.txt"
	paired() { awk -v c="$1" '$1=="base"{b[++n]=$c} $1=="new"{a[++m]=$c} END{for(i=1;i<=n&&i<=m;i++) if (b[i]>0) print a[i]/b[i]}' "$work/ab.txt" | median; }
	echo "vs $BASE_REV: replay on two servers, new/base paired medians over $ROUNDS rounds: statements/s $(paired 2), client CPU a statement $(paired 3)"
fi
echo "speed: replay --speed 0 median $rs statements/s; run sql median $qs qps prepared, $ts as text, at $SESSIONS threads against one server; ratios $(awk -v a="$rs" -v b="$qs" 'BEGIN {printf "%.2f", a / b}') and $(awk -v a="$rs" -v b="$ts" 'BEGIN {printf "%.2f", a / b}') (goal >= 0.50); replay on two servers median $(median <"$work/replay2.sps") statements/s"

# 2. pt-upgrade on the same log and hosts.
if [ "$PT_STATEMENTS" -gt 0 ]; then
	head -n $((PT_STATEMENTS + SESSIONS + 1)) "$work/speed.log" >"$work/pt.log"
	for i in $(seq 1 "$SESSIONS"); do printf '\t\t%6d Quit\t\n' "$i"; done >>"$work/pt.log"
	"$BIN" capture "$work/pt.log" -o "$work/pt.capture" 2>/dev/null
	: >"$work/sd.wall"
	: >"$work/pt.wall"
	for r in $(seq 1 "$ROUNDS"); do
		for tool in $(round_order "$r" sd pt); do
			if [ "$tool" = sd ]; then
				/usr/bin/time -f %e -o "$work/t" "$BIN" replay "$work/pt.capture" --control "$ctl_url" --candidate "$cand_url" \
					--json "$work/pt-replay.json" --progress 0 >/dev/null 2>&1 || [ $? = 3 ]
				tail -1 "$work/t" >>"$work/sd.wall"
			else
				/usr/bin/time -f %e -o "$work/t" pt-upgrade "h=127.0.0.1,P=$cp_,u=shakedown,D=sbtest" "h=127.0.0.1,P=$kp,u=shakedown,D=sbtest" \
					--type genlog "$work/pt.log" >"$work/pt.out" 2>"$work/pt.err" || true
				tail -1 "$work/t" >>"$work/pt.wall"
			fi
		done
	done
	sd_wall=$(median <"$work/sd.wall")
	pt_wall=$(median <"$work/pt.wall")
	echo "pt-upgrade rounds (shakedown replay s, pt-upgrade s): $(paste -d, "$work/sd.wall" "$work/pt.wall" | tr '\n' ' ')"
	# The differing fingerprints, in one spelling: lowercase, no backquotes,
	# no spaces.
	canon() { tr 'A-Z' 'a-z' | tr -d '` ' | sed -e 's/(\.\.\.)/(?+)/g' -e 's/[0-9][0-9]*/?/g'; }
	jq -r '.fingerprints[] | select(.differences > 0) | .fingerprint' "$work/pt-replay.json" | canon | sort -u >"$work/sd.diff"
	# pt-upgrade also reports classes whose only "diffs" are query times (one
	# run each, on a noisy machine); replay compares results, so those are left
	# out here.
	awk '/^# Query class/ {c=1; keep=0; next} c && /^Reporting class because/ {keep = ($0 ~ /row diff|row count|warning|error/)}
		c && /^Discarded queries/ {getline; getline; if (keep) print; c=0}' "$work/pt.out" | canon | sort -u >"$work/pt.diff"
	echo "pt-upgrade: shakedown replay ${sd_wall}s, pt-upgrade ${pt_wall}s on $PT_STATEMENTS statements (medians); ratio $(awk -v a="$sd_wall" -v b="$pt_wall" 'BEGIN {printf "%.3f", a / b}') (goal <= 0.20)"
	same_found "differing fingerprints" "same differing fingerprints" pt-upgrade "$work/sd.diff" "$work/pt.diff" || true
fi

# 3. Memory.
bytes_per=$(( $(stat -c %s "$work/speed.log") / STATEMENTS ))
for mb in $SIZES; do
	n=$(( mb * 1024 * 1024 / bytes_per ))
	genlog "$n" 2 >"$work/mem.log"
	/usr/bin/time -f "%M %e" -o "$work/t" "$BIN" capture "$work/mem.log" -o "$work/mem.capture" 2>/dev/null
	read -r crss csec < <(tail -1 "$work/t")
	/usr/bin/time -f "%M %e" -o "$work/t" "$BIN" replay "$work/mem.capture" --control "$ctl_url" --candidate "$cand_url" \
		--json "$work/mem.json" --progress 0 >/dev/null 2>&1 || [ $? = 3 ]
	read -r rrss rsec < <(tail -1 "$work/t")
	echo "memory: ${mb} MB log ($n statements, $SESSIONS sessions): capture ${crss} KB peak RSS in ${csec}s; replay ${rrss} KB peak RSS in ${rsec}s"
	rm -f "$work/mem.log" "$work/mem.capture"
done
[ "$CAPTURE_SIZE" -gt 0 ] || exit 0
n=$(( CAPTURE_SIZE * 1024 * 1024 / bytes_per ))
genlog "$n" 3 >"$work/big.log"
/usr/bin/time -f "%M %e" -o "$work/t" "$BIN" capture "$work/big.log" -o "$work/big.capture" 2>/dev/null
read -r crss csec < <(tail -1 "$work/t")
echo "memory: capture of a ${CAPTURE_SIZE} MB log ($n statements): ${crss} KB peak RSS in ${csec}s"
rm -f "$work/big.log"
if [ "$REPLAY_BIG" = 1 ]; then
	/usr/bin/time -f "%M %e" -o "$work/t" "$BIN" replay "$work/big.capture" --control "$ctl_url" --candidate "$cand_url" \
		--json "$work/big.json" --progress 5m >/dev/null 2>&1 || [ $? = 3 ]
	read -r rrss rsec < <(tail -1 "$work/t")
	echo "memory: replay of the ${CAPTURE_SIZE} MB log ($(jq .statements "$work/big.json") statements, $SESSIONS sessions, two servers): ${rrss} KB peak RSS in ${rsec}s"
fi
rm -f "$work/big.capture"
