#!/usr/bin/env bash
# bench/rebuild.sh: a second `make build` of the same source is a no-op,
# and `make install` reuses build's cache. The init program is matched to
# ioh-lsp by its SHA-256, not a random stamp, so nothing changes between
# two builds of one tree: the second compiles and links nothing (go's -x
# output names no compile or link command) and leaves both files
# byte-identical; `make install` (into a temporary GOBIN) compiles
# nothing either. Its time is set against the go command's own no-op,
# `go build` of an up-to-date hello-world program, in the same run.
# Fails if a second build or the install compiled or linked anything, or
# if the bytes changed.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/bench/lib.bash"
cd "$repo"
work=$(mktemp -d /var/tmp/ioh-bench-rebuild.XXXXXX)
trap 'rm -rf "$work"' EXIT
runs=${BENCH_RUNS:-5}

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(go version | cut -d' ' -f3)"
make -s build >/dev/null
before=$(sha256sum bin/ioh-lsp bin/ioh-sandbox-init)

# secs CMD...: the wall time of CMD in seconds; its stderr (go's -x
# commands) goes to $work/x.
secs() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>"$work/x"
	t1=$(date +%s%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'
}
# built: the compile and link commands go's -x output shows.
built() { grep -cE '/(compile|link) ' "$work/x" || true; }

mkdir "$work/hello"
printf 'package main\n\nfunc main() { println("hello") }\n' >"$work/hello/main.go"
printf 'module hello\n\ngo 1.21\n' >"$work/hello/go.mod"
(cd "$work/hello" && go build -o hello .)

best_make="" best_ref=""
for i in $(seq "$runs"); do
	m=$(GOFLAGS="$(go env GOFLAGS) -x" secs make -s build)
	if [ "$(built)" != 0 ]; then
		echo "FAIL: a second make build ran $(built) compile/link commands:" >&2
		grep -E '/(compile|link) ' "$work/x" | head -5 >&2
		exit 1
	fi
	r=$(cd "$work/hello" && secs go build -o hello .)
	best_make=$(awk -v a="$m" -v b="${best_make:-1e9}" 'BEGIN { print (a < b) ? a : b }')
	best_ref=$(awk -v a="$r" -v b="${best_ref:-1e9}" 'BEGIN { print (a < b) ? a : b }')
done
if [ "$(sha256sum bin/ioh-lsp bin/ioh-sandbox-init)" != "$before" ]; then
	echo "FAIL: a second make build changed the binaries:" >&2
	echo "$before" >&2
	sha256sum bin/ioh-lsp bin/ioh-sandbox-init >&2
	exit 1
fi
echo "second make build: ${best_make}s (best of $runs), no compile or link, bytes unchanged; go build of an up-to-date hello: ${best_ref}s; ratio $(ratio "$best_make" "$best_ref")"

i=$(GOBIN="$work/gobin" GOFLAGS="$(go env GOFLAGS) -x" secs make -s install)
compiles=$(grep -cE '/compile ' "$work/x" || true)
if [ "$compiles" != 0 ]; then
	echo "FAIL: make install after make build compiled $compiles packages:" >&2
	grep -E '/compile ' "$work/x" | head -5 >&2
	exit 1
fi
if ! cmp -s "$work/gobin/ioh-sandbox-init" bin/ioh-sandbox-init; then
	echo "FAIL: make install's init program differs from make build's" >&2
	exit 1
fi
echo "make install after make build: ${i}s, no package compiled, the same init program; ratio to the reference $(ratio "$i" "$best_ref")"
