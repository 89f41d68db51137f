#!/usr/bin/env bash
# Runs the fuzz targets of the capture readers (slow log, general log, pcap,
# tcpdump text, the client protocol), of the capture writer and of the
# fingerprint lexer, each for FUZZTIME
# (default 30s), and keeps what the fuzzer found in the packages'
# testdata/fuzz, so that a plain "go test" replays it.
#
#   scripts/fuzz-capture.sh
#   FUZZTIME=2m scripts/fuzz-capture.sh
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-30s}
# Minimizing a new input of a few kilobytes (a pcap) takes the whole default
# minute, during which nothing is fuzzed.
FUZZMINIMIZE=${FUZZMINIMIZE:-5s}
cache=$(go env GOCACHE)/fuzz/github.com/shakedown/shakedown
for t in internal/capture:FuzzSlowLog internal/capture:FuzzGeneralLog internal/capture:FuzzRecordJSON \
	internal/capture:FuzzPcap internal/capture:FuzzTcpdumpText \
	internal/capture:FuzzProtocol internal/fingerprint:FuzzLex; do
	pkg=${t%%:*}
	name=${t##*:}
	echo "fuzz-capture: $name for $FUZZTIME" >&2
	go test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZE" "./$pkg"
	mkdir -p "$pkg/testdata/fuzz/$name"
	# Keep the inputs that found new coverage (at most 200, the smallest).
	if [ -d "$cache/$pkg/$name" ]; then
		ls -S -r "$cache/$pkg/$name" | head -200 | while read -r f; do
			cp "$cache/$pkg/$name/$f" "$pkg/testdata/fuzz/$name/"
		done
	fi
done
