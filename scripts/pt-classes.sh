#!/usr/bin/env bash
# Compares shakedown capture's fingerprints with pt-query-digest's classes
# on the same logs: for each log, the statements each tool reads and how
# many of pt-query-digest's classes (its fingerprints, from pt-fingerprint)
# map to one shakedown fingerprint each. Administrator commands, which
# pt-query-digest counts as classes and capture as no statement, are left
# out.
#
#   scripts/pt-classes.sh internal/capture/testdata/logs/*.log
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/shakedown}
[ -x "$BIN" ] || make -s build
work=$(mktemp -d /tmp/shakedown-pt-classes.XXXXXX)
trap 'rm -rf "$work"' EXIT
total=0
mapped=0
for log in "$@"; do
	case $(basename "$log") in
	general*) type=genlog ;;
	*) type=slowlog ;;
	esac
	if ! "$BIN" capture "$log" -o "$work/c" 2>"$work/err"; then
		echo "$log: capture failed: $(cat "$work/err")"
		continue
	fi
	# One statement a record: its text (for pt-fingerprint) and digest.
	jq -j 'select(.sql != null) | .sql + "\u0000"' "$work/c" >"$work/q"
	jq -r 'select(.sql != null) | .digest' "$work/c" >"$work/d"
	# One query at a time: reading a file, pt-fingerprint joins some.
	while IFS= read -r -d '' q; do pt-fingerprint --query "$q" </dev/null || true; done <"$work/q" >"$work/f"
	paste -d '\t' "$work/f" "$work/d" | sort -u >"$work/pairs"
	pt=$(pt-query-digest --type "$type" --limit 100%:10000 --output json "$log" 2>/dev/null |
		jq -r '[.classes[] | select(.fingerprint | test("^administrator command") | not) | .query_count] | add // 0')
	classes=$(cut -f1 "$work/pairs" | sort -u | wc -l)
	one=$(cut -f1 "$work/pairs" | sort | uniq -c | awk '$1 == 1' | wc -l)
	sd=$(wc -l <"$work/d")
	echo "$(basename "$log"): statements pt-query-digest $pt, shakedown $sd; pt classes $classes, mapping to one shakedown fingerprint $one"
	awk -F'\t' '{n[$1]++; d[$1] = d[$1] " " $2} END {for (f in n) if (n[f] > 1) print "  split:", f, "->" d[f]}' "$work/pairs"
	total=$((total + classes))
	mapped=$((mapped + one))
done
echo "all: $mapped of $total pt-query-digest classes map to one shakedown fingerprint ($(awk -v a="$mapped" -v b="$total" 'BEGIN {printf "%.0f", b ? 100 * a / b : 0}')%)"
