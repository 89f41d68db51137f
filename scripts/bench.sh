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
#   slap           shakedown slap vs mysqlslap on the seed command (a hot row:
#                  begin; update seckill ...; commit, --concurrency=16,64
#                  --iterations=2 --number-of-queries=20000): QPS and client CPU
#                  per query, both computed from mysqlslap's own summary lines
#   floor          oltp_point_select, 16 threads: sysbench, shakedown and
#                  scripts/wirefloor (a bare loop of prepared point selects
#                  over shakedown's wire package, the least a Go client can
#                  do) alternately: QPS and client CPU per query of each
#   tls            TLS's cost per query: shakedown run oltp_point_select, 16
#                  threads, over plain and TLS connections (?tls=skip-verify,
#                  a certificate made with openssl) to one sandbox,
#                  alternately (the order flips every round): QPS and client
#                  CPU per query of each, medians
#   base           no worse than before: shakedown run oltp_point_select and
#                  oltp_read_write at each of BASE_THREADS (16) threads,
#                  built from BASE_REV (a git
#                  revision, default HEAD~1) and from the working tree,
#                  alternately (the order flips every round): QPS and client
#                  CPU per query of each, medians and the median of each
#                  round's new/base ratio
#   threads        oltp_point_select and oltp_read_write at each of THREADS_LIST
#                  (1 16 64 256 1024 3000 threads), 4 tables of 100,000 rows:
#                  sysbench and shakedown run once for each --client-io mode
#                  in CLIENT_IO (auto), alternately (the order flips every
#                  round): QPS, client CPU per query and RSS, medians. A
#                  mode MODE+VAR=VALUE[,VAR=VALUE] runs MODE with those
#                  variables set: "auto auto+SHAKEDOWN_IOLOOP_LOOPS=8"
#                  sets the loops' rule against 8 loops. THREADS_WORKLOADS
#                  replaces the two workloads (any of sysbench's oltp_*
#                  and select_random_*). With
#                  SERVER_CPUS and CLIENT_CPUS this is the client on cores of
#                  its own; scripts/bench-pinned.sh runs the same on a
#                  machine without network (scripts/bundle.sh)
#   monitor        the server sampler's cost: shakedown run oltp_point_select,
#                  16 threads, --monitor=on and --monitor=off alternately
#                  (the order flips every round); medians, on/off ratio, and
#                  the server time of one SHOW GLOBAL STATUS
#   stall          a stall trigger that never fires: shakedown run
#                  oltp_point_select, 16 threads, with --stall (pt-stalk's
#                  threads_running>25 for 5s, which 16 threads cannot reach)
#                  and without, alternately (the order flips every round);
#                  medians and the median of each round's on/off ratio
#
# Knobs (environment): ROUNDS (5), SECONDS_PER_RUN (15), PREP_ROUNDS (1),
# PREP_TABLES (4), PREP_ROWS (1000000), BIN (bin/shakedown), SLAP_QUERIES
# (20000), SLAP_CONCURRENCY (16,64), SLAP_ITERATIONS (2), BASE_REV (HEAD~1),
# THREADS_LIST (1 16 64 256 1024 3000), THREADS_WORKLOADS (oltp_point_select
# oltp_read_write), CLIENT_IO (auto), BASE_THREADS (16),
# SETTLE (120: after a prepare, the most seconds to wait while the server
# writes the pages the load left dirty, which took a core for 45-65 s
# after 4 tables of 100,000 rows on 2 cores; 0: no wait).
# Client CPU is user+sys of the client process as GNU time reports it.
#
# Where it runs (environment):
#   SERVER_CPUS=0-7   bind the sandbox's server to these CPUs (sandbox up --cpus)
#   CLIENT_CPUS=8-15  bind every client (sysbench, shakedown, mysqlslap) to
#                     these CPUs with taskset: with SERVER_CPUS, a client on
#                     cores of its own
#   FLAVOUR=galera    the sandbox is a 3-node Galera cluster (sandbox up
#                     --flavour galera); sysbench and shakedown spread their
#                     connections over the nodes.
#   FLAVOUR=tidb      the sandbox is a TiDB server (sandbox up --flavour tidb)
#                     from SHAKEDOWN_TIDB_SERVER, tidb-server on PATH, or the
#                     build in ../shared/flavours/tidb-server.xz (unpacked
#                     once into ~/.cache/shakedown/flavours); default mariadb.
#                     tls needs the MariaDB sandbox.
#   FLAVOUR=vitess    the sandbox is vtgate and its tablets over MariaDB
#                     (sandbox up --flavour vitess; SHARDS=N for a sharded
#                     keyspace, default 1) from SHAKEDOWN_VITESS_SERVER, else
#                     the vtcombo scripts/install-vitess.sh builds (once,
#                     about 4 minutes). tls, monitor and floor need the
#                     MariaDB sandbox.
#   TARGET=mysql://user[:password]@host:port/db
#                     measure this server instead of a sandbox. The cases
#                     drop and re-create sbtest's tables (and slap's
#                     test.seckill) there: name a server you may write to.
#                     tls, monitor and floor need the sandbox.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh

ROUNDS=${ROUNDS:-5}
SECS=${SECONDS_PER_RUN:-15}
PREP_ROUNDS=${PREP_ROUNDS:-1}
PREP_TABLES=${PREP_TABLES:-4}
PREP_ROWS=${PREP_ROWS:-1000000}
BIN=${BIN:-bin/shakedown}
SLAP_QUERIES=${SLAP_QUERIES:-20000}
SLAP_CONCURRENCY=${SLAP_CONCURRENCY:-16,64}
SLAP_ITERATIONS=${SLAP_ITERATIONS:-2}
CASES=${CASES:-"point_select read_write threads1000 prepare monitor slap"}
THREADS_LIST=${THREADS_LIST:-"1 16 64 256 1024 3000"}
THREADS_WORKLOADS=${THREADS_WORKLOADS:-"oltp_point_select oltp_read_write"}
BASE_THREADS=${BASE_THREADS:-16}
CLIENT_IO=${CLIENT_IO:-auto}
SERVER_CPUS=${SERVER_CPUS:-}
CLIENT_CPUS=${CLIENT_CPUS:-}
TARGET=${TARGET:-}
FLAVOUR=${FLAVOUR:-mariadb}
# one_sandbox_cases WHAT NEEDS: exit 2 where CASES holds a case that reads
# the sandbox's one server itself (tls, monitor, floor), which WHAT rules out.
one_sandbox_cases() {
	local c
	for c in $CASES; do
		case $c in tls | monitor | floor)
			echo "bench.sh: $1: case $c needs $2; drop it from CASES" >&2
			exit 2
			;;
		esac
	done
}
flavour_up=()
case $FLAVOUR in
mariadb) ;;
tidb)
	if [[ " $CASES " == *" tls "* ]]; then
		echo "bench.sh: FLAVOUR=tidb: the tls case needs the MariaDB sandbox" >&2
		exit 2
	fi
	tidb=${SHAKEDOWN_TIDB_SERVER:-$(command -v tidb-server || true)}
	if [ -z "$tidb" ] && [ -f ../shared/flavours/tidb-server.xz ]; then
		cache=${XDG_CACHE_HOME:-$HOME/.cache}/shakedown/flavours
		tidb=$cache/tidb-server-$(sha256sum ../shared/flavours/tidb-server.xz | cut -c1-16)
		if [ ! -x "$tidb" ]; then
			mkdir -p "$cache"
			xz -dc ../shared/flavours/tidb-server.xz >"$tidb.tmp$$" && chmod +x "$tidb.tmp$$" && mv "$tidb.tmp$$" "$tidb"
		fi
	fi
	if [ -z "$tidb" ]; then
		echo "bench.sh: FLAVOUR=tidb: no TiDB server: set SHAKEDOWN_TIDB_SERVER, put tidb-server on PATH, or keep ../shared/flavours/tidb-server.xz" >&2
		exit 2
	fi
	flavour_up=(--flavour tidb --server "$tidb")
	;;
galera)
	# Three nodes on loopback (Debian's galera-4); both tools spread their
	# connections over the three, sysbench through its host and port lists.
	one_sandbox_cases "FLAVOUR=galera" "one server"
	flavour_up=(--flavour galera)
	;;
vitess)
	one_sandbox_cases "FLAVOUR=vitess" "the MariaDB sandbox"
	vtcombo=${SHAKEDOWN_VITESS_SERVER:-$(bash scripts/install-vitess.sh)}
	flavour_up=(--flavour vitess --server "$vtcombo" --shards "${SHARDS:-1}")
	;;
*)
	echo "bench.sh: FLAVOUR=$FLAVOUR: want mariadb, tidb, galera or vitess" >&2
	exit 2
	;;
esac
if [ -n "$TARGET" ]; then
	if [ -n "$SERVER_CPUS" ]; then
		echo "bench.sh: SERVER_CPUS binds the sandbox's server; with TARGET bind your server yourself" >&2
		exit 2
	fi
	one_sandbox_cases "TARGET" "the sandbox"
fi
export SHAKEDOWN_HOME=${SHAKEDOWN_HOME:-$(mktemp -d /tmp/shakedown-bench.XXXXXX)}

bash scripts/deps.sh
if [ ! -x /usr/bin/time ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time >/dev/null
fi
make -s build

work=$(mktemp -d /tmp/shakedown-bench-out.XXXXXX)
name=bench$$
tls_set=()
if [[ " $CASES " == *" tls "* ]]; then
	# A certificate for the tls case; plain connections to the sandbox are
	# unaffected by the server offering TLS.
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
	tls_set=(--set "ssl_cert=$work/cert.pem" --set "ssl_key=$work/key.pem")
fi
# The clients, bound to CLIENT_CPUS when it is set; thousands of threads
# need as many descriptors.
pin=()
[ -z "$CLIENT_CPUS" ] || pin=(taskset -c "$CLIENT_CPUS")
ulimit -n 65535 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ -n "$TARGET" ]; then
	url=$TARGET
	trap 'rm -rf "$work"; git worktree prune' EXIT
	# mysql://user[:password]@host:port/db, as sysbench's options.
	if ! [[ $url =~ ^mysql://([^:@/]+)(:([^@/]*))?@([^:/]+):([0-9]+)/([^/?]+)$ ]]; then
		echo "bench.sh: TARGET=$url: want mysql://user[:password]@host:port/db" >&2
		exit 2
	fi
	host=${BASH_REMATCH[4]}
	port=${BASH_REMATCH[5]}
	sb_conn=("--mysql-host=$host" "--mysql-port=$port" "--mysql-user=${BASH_REMATCH[1]}" "--mysql-db=${BASH_REMATCH[6]}")
	my_conn=("-h$host" "-P$port" "-u${BASH_REMATCH[1]}")
	if [ -n "${BASH_REMATCH[3]}" ]; then
		sb_conn+=("--mysql-password=${BASH_REMATCH[3]}")
		my_conn+=("-p${BASH_REMATCH[3]}")
	fi
else
	host=127.0.0.1
	place=()
	[ -z "$SERVER_CPUS" ] || place=(--cpus "$SERVER_CPUS")
	url=$("$BIN" sandbox up "$name" --url-only "${tls_set[@]}" "${place[@]}" "${flavour_up[@]}")
	trap '"$BIN" sandbox down "$name" >/dev/null 2>&1 || true; rm -rf "$work"; git worktree prune' EXIT
	# mysql://shakedown@HOST[,HOST...]:PORT[,PORT...]/sbtest: a cluster's
	# nodes are lists, which sysbench takes as they are.
	hosts=${url#*@}
	hosts=${hosts%:*}
	ports=${url##*:}
	ports=${ports%%/*}
	port=${ports%%,*}
	sb_conn=("--mysql-host=$hosts" "--mysql-port=$ports" --mysql-user=shakedown --mysql-db=sbtest)
	my_conn=(-h127.0.0.1 "-P$port" -ushakedown)
fi

server=$(mariadb "${my_conn[@]}" -N -e 'SELECT VERSION()' 2>/dev/null || true)
echo "# shakedown $("$BIN" version | cut -d' ' -f2) vs $(sysbench --version), server $server ($FLAVOUR), $(nproc) cores"
echo "# rounds=$ROUNDS seconds=$SECS server=${TARGET:+${TARGET%%@*}@...}${TARGET:-sandbox}${SERVER_CPUS:+ on CPUs $SERVER_CPUS} clients${CLIENT_CPUS:+ on CPUs $CLIENT_CPUS}"

# measure TOOL OUTFILE CMD...: runs CMD under GNU time; appends
# "tool qps cpu_s queries rss_kb wall_s" to OUTFILE.
measure() {
	local tool=$1 out=$2
	shift 2
	local log=$work/log.$$ tim=$work/time.$$
	/usr/bin/time -o "$tim" -f "%U %S %M %e" "${pin[@]}" "$@" >"$log" 2>&1 || { cat "$log" >&2; return 1; }
	local queries qps
	queries=$(queries_of "$log")
	qps=$(qps_of "$log")
	read -r u s m e <"$tim"
	echo "$tool ${qps:-0} $(awk -v u="$u" -v s="$s" 'BEGIN{print u+s}') ${queries:-0} $m $e" >>"$out"
}

# med_col TOOL N FILE: the median of field N over TOOL's rows.
med_col() { awk -v t="$1" -v n="$2" '$1==t {print $n}' "$3" | median; }
cpu_per_query() { awk -v t="$1" '$1==t && $4>0 {print $3/$4*1e6}' "$2" | median; }

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

# on_off NAME ON [OFF]: ROUNDS rounds of shakedown run oltp_point_select at
# 16 threads into $work/NAME.txt (out), alternately with the option ON (the
# runs tagged on) and with OFF (tagged off; no option where it is empty).
# Sets qon and qoff, the median QPS of each, onoff, their ratio, and
# paired, the median of each round's on/off, in which a shared machine's
# slow drift cancels.
on_off() {
	local name=$1 on=$2 off=${3:-} r m opt
	out=$work/$name.txt
	: >"$out"
	for r in $(seq "$ROUNDS"); do
		for m in $(round_order "$r" on off); do
			opt=()
			if [ "$m" = on ]; then opt=("$on"); elif [ -n "$off" ]; then opt=("$off"); fi
			measure "$m" "$out" "$BIN" run oltp_point_select --target="$url" --tables=1 --table-size=100000 --threads=16 "--time=$SECS" "${opt[@]}"
			# Only --stall prints this; its case measures a trigger that does not fire.
			if grep -q "^Stall captures" "$work/log.$$"; then
				echo "bench.sh: the stall trigger fired; this case measures one that does not" >&2
				exit 1
			fi
		done
		echo "  round $r: $(tail -2 "$out" | awk -v n="$name" '{printf "%s=%s %.0f qps  ", n, $1, $2}')"
	done
	qon=$(med_col on 2 "$out"); qoff=$(med_col off 2 "$out")
	onoff=$(awk -v a="$qon" -v b="$qoff" 'BEGIN{ if (b==0) print "n/a"; else printf "%.4f", a/b }')
	paired=$(awk '$1=="on"{on[++n]=$2} $1=="off"{off[++m]=$2} END{for(i=1;i<=n&&i<=m;i++) if (off[i]>0) print on[i]/off[i]}' "$out" | median)
}

prepare_rows() {
	"$BIN" cleanup oltp_read_write --target="$url" "--tables=$PREP_TABLES" >/dev/null
	"$BIN" prepare oltp_read_write --target="$url" --tables=1 "--table-size=$1" >/dev/null
	settle
}

# settle: after a load, waits (at most SETTLE seconds) until the server's
# dirty pages have fallen and stopped falling, or are few, so that the
# first rounds do not share the CPU with the writes of the load. Reads a
# status counter, each read bounded; skips where the server cannot be
# asked.
settle() {
	[ "${SETTLE:-120}" -gt 0 ] || return 0
	local dirty last=-1 fell=0 flat=0 start=$SECONDS
	while [ $((SECONDS - start)) -lt "${SETTLE:-120}" ]; do
		dirty=$(timeout 10 mariadb "${my_conn[@]}" --connect-timeout=5 -N -e "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'" 2>/dev/null | awk '{print $2}')
		[ -n "$dirty" ] || return 0
		[ "$dirty" -ge 200 ] || { last=$dirty; break; }
		if [ "$last" -ge 0 ] && [ "$dirty" -lt "$last" ]; then
			fell=1 flat=0
		elif [ "$last" -ge 0 ]; then
			flat=$((flat + 1))
			[ "$fell" = 0 ] || [ "$flat" -lt 2 ] || { last=$dirty; break; }
		fi
		last=$dirty
		sleep 2
	done
	echo "  (settled for $((SECONDS - start)) s after the load: $last dirty pages left)"
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
	floor)
		echo "== oltp_point_select, 16 threads: sysbench, shakedown, wirefloor"
		prepare_rows 100000
		go build -o "$work/wirefloor" ./scripts/wirefloor
		out=$work/floor.txt
		: >"$out"
		for r in $(seq "$ROUNDS"); do
			measure sysbench "$out" sysbench oltp_point_select "${sb_conn[@]}" --tables=1 --table-size=100000 --threads=16 "--time=$SECS" run
			measure shakedown "$out" "$BIN" run oltp_point_select --target="$url" --tables=1 --table-size=100000 --threads=16 "--time=$SECS"
			measure wirefloor "$out" "$work/wirefloor" --addr "127.0.0.1:$port" --user shakedown --threads 16 --seconds "$SECS"
			echo "  round $r: $(tail -3 "$out" | awk '{printf "%s %.0f qps %.2f us/q  ", $1, $2, $3/$4*1e6}')"
		done
		{
			echo ""
			echo "| oltp_point_select, 16 threads, $ROUNDS rounds x ${SECS}s | QPS (median) | vs sysbench | client CPU us/query (median) | vs sysbench |"
			echo "|---|---|---|---|---|"
			sq=$(med_col sysbench 2 "$out"); sc=$(cpu_per_query sysbench "$out")
			for t in sysbench shakedown wirefloor; do
				q=$(med_col "$t" 2 "$out"); c=$(cpu_per_query "$t" "$out")
				printf '| %s | %.0f | %s | %.2f | %s |\n' "$t" "$q" "$(ratio "$q" "$sq")" "$c" "$(ratio "$c" "$sc")"
			done
		} >>"$work/summary.md"
		;;
	threads1000)
		echo "== oltp_point_select, 1000 threads"
		prepare_rows 100000
		ROUNDS=1 run_case threads1000 oltp_point_select 1000 100000
		;;
	threads)
		echo "== $THREADS_WORKLOADS at $THREADS_LIST threads, 4 tables x 100000 rows, client-io: $CLIENT_IO"
		"$BIN" cleanup oltp_read_write --target="$url" "--tables=$PREP_TABLES" >/dev/null
		"$BIN" prepare oltp_read_write --target="$url" --tables=4 --table-size=100000 --threads=4 >/dev/null
		settle
		out=$work/threads.tsv
		printf 'tool\tmode\tworkload\tthreads\tround\tqps\tcpu_us_per_query\trss_kb\tserver_us_per_query\tresched_ipis_per_query\n' >"$out"
		# The server's CPU per query where its process is on this machine
		# (a sandbox, or a TARGET on loopback whose pid file is readable).
		spid=$(cat "$(mariadb "${my_conn[@]}" -N -e "SELECT @@pid_file")" 2>/dev/null || true)
		hz=$(getconf CLK_TCK)
		# measure_row TOOL MODE W T R CMD...: one results.tsv line, as
		# bench-pinned.sh writes them, and the machine's rescheduling IPIs
		# a query.
		measure_row() {
			local tool=$1 mode=$2 w=$3 t=$4 r=$5 c0=0 c1=0 i0 i1
			shift 5
			[ -z "$spid" ] || c0=$(proc_ticks "$spid")
			i0=$(resched_ipis)
			measure "$tool" "$work/row.txt" "$@" || return 1
			i1=$(resched_ipis)
			[ -z "$spid" ] || c1=$(proc_ticks "$spid")
			tail -1 "$work/row.txt" | awk -v OFS='\t' -v mode="$mode" -v w="$w" -v t="$t" -v r="$r" -v c0="$c0" -v c1="$c1" -v hz="$hz" -v i0="$i0" -v i1="$i1" \
				'{q = $4 > 0 ? $4 : 1; print $1, mode, w, t, r, $2, sprintf("%.2f", $3/q*1e6), $5, sprintf("%.2f", (c1-c0)/hz/q*1e6), sprintf("%.3f", (i1-i0)/q)}' >>"$out"
			tail -1 "$out" | awk -F'\t' '{printf "  %-9s %-7s %-18s %5d threads round %d: %9.0f qps %7.2f us/q %8d KB RSS\n", $1, $2, $3, $4, $5, $6, $7, $8}'
		}
		clients=(sysbench)
		for m in $CLIENT_IO; do clients+=("shakedown:$m"); done
		for w in $THREADS_WORKLOADS; do
			for t in $THREADS_LIST; do
				for r in $(seq "$ROUNDS"); do
					for cl in $(round_order "$r" "${clients[@]}"); do
						if [ "$cl" = sysbench ]; then
							measure_row sysbench - "$w" "$t" "$r" sysbench "$w" "${sb_conn[@]}" --tables=4 --table-size=100000 "--threads=$t" "--time=$SECS" run
						else
							mode=${cl#shakedown:}
							pre=()
							if [[ $mode == *+* ]]; then
								IFS=, read -r -a pre <<<"${mode#*+}"
								pre=(env "${pre[@]}")
							fi
							measure_row shakedown "$mode" "$w" "$t" "$r" "${pre[@]}" "$BIN" run "$w" --target="$url" --tables=4 --table-size=100000 \
								"--threads=$t" "--time=$SECS" "--client-io=${mode%%+*}"
						fi
					done
				done
			done
		done
		{
			echo ""
			echo "threads, $ROUNDS rounds x ${SECS}s${SERVER_CPUS:+, server on CPUs $SERVER_CPUS}${CLIENT_CPUS:+, clients on CPUs $CLIENT_CPUS}:"
			echo ""
			print_medians "$out"
			# Each further mode against the first, round by round: the
			# rounds' spread on shared cores is wider than most effects.
			read -r -a modes <<<"$CLIENT_IO"
			if [ "${#modes[@]}" -gt 1 ]; then
				echo ""
				echo "| workload | threads | client | against | QPS, median of paired rounds | client CPU us/query, median of paired rounds |"
				echo "|---|---|---|---|---|---|"
				# paired COLUMN: the median over rounds of mode $m's figure
				# in COLUMN over the first mode's, for workload $w at $t.
				paired() {
					awk -F'\t' -v w="$w" -v t="$t" -v a="$m" -v b="${modes[0]}" -v n="$1" \
						'$1 == "shakedown" && $3 == w && $4 == t && $2 == a {x[$5] = $n} $1 == "shakedown" && $3 == w && $4 == t && $2 == b {y[$5] = $n}
						END {for (r in x) if ((r in y) && y[r] > 0) print x[r] / y[r]}' "$out" | median
				}
				for w in $THREADS_WORKLOADS; do
					for t in $THREADS_LIST; do
						for m in "${modes[@]:1}"; do
							printf '| %s | %s | %s | %s | %.3f | %.3f |\n' "$w" "$t" "$m" "${modes[0]}" "$(paired 6)" "$(paired 7)"
						done
					done
				done
			fi
		} >>"$work/summary.md"
		;;
	prepare)
		echo "== prepare --tables $PREP_TABLES --table-size $PREP_ROWS --threads 4"
		out=$work/prepare.txt
		: >"$out"
		for r in $(seq "$PREP_ROUNDS"); do
			"$BIN" cleanup oltp_read_write --target="$url" "--tables=$PREP_TABLES" >/dev/null
			/usr/bin/time -o "$work/t" -f "%e" "${pin[@]}" sysbench oltp_read_write "${sb_conn[@]}" "--tables=$PREP_TABLES" "--table-size=$PREP_ROWS" --threads=4 prepare >/dev/null
			echo "sysbench $(cat "$work/t")" >>"$out"
			"$BIN" cleanup oltp_read_write --target="$url" "--tables=$PREP_TABLES" >/dev/null
			/usr/bin/time -o "$work/t" -f "%e" "${pin[@]}" "$BIN" prepare oltp_read_write --target="$url" "--tables=$PREP_TABLES" "--table-size=$PREP_ROWS" --threads=4 >/dev/null
			echo "shakedown $(cat "$work/t")" >>"$out"
			echo "  round $r: $(tail -2 "$out" | tr '\n' ' ')"
		done
		st=$(med_col sysbench 2 "$out"); dt=$(med_col shakedown 2 "$out")
		echo "" >>"$work/summary.md"
		echo "| prepare | sysbench wall s | shakedown wall s | ratio |" >>"$work/summary.md"
		echo "|---|---|---|---|" >>"$work/summary.md"
		printf '| --tables %s --table-size %s --threads 4 | %.1f | %.1f | %s |\n' "$PREP_TABLES" "$PREP_ROWS" "$st" "$dt" "$(ratio "$dt" "$st")" >>"$work/summary.md"
		;;
	tls)
		echo "== TLS cost: oltp_point_select, 16 threads, plain vs ?tls=skip-verify"
		prepare_rows 100000
		out=$work/tls.txt
		: >"$out"
		ssl_accepts() { mariadb -h127.0.0.1 -P"$port" -ushakedown -N -e "SHOW GLOBAL STATUS LIKE 'Ssl_accepts'" | cut -f2; }
		a0=$(ssl_accepts)
		for r in $(seq "$ROUNDS"); do
			for m in $(round_order "$r" plain tls); do
				u=$url
				[ "$m" = tls ] && u="$url?tls=skip-verify"
				measure "$m" "$out" "$BIN" run oltp_point_select --target="$u" --tables=1 --table-size=100000 --threads=16 "--time=$SECS"
			done
			echo "  round $r: $(tail -2 "$out" | awk '{printf "%s %.0f qps %.2f us/q  ", $1, $2, $3/$4*1e6}')"
		done
		# Each TLS run opens 16 TLS connections (and prepare's opened none).
		echo "  server TLS handshakes: $(($(ssl_accepts) - a0)) (want $((ROUNDS * 16)) or more)"
		qp=$(med_col plain 2 "$out"); qt=$(med_col tls 2 "$out")
		cp=$(cpu_per_query plain "$out"); ct=$(cpu_per_query tls "$out")
		{
			echo ""
			echo "| TLS cost, oltp_point_select 16 threads, $ROUNDS rounds x ${SECS}s | QPS plain | QPS TLS | TLS/plain | client CPU us/query plain | client CPU us/query TLS | TLS/plain |"
			echo "|---|---|---|---|---|---|---|"
			printf '| shakedown run, wire client | %.0f | %.0f | %s | %.2f | %.2f | %s |\n' "$qp" "$qt" "$(ratio "$qt" "$qp")" "$cp" "$ct" "$(ratio "$ct" "$cp")"
		} >>"$work/summary.md"
		;;
	base)
		base_rev=${BASE_REV:-HEAD~1}
		echo "== no worse than $base_rev ($(git rev-parse --short "$base_rev")): $BASE_THREADS threads, base and new alternately"
		git worktree add -q --detach "$work/base-src" "$base_rev"
		(cd "$work/base-src" && CGO_ENABLED=0 go build -o "$work/shakedown-base" ./cmd/shakedown)
		git worktree remove --force "$work/base-src"
		prepare_rows 100000
		for th in $BASE_THREADS; do
			{
				echo ""
				echo "| vs $base_rev, $th threads, $ROUNDS rounds x ${SECS}s | QPS base | QPS new | new/base (paired median) | client CPU us/query base | client CPU us/query new | new/base (paired median) |"
				echo "|---|---|---|---|---|---|---|"
			} >>"$work/summary.md"
			for w in oltp_point_select oltp_read_write; do
				out=$work/base-$w-$th.txt
				: >"$out"
				for r in $(seq "$ROUNDS"); do
					for m in $(round_order "$r" base new); do
						b=$BIN
						[ "$m" = base ] && b=$work/shakedown-base
						measure "$m" "$out" "$b" run "$w" --target="$url" --tables=1 --table-size=100000 "--threads=$th" "--time=$SECS"
					done
					echo "  $w $th threads round $r: $(tail -2 "$out" | awk '{printf "%s %.0f qps %.2f us/q  ", $1, $2, $3/$4*1e6}')"
				done
				# Paired: each round's new/base ratio, so a shared machine's slow drift cancels.
				pq=$(awk '$1=="base"{b[++n]=$2} $1=="new"{a[++m]=$2} END{for(i=1;i<=n&&i<=m;i++) if (b[i]>0) print a[i]/b[i]}' "$out" | median)
				pc=$(awk '$1=="base"&&$4>0{b[++n]=$3/$4} $1=="new"&&$4>0{a[++m]=$3/$4} END{for(i=1;i<=n&&i<=m;i++) if (b[i]>0) print a[i]/b[i]}' "$out" | median)
				printf '| %s | %.0f | %.0f | %.3f | %.2f | %.2f | %.3f |\n' "$w" "$(med_col base 2 "$out")" "$(med_col new 2 "$out")" "$pq" \
					"$(cpu_per_query base "$out")" "$(cpu_per_query new "$out")" "$pc" >>"$work/summary.md"
			done
		done
		;;
	monitor)
		echo "== sampler cost: oltp_point_select, 16 threads, --monitor=on vs off"
		prepare_rows 100000
		on_off monitor --monitor=on --monitor=off
		# One SHOW GLOBAL STATUS, timed over 200 in one session: the server
		# time the sampler takes each second.
		start=$(date +%s%N)
		for _ in $(seq 200); do echo "SHOW GLOBAL STATUS;"; done | mariadb -h127.0.0.1 -P"$port" -ushakedown -N >/dev/null
		show_ms=$(awk -v s="$start" -v e="$(date +%s%N)" 'BEGIN{printf "%.3f", (e-s)/1e6/200}')
		# On a shared machine the QPS of alternate runs swings by far more
		# than 1%, so the cost is also measured directly: the server
		# process's CPU time while watch samples an idle server 1000 times
		# (every 10ms), less its idle CPU over as long, per sample; set
		# against the server's CPU per second under the same 16-thread load
		# (CPU per query x QPS, from a monitor=on run's summary).
		pidfile=$(mariadb -h127.0.0.1 -P"$port" -ushakedown -N -e "SHOW GLOBAL VARIABLES LIKE 'pid_file'" | cut -f2)
		spid=$(cat "$pidfile")
		ticks() { awk '{print $14 + $15}' "/proc/$spid/stat"; }
		c0=$(ticks); n0=$(date +%s%N)
		sleep 10 # the idle baseline: a measurement, not a wait
		c1=$(ticks); n1=$(date +%s%N)
		"$BIN" watch "$url" --interval 10ms --count 1000 --json >/dev/null
		c2=$(ticks); n2=$(date +%s%N)
		"$BIN" run oltp_point_select --target="$url" --tables=1 --table-size=100000 --threads=16 "--time=$SECS" --monitor=on >"$work/mon.log"
		load_qps=$(awk '/^ *queries: /{gsub(/\(/,"",$3); print $3}' "$work/mon.log" | tail -1)
		srv_us=$(awk '/CPU per query:/{for (i=1;i<=NF;i++) if ($i=="client,") print $(i+1)}' "$work/mon.log")
		read -r per_sample_ms cost_pct < <(awk -v c0="$c0" -v c1="$c1" -v c2="$c2" -v n0="$n0" -v n1="$n1" -v n2="$n2" -v q="$load_qps" -v us="$srv_us" 'BEGIN{
			idle = (c1 - c0) / ((n1 - n0) / 1e9)         # ticks per second, idle
			used = (c2 - c1) - idle * (n2 - n1) / 1e9    # ticks spent on 1000 samples
			if (used < 0) used = 0
			ms = used * 10 / 1000                        # 100 ticks a second
			load = us * q / 1e6                          # server CPU seconds per second under load
			if (load > 0) printf "%.3f %.3f\n", ms, ms / 1000 / load * 100; else printf "%.3f n/a\n", ms }')
		{
			echo ""
			echo "| sampler cost, oltp_point_select 16 threads | QPS monitor=off | QPS monitor=on | on/off (medians) | on/off (median of paired rounds) | one SHOW GLOBAL STATUS, ms (client wall) | server CPU per sample, ms | server CPU under load, us/query x QPS | sampler share of server CPU, % |"
			echo "|---|---|---|---|---|---|---|---|---|"
			printf '| %d rounds x %ss | %.0f | %.0f | %s | %.4f | %s | %s | %s x %s | %s |\n' "$ROUNDS" "$SECS" "$qoff" "$qon" \
				"$onoff" "$paired" "$show_ms" "$per_sample_ms" "$srv_us" "$load_qps" "$cost_pct"
		} >>"$work/summary.md"
		;;
	stall)
		echo "== stall trigger that never fires: oltp_point_select, 16 threads, --stall vs none"
		prepare_rows 100000
		on_off stall --stall
		{
			echo ""
			echo "| stall trigger that never fires, oltp_point_select 16 threads | QPS without --stall | QPS with --stall | on/off (medians) | on/off (median of paired rounds) |"
			echo "|---|---|---|---|---|"
			printf '| %d rounds x %ss | %.0f | %.0f | %s | %.4f |\n' "$ROUNDS" "$SECS" "$qoff" "$qon" "$onoff" "$paired"
		} >>"$work/summary.md"
		;;
	slap)
		echo "== slap vs mysqlslap: --concurrency=$SLAP_CONCURRENCY --iterations=$SLAP_ITERATIONS --number-of-queries=$SLAP_QUERIES, hot row"
		mariadb "${my_conn[@]}" -e "CREATE DATABASE IF NOT EXISTS test; CREATE TABLE IF NOT EXISTS test.seckill (id INT PRIMARY KEY, num INT NOT NULL); REPLACE INTO test.seckill VALUES (1, 2000000000)"
		slap_args=("${my_conn[@]}" "--concurrency=$SLAP_CONCURRENCY" "--iterations=$SLAP_ITERATIONS" --create-schema=test
			"--query=begin;update seckill set num=num-1 where id =1 and num>1;commit;" "--delimiter=;" "--number-of-queries=$SLAP_QUERIES")
		out=$work/slap.txt
		: >"$out"
		# measure_slap TOOL CMD...: appends "tool qps cpu_s queries rss_kb wall_s";
		# queries and time come from the lines both tools print (per level:
		# clients x queries per client x iterations, average seconds x iterations).
		measure_slap() {
			local tool=$1
			shift
			/usr/bin/time -o "$work/t" -f "%U %S %M %e" "${pin[@]}" "$@" >"$work/slap.log" 2>&1 || { cat "$work/slap.log" >&2; return 1; }
			read -r u s m e <"$work/t"
			awk -v tool="$tool" -v it="$SLAP_ITERATIONS" -v u="$u" -v s="$s" -v m="$m" -v e="$e" '
				/Average number of seconds to run all queries:/ {t += $(NF-1) * it}
				/Number of clients running queries:/ {c = $NF}
				/Average number of queries per client:/ {q += c * $NF * it}
				END {printf "%s %.2f %.3f %d %d %s\n", tool, (t > 0 ? q / t : 0), u + s, q, m, e}' "$work/slap.log" >>"$out"
		}
		for r in $(seq "$ROUNDS"); do
			if [ $((r % 2)) -eq 1 ]; then
				measure_slap mysqlslap mysqlslap --no-defaults "${slap_args[@]}"
				measure_slap shakedown "$BIN" slap "${slap_args[@]}"
			else
				measure_slap shakedown "$BIN" slap "${slap_args[@]}"
				measure_slap mysqlslap mysqlslap --no-defaults "${slap_args[@]}"
			fi
			echo "  round $r: $(tail -2 "$out" | awk '{printf "%s %.0f qps %.2f us/q  ", $1, $2, $3/$4*1e6}')"
		done
		mq=$(med_col mysqlslap 2 "$out"); dq=$(med_col shakedown 2 "$out")
		mc=$(cpu_per_query mysqlslap "$out"); dc=$(cpu_per_query shakedown "$out")
		{
			echo ""
			echo "| slap, hot row, --concurrency=$SLAP_CONCURRENCY x $SLAP_ITERATIONS x $SLAP_QUERIES queries | mysqlslap QPS | shakedown QPS | ratio | mysqlslap CPU us/query | shakedown CPU us/query | ratio |"
			echo "|---|---|---|---|---|---|---|"
			printf '| %d rounds | %.0f | %.0f | %s | %.2f | %.2f | %s |\n' "$ROUNDS" "$mq" "$dq" "$(ratio "$dq" "$mq")" "$mc" "$dc" "$(ratio "$dc" "$mc")"
		} >>"$work/summary.md"
		;;
	*)
		echo "bench.sh: unknown case $c (point_select read_write floor threads1000 threads prepare tls base monitor stall slap)" >&2
		exit 2
		;;
	esac
done

echo
echo "Medians over alternating rounds (ratio = shakedown / sysbench):"
echo
# The first table's header alone, when no case added a row to it, is left out.
awk 'NR == 3 && !/^\| / {skip = 1} {line[NR] = $0} END {for (i = (skip ? 3 : 1); i <= NR; i++) print line[i]}' "$work/summary.md"
