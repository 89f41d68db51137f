#!/usr/bin/env bash
# The rehearsal of examples/rehearsal/ on this machine: two sandboxes, the
# source and a candidate that differs in a setting (sort_buffer_size) and
# lacks an index, the example application loaded on both, then
# shakedown rehearse, which ends on a readiness page that says why the
# candidate is not ready: out/demo-rehearse/app-new.readiness.html.
#
#   scripts/demo-rehearse.sh        (make demo-rehearse)
#
# Knobs (environment): BIN (bin/shakedown), OUT (out/demo-rehearse),
# KEEP (1: leave the sandboxes up).
set -euo pipefail
cd "$(dirname "$0")/.."

BIN=${BIN:-bin/shakedown}
OUT=${OUT:-out/demo-rehearse}
KEEP=${KEEP:-0}
BIN=$(realpath "$BIN")

src=$("$BIN" sandbox up demo-rehearse-old --url-only)
dst=$("$BIN" sandbox up demo-rehearse-new --set sort_buffer_size=4194304 --url-only)
if [ "$KEEP" != 1 ]; then
	trap '"$BIN" sandbox down demo-rehearse-old >/dev/null; "$BIN" sandbox down demo-rehearse-new >/dev/null' EXIT
fi
port() { sed -E 's|.*:([0-9]+)/.*|\1|' <<<"$1"; }
sql() { mariadb -h127.0.0.1 -P"$1" -ushakedown "${@:2}"; }
for p in "$(port "$src")" "$(port "$dst")"; do
	sql "$p" -e "DROP DATABASE IF EXISTS app"
	sql "$p" <examples/rehearsal/app.sql
done
sql "$(port "$dst")" -e "DROP INDEX email_idx ON app.customers"

mkdir -p "$OUT"
cp examples/rehearsal/app.capture examples/rehearsal/queries.sql "$OUT"/
sed -e "s|mysql://shakedown@127.0.0.1:3401/app|${src%/*}/app|" -e "s|mysql://shakedown@127.0.0.1:3402/app|${dst%/*}/app|" \
	examples/rehearsal/rehearsal.yaml >"$OUT"/rehearsal.yaml
cd "$OUT"
rm -f rehearsal.db
status=0
"$BIN" rehearse rehearsal.yaml --store rehearsal.db || status=$?
# Not ready (3) is what this rehearsal is meant to end on.
if [ "$status" != 3 ]; then
	echo "demo-rehearse: rehearse exited $status, want 3 (not ready)" >&2
	exit 1
fi
echo "page: $OUT/app-new.readiness.html"
