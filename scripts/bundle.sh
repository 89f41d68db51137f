#!/usr/bin/env bash
# Builds one tarball that measures shakedown against sysbench on a Linux
# x86-64 machine with no network and no package registry: shakedown (static),
# mariadbd, sysbench 1.0.20 with its Lua scripts, GNU time, taskset and
# setsid, each with every library it links and the dynamic loader (they run as
# lib/ld-linux-x86-64.so.2 --library-path lib bin/PROG), the server's
# messages and character sets, a my.cnf with the settings of `shakedown
# sandbox up`, and a data directory made with mariadb-install-db that holds
# the user shakedown and the database sbtest, the server shut down cleanly
# before packing. scripts/bench-pinned.sh runs it on the far side.
#
# The sbtest tables are made there, by the bundle's shakedown prepare on the
# first start (4 tables of 100,000 rows take seconds on 8 cores), because
# packed they do not fit the size that travels: their random digits
# compress to no less than 9 MB a table (46 MB for four with gzip), and the
# redo log the load leaves behind adds 58 MB. PREPARED=1 packs them
# prepared all the same (a tarball of about 130 MB).
#
#   scripts/bundle.sh                      writes out/shakedown-bench-linux-amd64.tar.gz
#   OUT=/tmp/b.tar.gz scripts/bundle.sh
#
# COPY_TOOLS=1 adds mariadb-dump, mariadb, mydumper and myloader with their
# libraries (about 5 MB more packed), for scripts/bench-copy-pinned.sh
# (needs the mydumper package here: apt-get install mydumper).
#
# Knobs (environment): OUT, PREPARED (0), TABLES (4) and ROWS (100000) for
# PREPARED=1, CAPACITY_TEST (0; 1 adds bin/capacity.test, the static and
# stripped test binary of internal/capacity that scripts/device-capacity.sh
# runs, about 8 MB more packed), COPY_TOOLS (0), MARIADBD, SYSBENCH,
# INSTALL_DB (mariadb-install-db), SYSBENCH_LUA (/usr/share/sysbench),
# MYSQL_SHARE (/usr/share/mysql). It needs this machine's MariaDB server
# and sysbench (make deps).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/bench-lib.sh

OUT=${OUT:-out/shakedown-bench-linux-amd64.tar.gz}
TABLES=${TABLES:-4}
ROWS=${ROWS:-100000}
PREPARED=${PREPARED:-0}
MARIADBD=${MARIADBD:-$(command -v mariadbd || echo /usr/sbin/mariadbd)}
SYSBENCH=${SYSBENCH:-$(command -v sysbench)}
INSTALL_DB=${INSTALL_DB:-$(command -v mariadb-install-db)}
SYSBENCH_LUA=${SYSBENCH_LUA:-/usr/share/sysbench}
MYSQL_SHARE=${MYSQL_SHARE:-/usr/share/mysql}
GNU_TIME=/usr/bin/time
TASKSET=$(command -v taskset)
SETSID=$(command -v setsid)
for f in "$MARIADBD" "$SYSBENCH" "$INSTALL_DB" "$GNU_TIME" "$TASKSET" "$SETSID" "$SYSBENCH_LUA/oltp_common.lua" "$MYSQL_SHARE/english/errmsg.sys"; do
	[ -e "$f" ] || { echo "bundle.sh: $f is missing; run make deps (GNU time: apt-get install time)" >&2; exit 1; }
done

work=$(mktemp -d /tmp/shakedown-bundle.XXXXXX)
B=$work/shakedown-bench
SERVER_PID=
trap 'bundle_server_stop "$B" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
mkdir -p "$B/bin" "$B/lib/plugin" "$B/share/sysbench" "$B/share/mysql/english" "$B/run"

echo "bundle: binaries and libraries"
commit=$(git describe --always --dirty --abbrev=12 --match=NONE 2>/dev/null || echo unknown)
CGO_ENABLED=0 go build -buildvcs=false -ldflags "-X github.com/shakedown/shakedown/internal/version.commit=$commit" \
	-o "$B/bin/shakedown" ./cmd/shakedown
if [ "${CAPACITY_TEST:-0}" = 1 ]; then
	CGO_ENABLED=0 go test -c -buildvcs=false -ldflags '-s -w' -o "$B/bin/capacity.test" ./internal/capacity/
fi
cp -L "$MARIADBD" "$B/bin/mariadbd"
cp -L "$SYSBENCH" "$B/bin/sysbench"
cp -L "$GNU_TIME" "$B/bin/time"
cp -L "$TASKSET" "$B/bin/taskset"
cp -L "$SETSID" "$B/bin/setsid"
progs=(mariadbd sysbench time taskset setsid)
if [ "${COPY_TOOLS:-0}" = 1 ]; then
	for prog in mariadb-dump mariadb mydumper myloader; do
		path=$(command -v "$prog") || { echo "bundle.sh: COPY_TOOLS=1: $prog is missing (apt-get install mariadb-client mydumper)" >&2; exit 1; }
		cp -L "$path" "$B/bin/$prog"
		progs+=("$prog")
	done
fi
for prog in "${progs[@]}"; do
	if ldd "$B/bin/$prog" | grep -q "not found"; then
		echo "bundle.sh: $prog links a library this machine lacks:" >&2
		ldd "$B/bin/$prog" | grep "not found" >&2
		exit 1
	fi
	# "libz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x...)": copied by
	# the name the program asks for; the loader line has no "=>".
	ldd "$B/bin/$prog" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
		cp -L "$path" "$B/lib/$name"
	done
	loader=$(ldd "$B/bin/$prog" | awk '$1 ~ /^\/.*ld-linux-x86-64\.so\.2$/ {print $1}')
	[ -z "$loader" ] || cp -L "$loader" "$B/lib/ld-linux-x86-64.so.2"
done
cp "$SYSBENCH_LUA"/*.lua "$B/share/sysbench/"
cp "$MYSQL_SHARE/english/errmsg.sys" "$B/share/mysql/english/"
cp -r "$MYSQL_SHARE/charsets" "$B/share/mysql/"
cp scripts/bench-pinned.sh scripts/bench-pinned-more.sh scripts/bench-core.sh scripts/bench-copy-pinned.sh scripts/device-capacity.sh scripts/bench-lib.sh "$B/"

# The settings of `shakedown sandbox up`: internal/sandbox/settings.go
# (defaultSettings) and the sandbox's own options in sandbox.go
# (serverArgs). Keep them in step.
cat >"$B/my.cnf" <<'EOF'
[mysqld]
max_connections=5000
max_prepared_stmt_count=1048576
innodb_buffer_pool_size=1G
innodb_log_file_size=256M
table_open_cache=4000
open_files_limit=65535
thread_cache_size=256
back_log=2000
max_allowed_packet=64M
local_infile=1
skip_log_bin
bind_address=127.0.0.1
skip_name_resolve
EOF

echo "bundle: data directory"
root=()
[ "$(id -u)" != 0 ] || root=(--user=root)
# As the sandbox does: no option files, and the settings that must hold
# from the data directory's creation on (innodb_log_file_size).
"$INSTALL_DB" --no-defaults "--datadir=$B/data" --auth-root-authentication-method=normal --skip-test-db \
	--innodb-log-file-size=256M "${root[@]}" >"$work/install.log" 2>&1 ||
	{ cat "$work/install.log" >&2; exit 1; }
# The sandbox's init file: the passwordless user shakedown on 127.0.0.1
# and the database sbtest.
cat >"$work/init.sql" <<'EOF'
CREATE DATABASE IF NOT EXISTS sbtest;
CREATE USER IF NOT EXISTS 'shakedown'@'127.0.0.1';
CREATE USER IF NOT EXISTS 'shakedown'@'localhost';
GRANT ALL PRIVILEGES ON *.* TO 'shakedown'@'127.0.0.1' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO 'shakedown'@'localhost' WITH GRANT OPTION;
EOF
port=$((20000 + RANDOM % 20000))
# The bundle's own server through its own loader: packing proves it starts.
bundle_server_start "$B" "$port" "" "--init-file=$work/init.sql"
if [ "$PREPARED" = 1 ]; then
	echo "bundle: shakedown prepare oltp_read_write --tables $TABLES --table-size $ROWS"
	SHAKEDOWN_HOME=$work/home "$B/bin/shakedown" prepare oltp_read_write --target "mysql://shakedown@127.0.0.1:$port/sbtest" \
		--tables "$TABLES" --table-size "$ROWS" --threads "$TABLES" >"$work/prepare.log" 2>&1 ||
		{ cat "$work/prepare.log" >&2; exit 1; }
	echo "$TABLES $ROWS" >"$B/data/.prepared"
fi
if ! bundle_server_stop "$B"; then
	echo "bundle.sh: the server did not shut down cleanly:" >&2
	tail -20 "$B/run/error.log" >&2
	exit 1
fi
rm -rf "$B/run"
mkdir -p "$B/run"

cat >"$B/README" <<EOF
shakedown against sysbench $("$SYSBENCH" --version | awk '{print $2}') on MariaDB $("$MARIADBD" --version | awk '{print $3}'), the client on cores of its own.
Built $(date -u +%Y-%m-%dT%H:%MZ) from shakedown $commit.

  cd shakedown-bench && ./bench-pinned.sh

Knobs and what it measures: the comment at the top of bench-pinned.sh.
Results: results.tsv (one line per run), logs in run/logs, the server's log in run/error.log.
EOF
if [ -x "$B/bin/capacity.test" ]; then
	cat >>"$B/README" <<'EOF'

capacity's checks on a durable and a relaxed server, about 140 s (the comment at the top of device-capacity.sh):

  cd shakedown-bench && OUT=/somewhere ./device-capacity.sh
EOF
fi

mkdir -p "$(dirname "$OUT")"
tar -C "$work" --sparse -czf "$OUT" shakedown-bench
echo "bundle: $OUT, $(du -h "$OUT" | cut -f1) ($(du -sh "$B" | cut -f1) unpacked)"
