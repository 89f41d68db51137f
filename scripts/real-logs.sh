#!/usr/bin/env bash
# Runs shakedown capture (format detected, no flags) and pt-query-digest on
# every file under the directories given, and says how much of what
# pt-query-digest reads capture reads with the same text: per file and per
# kind (slow log, general log, packet capture, tcpdump -x text), the
# statements each tool reads, how many of pt-query-digest's statements
# capture has with the same text (whitespace runs made one space), how many
# of pt-query-digest's classes map to one capture fingerprint, silent zeros
# (pt-query-digest finds statements, capture exits 0 with none) and, for
# packet captures, capture's count over RUNS runs. Totals per kind are
# checked against the accuracy capture promises; a JSON summary is written.
#
#   scripts/real-logs.sh DIR...
#   BIN=bin/shakedown RUNS=3 PORT=3306 JSON=/tmp/real-logs.json DIFF=3 scripts/real-logs.sh DIR...
#   AS_PCAP=1 scripts/real-logs.sh DIR...   # tcpdump -x text read as pcaps
#
# The kind is told here from each file's content, independently of
# capture's own detection: a pcap or pcapng magic number; hex lines
# ("	0x0000:") or tcpdump's packet lines; slow log headers ("# Time:",
# "# User@Host:", "# Query_time:"); a general log's command lines. Gzipped
# files are read through gunzip by both tools. pt-query-digest reads packet
# captures as tcpdump -x text, which it needs (PORT, the server's port, is
# given to both: --port, and --watch-server with the first address seen on
# it). Administrator commands (Connect, Quit, Init DB...) and, on the wire,
# prepares, closes and resets of prepared statements, which
# pt-query-digest reports as classes and capture as no statement, are left
# out of both counts; a prepared statement's execution is compared as
# pt-query-digest writes it, "EXECUTE" and the text with its values. DIFF=N prints the
# first N of pt-query-digest's statements that capture lacks, per file.
# Exit status: 0 when every threshold holds, 3 when one does not, 2 on bad
# arguments.
set -euo pipefail
[ $# -gt 0 ] || {
	echo "usage: scripts/real-logs.sh DIR..." >&2
	exit 2
}
for d in "$@"; do
	[ -e "$d" ] || {
		echo "real-logs: $d: no such file or directory" >&2
		exit 2
	}
done
here=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$here/bin/shakedown}
if [ ! -x "$BIN" ]; then make -s -C "$here" build; fi
RUNS=${RUNS:-3}
JSON=${JSON:-${TMPDIR:-/tmp}/real-logs.json}
LIMIT=${LIMIT:-300} # seconds any one tool may take on one file
PORT=${PORT:-3306}  # the server's port in packet captures
port=()
[ "$PORT" = 3306 ] || port=(--port "$PORT")
for t in pt-query-digest tcpdump python3; do
	command -v "$t" >/dev/null || {
		echo "real-logs: $t is needed" >&2
		exit 2
	}
done
work=$(mktemp -d "${TMPDIR:-/tmp}/shakedown-real-logs.XXXXXX")
trap 'rm -rf "$work"' EXIT

# pt-query-digest's filter runs after its fingerprint is made: print each
# event's class and text, one record a NUL.
filter='print(STDOUT "\x1e" . ($event->{fingerprint} // "") . "\x1f" . ($event->{arg} // "") . "\x00")'

# text2pcap TEXT PCAP writes the packets of tcpdump -x text as a pcap of
# raw IP packets, their times kept (AS_PCAP=1: a directory of text dumps
# read as the packet captures they were).
text2pcap() {
	python3 - "$1" "$2" <<'PY'
import calendar, re, struct, sys, time
head = re.compile(r"^(?:(\d{4}-\d\d-\d\d) )?(\d\d):(\d\d):(\d\d)\.(\d+) IP6? ")
hexl = re.compile(r"^\s+0x[0-9a-f]{4}:\s+((?:[0-9a-f]{2,4} ?)+)")
pkts, cur = [], None
for line in open(sys.argv[1], errors="replace"):
    m = head.match(line)
    if m:
        day = m.group(1) or "1970-01-01"
        secs = calendar.timegm(time.strptime(day, "%Y-%m-%d")) + int(m.group(2)) * 3600 + int(m.group(3)) * 60 + int(m.group(4))
        cur = [secs, int(m.group(5)[:6].ljust(6, "0")), bytearray()]
        pkts.append(cur)
        continue
    m = hexl.match(line)
    if m and cur is not None:
        cur[2] += bytes.fromhex(m.group(1).replace(" ", ""))
with open(sys.argv[2], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 101))
    for secs, us, data in pkts:
        if data:
            f.write(struct.pack("<IIII", secs, us, len(data), len(data)) + bytes(data))
PY
}

# kind FILE: pcap, tcpdump, slowlog, genlog, or unknown.
kind() {
	local magic
	magic=$(head -c 4 "$1" | od -An -tx1 | tr -d ' \n')
	case $magic in
	d4c3b2a1 | a1b2c3d4 | 4d3cb2a1 | a1b23c4d | 0a0d0d0a)
		echo pcap
		return
		;;
	esac
	if grep -qaEm1 '^[[:space:]]+0x[0-9a-f]{4}:  [0-9a-f]{2,4} ' "$1" ||
		grep -qaEm1 '^[0-9-]+ [0-9:.]+ IP [0-9.]+ > [0-9.]+: tcp' "$1"; then
		echo tcpdump
	elif grep -qaEm1 '^# (Time|User@Host|Query_time):' "$1"; then
		echo slowlog
	elif grep -qaEm1 '[0-9]+ +(Query|Connect|Init DB|Quit|Prepare|Execute)([[:space:]]|$)' "$1"; then
		echo genlog
	else
		echo unknown
	fi
}

: >"$work/files"
n=0
while IFS= read -r -d '' f; do
	n=$((n + 1))
	d="$work/$n"
	mkdir "$d"
	in=$f
	case $f in
	*.gz)
		gunzip -c "$f" >"$d/log" 2>/dev/null || : >"$d/log"
		in=$d/log
		;;
	esac
	k=$(kind "$in")
	if [ "$k" = tcpdump ] && [ -n "${AS_PCAP:-}" ]; then
		text2pcap "$in" "$d/log.pcap"
		in=$d/log.pcap k=pcap
	fi
	printf '%s\t%s\t%s\n' "$n" "$k" "$f" >>"$work/files"
	[ "$k" = unknown ] && continue
	ptin=$in ptype=$k
	if [ "$k" = pcap ]; then
		timeout "$LIMIT" tcpdump -r "$in" -x -nn -q -tttt >"$d/pt.txt" 2>/dev/null || true
		ptin=$d/pt.txt ptype=tcpdump
	fi
	watch=()
	if [ "$ptype" = tcpdump ] && [ "$PORT" != 3306 ]; then
		# pt-query-digest watches another port only on a named server.
		host=$(grep -aoEm1 "[0-9a-f.:]+\.$PORT[ :]" "$ptin" | head -1 | sed -E "s/\.$PORT[ :]\$//") || true
		[ -n "$host" ] && watch=(--watch-server "$host:$PORT")
	fi
	timeout "$LIMIT" pt-query-digest --type "$ptype" --no-report "${watch[@]}" --filter "$filter" "$ptin" \
		>"$d/pt" 2>"$d/pt.err" </dev/null || echo $? >"$d/pt.rc"
	runs=1
	[ "$k" = pcap ] && runs=$RUNS
	for i in $(seq 1 "$runs"); do
		rc=0
		timeout "$LIMIT" "$BIN" capture "$in" "${port[@]}" -o "$d/c$i" 2>"$d/err$i" </dev/null || rc=$?
		echo "$rc" >"$d/rc$i"
	done
done < <(find "$@" -type f -print0 | sort -z)

python3 - "$work" "$JSON" "${DIFF:-0}" <<'EOF'
import collections, json, os, re, sys

work, out, ndiff = sys.argv[1], sys.argv[2], int(sys.argv[3])
ws = re.compile(r"\s+")

def norm(s):
    return ws.sub(" ", s).strip().rstrip(";").rstrip()

def pt_events(path, kind):
    evs = []
    try:
        data = open(path, "rb").read().decode("utf-8", "replace")
    except OSError:
        return evs
    for rec in data.split("\x00"):
        i = rec.find("\x1e")
        if i < 0:
            continue
        fp, _, arg = rec[i + 1:].partition("\x1f")
        if arg.startswith("administrator command:"):
            continue
        # On the wire, pt-query-digest names a statement prepared, closed
        # or reset as such; capture counts none of them as a statement.
        if kind in ("tcpdump", "pcap") and arg.startswith(("PREPARE ", "DEALLOCATE PREPARE ", "RESET ")):
            continue
        evs.append((fp, norm(arg)))
    return evs

def value(v):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v + '"'
    return "?"

def executed(sql, params):
    # pt-query-digest's text of a prepared statement's execution: EXECUTE
    # and the statement with its values in place of the '?'.
    out, it, quote = [], iter(params or []), None
    for ch in sql:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
        elif ch == "?":
            ch = value(next(it, None))
        out.append(ch)
    return "EXECUTE " + "".join(out)

def ours(path):
    stmts = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for i, line in enumerate(f):
                if i == 0:
                    continue
                r = json.loads(line)
                if r.get("sql"):
                    sql = executed(r["sql"], r.get("params")) if r.get("prepared") else r["sql"]
                    stmts.append((r.get("digest", ""), norm(sql)))
    except (OSError, ValueError):
        pass
    return stmts

def first_line(path, want):
    try:
        for line in open(path, encoding="utf-8", errors="replace"):
            if want in line:
                return line.strip()
    except OSError:
        pass
    return ""

limits = {"slowlog": 98.0, "genlog": 95.0, "pcap": 95.0, "tcpdump": 90.0}
names = {"slowlog": "slow logs", "genlog": "general logs", "pcap": "packet captures", "tcpdump": "tcpdump -x text"}
files, unknown = [], []
for line in open(os.path.join(work, "files")):
    n, kind, path = line.rstrip("\n").split("\t", 2)
    if kind == "unknown":
        unknown.append(path)
        continue
    d = os.path.join(work, n)
    pt = pt_events(os.path.join(d, "pt"), kind)
    runs = sorted(int(x[2:]) for x in os.listdir(d) if x.startswith("rc"))
    caps = [ours(os.path.join(d, "c%d" % i)) for i in runs]
    rcs = [int(open(os.path.join(d, "rc%d" % i)).read()) for i in runs]
    mine = caps[0]
    ptc = collections.Counter(t for _, t in pt)
    myc = collections.Counter(t for _, t in mine)
    same = sum(min(c, myc[t]) for t, c in ptc.items())
    digests = collections.defaultdict(set)
    for dg, t in mine:
        digests[t].add(dg)
    classes = collections.defaultdict(set)
    for fp, t in pt:
        classes[fp]  # every class counts, matched or not
        if myc[t]:
            classes[fp] |= digests[t]
    one = sum(1 for v in classes.values() if len(v) == 1)
    holders = collections.defaultdict(set)
    for fp, v in classes.items():
        for dg in v:
            holders[dg].add(fp)
    shared = sum(1 for v in holders.values() if len(v) > 1)
    missing = [t for t, c in ptc.items() for _ in range(c - min(c, myc[t]))]
    rec = {
        "file": path, "kind": kind, "pt_statements": len(pt), "statements": len(mine),
        "exit": rcs[0], "same_text": same, "classes": len(classes), "classes_one_fingerprint": one,
        "fingerprints_holding_several_classes": shared,
        "silent_zero": bool(pt) and rcs[0] == 0 and not mine,
        "source": first_line(os.path.join(d, "err1"), "source ") or first_line(os.path.join(d, "err1"), "capture:"),
    }
    try:
        rec["pt_exit"] = int(open(os.path.join(d, "pt.rc")).read())
    except OSError:
        rec["pt_exit"] = 0
    if kind == "pcap":
        rec["runs"] = [len(c) for c in caps]
    files.append(rec)
    pct = "%.1f%%" % (100.0 * same / len(pt)) if pt else "-"
    extra = ""
    if rec["silent_zero"]:
        extra += "  SILENT ZERO"
    if rec["pt_exit"] == 124:
        extra += "  (pt-query-digest ran past LIMIT: compared on what it read)"
    elif rec["pt_exit"]:
        extra += "  (pt-query-digest exit %d)" % rec["pt_exit"]
    if "runs" in rec:
        extra += "  runs %s" % ",".join(map(str, rec["runs"]))
    print("%-8s %s: pt %d, capture %d (exit %d), same text %d (%s), classes %d, one fingerprint %d%s" % (
        kind, path, len(pt), len(mine), rcs[0], same, pct, len(classes), one, extra))
    if ndiff and missing:
        for t in missing[:ndiff]:
            print("           missing: %s" % t[:160])
        if rec["source"]:
            print("           %s" % rec["source"][:300])
    if ndiff:
        for fp, v in sorted(classes.items()):
            if len(v) > 1:
                print("           class in %d fingerprints: %s" % (len(v), fp[:160]))

print()
ok = True
kinds = {}
allc = allone = 0
for kind in ("slowlog", "genlog", "pcap", "tcpdump"):
    fs = [f for f in files if f["kind"] == kind]
    if not fs:
        continue
    pt = sum(f["pt_statements"] for f in fs)
    same = sum(f["same_text"] for f in fs)
    cl = sum(f["classes"] for f in fs)
    one = sum(f["classes_one_fingerprint"] for f in fs)
    allc += cl
    allone += one
    zeros = [f["file"] for f in fs if f["silent_zero"]]
    unsteady = [f["file"] for f in fs if len(set(f.get("runs", [0]))) > 1]
    pct = 100.0 * same / pt if pt else 100.0
    good = pct >= limits[kind] and not zeros and not unsteady
    ok = ok and good
    kinds[kind] = {"files": len(fs), "pt_statements": pt, "statements": sum(f["statements"] for f in fs),
                   "same_text": same, "same_text_pct": round(pct, 2), "threshold_pct": limits[kind],
                   "classes": cl, "classes_one_fingerprint": one, "silent_zeros": zeros,
                   "unsteady_counts": unsteady, "pass": good}
    print("%-16s %3d files: pt-query-digest %d statements, capture %d; same text %d = %.1f%% (want >= %.0f%%); "
          "classes %d, one fingerprint %d; silent zeros %d%s  %s" % (
              names[kind], len(fs), pt, kinds[kind]["statements"], same, pct, limits[kind], cl, one, len(zeros),
              "; counts differ between runs: %d" % len(unsteady) if kind == "pcap" else "", "ok" if good else "FAIL"))
cpct = 100.0 * allone / allc if allc else 100.0
ok = ok and cpct >= 90.0
print("classes          %d of %d pt-query-digest classes map to one capture fingerprint = %.1f%% (want >= 90%%)  %s" % (
    allone, allc, cpct, "ok" if cpct >= 90.0 else "FAIL"))
if unknown:
    print("not a log of a known kind (left out): %d: %s" % (len(unknown), ", ".join(unknown)))
json.dump({"kinds": kinds, "classes": allc, "classes_one_fingerprint": allone,
           "classes_one_fingerprint_pct": round(cpct, 2), "pass": ok, "unknown": unknown, "files": files},
          open(out, "w"), indent=1)
print("summary: %s" % out)
sys.exit(0 if ok else 3)
EOF
