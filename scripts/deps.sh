#!/usr/bin/env bash
# Installs the programs shakedown's tests and demo use, from Debian's
# packages, when they are missing:
#   mariadbd, mariadb-install-db  mariadb-server  (sandboxes start their own servers)
#   libgalera_smm.so              galera-4        (the Galera cluster sandbox's provider)
#   mariadb-backup                mariadb-backup  (the Galera nodes' state transfer)
#   mysqlslap, mariadb            mariadb-client  (mysqlslap is the slap command's peer)
#   sysbench                      sysbench        (the peer of prepare/run)
#   chromium                      chromium        (the browser test of the HTML report)
#   promtool                      prometheus      (checks the --metrics-addr exposition)
#   openssl                       openssl         (a certificate for bench.sh's tls case)

#   tcpdump                       tcpdump         (the pcap a capture test records on loopback)
#   xz                            xz-utils        (unpacks ../shared/flavours/tidb-server.xz for the tests)
#   pt-upgrade                    percona-toolkit (the peer of replay, in scripts/bench-replay.sh)
# Idempotent: with everything present it changes nothing and asks no one.
# It never starts the distro's MariaDB service (tests run their own servers
# on loopback); if that service already runs, it is left alone.
set -euo pipefail

have() {
	command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/usr/bin/$1" ] || [ -f "/usr/lib/galera/$1" ]
}

# The programs (comma-separated) and the package that brings them.
wanted="mariadbd,mariadb-install-db mariadb-server
mariadb-backup mariadb-backup
libgalera_smm.so galera-4
mysqlslap mariadb-client
sysbench sysbench
chromium chromium
promtool prometheus
openssl openssl
tcpdump tcpdump
xz xz-utils
pt-upgrade percona-toolkit"

# absent FIELD: for each package in wanted with a program missing, its name
# (FIELD 2) or that of its first program (FIELD 1), one a line.
absent() {
	local progs pkg p
	while read -r progs pkg; do
		for p in ${progs//,/ }; do
			if ! have "$p"; then
				if [ "$1" = 2 ]; then echo "$pkg"; else echo "${progs%%,*}"; fi
				break
			fi
		done
	done <<<"$wanted"
}

mapfile -t pkgs < <(absent 2)

if [ "${#pkgs[@]}" -eq 0 ]; then
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		sudo=(sudo)
	else
		echo "deps.sh: missing ${pkgs[*]}; install them as root: apt-get install ${pkgs[*]}" >&2
		exit 1
	fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps.sh: missing ${pkgs[*]} and no apt-get here; install MariaDB server and client, sysbench, chromium, prometheus (promtool), tcpdump and percona-toolkit by hand" >&2
	exit 1
fi

echo "deps.sh: installing ${pkgs[*]}" >&2
export DEBIAN_FRONTEND=noninteractive

# invoke-rc.d asks policy-rc.d whether it may start a service; 101 means no.
# Only add one if there is none, and remove only our own.
policy=/usr/sbin/policy-rc.d
cleanup=()
if [ ! -e "$policy" ]; then
	"${sudo[@]}" sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"
	cleanup=("${sudo[@]}" rm -f "$policy")
fi
trap '[ "${#cleanup[@]}" -eq 0 ] || "${cleanup[@]}"' EXIT

"${sudo[@]}" apt-get update -q
# The package may still try to start its service (without systemd that can
# fail); that is fine as long as the packages end up installed.
if ! "${sudo[@]}" apt-get install -y -q --no-install-recommends "${pkgs[@]}"; then
	"${sudo[@]}" dpkg --configure -a || true
fi

mapfile -t missing < <(absent 1)
if [ "${#missing[@]}" -ne 0 ]; then
	echo "deps.sh: still missing after install: ${missing[*]}" >&2
	exit 1
fi
