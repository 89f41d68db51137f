#!/usr/bin/env bash
# A first look at shakedown until the demo command exists: starts a local
# sandbox "demo", prepares oltp_read_write in it, runs it at 1, 4 and 16
# threads, and removes the sandbox on exit. Run it through "make demo",
# which installs the server and builds bin/shakedown first.
set -euo pipefail
cd "$(dirname "$0")/.."

sd=bin/shakedown
if [ ! -x "$sd" ]; then
	echo "demo.sh: no $sd: run make demo (or make build first)" >&2
	exit 1
fi

# A sandbox left by an interrupted demo would make "up" fail.
"$sd" sandbox down demo >/dev/null 2>&1 || true
trap '"$sd" sandbox down demo >/dev/null || true' EXIT

url=$("$sd" sandbox up demo --url-only)
echo "sandbox demo: $url"

wl=(oltp_read_write --target "$url" --tables 4 --table-size 10000)
"$sd" prepare "${wl[@]}" --threads 4
for t in 1 4 16; do
	echo
	echo "== oltp_read_write, $t thread(s), 5 s"
	"$sd" run "${wl[@]}" --time 5 --threads "$t" --report-interval 1
done
