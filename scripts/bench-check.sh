#!/usr/bin/env bash
# Times shakedown check on a large schema, on two local MariaDB sandboxes:
# the source gets DBS databases of TABLES_PER_DB tables each (2,000 tables
# by default: a primary key, a secondary index, text and date columns,
# every tenth table without a primary key, every twentieth MyISAM) and
# ACCOUNTS accounts (500) with grants on one database each; the target a
# copy of the schema without data (mariadb-dump --no-data) and of the
# accounts. The target runs with NO_ZERO_DATE in its sql_mode, so the check
# also probes every date column. check runs ROUNDS times; the script prints
# each wall time and the median, with the findings of the last run.
#
#   scripts/bench-check.sh
#   ROUNDS=5 DBS=40 TABLES_PER_DB=100 ACCOUNTS=1000 scripts/bench-check.sh
#
# Knobs (environment): ROUNDS (3), DBS (20), TABLES_PER_DB (100), ACCOUNTS
# (500), BIN (bin/shakedown), KEEP=1 keeps the sandboxes.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/bench-lib.sh
. scripts/bench-lib.sh

knobs ROUNDS=3 DBS=20 TABLES_PER_DB=100 ACCOUNTS=500
bench_local check

bench_pair check "cbsrc$$" "cbdst$$" --set innodb_buffer_pool_size=256M -- \
	--set sql_mode=STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION
client() { mariadb -ushakedown -h127.0.0.1 -P"$1" "${@:2}"; }

echo "# shakedown $("$BIN" version | cut -d' ' -f2) check"
bench_machine
echo "# $DBS databases x $TABLES_PER_DB tables = $((DBS * TABLES_PER_DB)) tables, $ACCOUNTS accounts, rounds=$ROUNDS"

start=$(date +%s)
{
	echo "SET SESSION sql_log_bin = 0;"
	for d in $(seq 1 "$DBS"); do
		echo "CREATE DATABASE app$d;"
		for t in $(seq 1 "$TABLES_PER_DB"); do
			engine=InnoDB
			[ $((t % 20)) -ne 0 ] || engine=MyISAM
			if [ $((t % 10)) -eq 0 ]; then
				echo "CREATE TABLE app$d.t$t (id BIGINT NOT NULL, name VARCHAR(64), created DATETIME, KEY (name)) ENGINE=$engine;"
			else
				echo "CREATE TABLE app$d.t$t (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, name VARCHAR(64) NOT NULL, created DATETIME, amount DECIMAL(12,2), KEY (name, created)) ENGINE=$engine;"
			fi
		done
	done
	for a in $(seq 1 "$ACCOUNTS"); do
		d=$(( (a - 1) % DBS + 1 ))
		echo "CREATE USER 'u$a'@'%' IDENTIFIED BY 'pw$a';"
		echo "GRANT SELECT, INSERT, UPDATE ON app$d.* TO 'u$a'@'%';"
	done
} >"$work/schema.sql"
client "$sp" <"$work/schema.sql"
mariadb-dump -ushakedown -h127.0.0.1 -P"$sp" --no-data --databases $(seq -f 'app%g' 1 "$DBS") | client "$dp"
grep -E '^(CREATE USER|GRANT)' "$work/schema.sql" | client "$dp"
echo "# schema ready in $(( $(date +%s) - start ))s"

times=()
for r in $(seq 1 "$ROUNDS"); do
	t0=$(date +%s.%N)
	set +e
	"$BIN" check "$src_url" "$dst_url" --json "$work/check.json" >"$work/check.txt"
	code=$?
	set -e
	t1=$(date +%s.%N)
	if [ "$code" -ne 0 ] && [ "$code" -ne 3 ]; then
		cat "$work/check.txt" >&2
		echo "bench-check: check failed (exit $code)" >&2
		exit 1
	fi
	s=$(echo "$t1 - $t0" | bc)
	times+=("$s")
	printf 'round %d: %.2fs (exit %d)\n' "$r" "$s" "$code"
done
median=$(printf '%s\n' "${times[@]}" | median)
printf 'check median: %.2fs over %d rounds\n' "$median" "$ROUNDS"
sed -n '3,4p' "$work/check.txt"
python3 - "$work/check.json" <<'PY'
import collections, json, sys
doc = json.load(open(sys.argv[1]))
counts = collections.Counter((f["severity"], f["check"]) for f in doc["findings"])
for (sev, check), n in sorted(counts.items()):
    print(f"  {sev:8} {check:28} {n}")
print(f"  not checked: {len(doc['not_checked'])}")
PY
