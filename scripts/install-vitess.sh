#!/usr/bin/env bash
# Builds Vitess's vtcombo (vtgate and its tablets in one process) for
# `shakedown sandbox up NAME --flavour vitess` and the Vitess tests, from
# the Go module vitess.io/vitess at the pinned version below, fetched
# through the Go module proxy. No package registry serves Vitess binaries.
#
#   scripts/install-vitess.sh          build once, print the binary's path
#   scripts/install-vitess.sh --check  print the path if built, else exit 1
#
# The binary goes into the user's cache, where the sandbox and the tests
# look for it: ${XDG_CACHE_HOME:-~/.cache}/shakedown/flavours/vitess-v0.24.4/vtcombo.
# It takes about 4 minutes on 2 cores (most of it compiling; the module and
# its dependencies are about 600 MB in the Go module cache) and needs Go.
set -euo pipefail

version=v0.24.4 # the module's version; the release it builds is 24.0.4
release=24.0.4
cache=${XDG_CACHE_HOME:-$HOME/.cache}/shakedown/flavours/vitess-$version
bin=$cache/vtcombo

built() { [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -q "^vtcombo version Version: $release "; }

case "${1:-}" in
--check)
	if built; then echo "$bin"; exit 0; fi
	echo "install-vitess.sh: no vtcombo $version in $cache: run scripts/install-vitess.sh" >&2
	exit 1 ;;
"") ;;
*)
	echo "install-vitess.sh: unknown argument $1: use no argument, or --check" >&2
	exit 2 ;;
esac

if built; then
	echo "$bin"
	exit 0
fi
command -v go >/dev/null || { echo "install-vitess.sh: needs Go (https://go.dev/dl/) to build vtcombo" >&2; exit 1; }

echo "install-vitess.sh: fetching vitess.io/vitess@$version through the Go module proxy" >&2
dir=$(go mod download -json "vitess.io/vitess@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')
[ -n "$dir" ] && [ -d "$dir/go/cmd/vtcombo" ] || { echo "install-vitess.sh: go mod download gave no module directory for vitess.io/vitess@$version" >&2; exit 1; }

# `go install pkg@version` refuses a module whose go.mod has exclude
# directives, as Vitess's has: it is built inside its own module instead.
echo "install-vitess.sh: building vtcombo (about 4 minutes on 2 cores)" >&2
mkdir -p "$cache"
start=$(date +%s)
(cd "$dir" && go build -trimpath -o "$bin.tmp.$$" ./go/cmd/vtcombo)
mv "$bin.tmp.$$" "$bin"
built || { echo "install-vitess.sh: $bin does not report Vitess $release" >&2; exit 1; }
echo "install-vitess.sh: built in $(( $(date +%s) - start )) s" >&2
echo "$bin"
