#!/usr/bin/env bash
# bench/firstrun.sh: the time from `git clone` to the first verified run,
# following only the README: clone the repository, `make demo` (which
# builds ioh-lsp and its sandbox init program, then drives a real LSP
# session whose agent fixes a failing test, verified in the sandbox with
# the replay provider). The reference, measured in the same run from the
# same fresh clone and the same empty build cache: a plain `go build` of
# ./cmd/ioh-lsp, the least any install from source costs. The ratio says
# what the README's path adds to that build (the second binary, the
# demo's session and its sandboxed checks).
#
# Both start from an empty GOCACHE, as on a fresh machine; the module
# cache is the machine's (downloading the modules is the network's time,
# not ours). BENCH_GOCACHE=warm runs both on the machine's own build
# cache instead (a developer's second clone; minutes less on a loaded
# machine). Fails if the demo does not end verified (exit 0).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/bench/lib.bash"
work=$(mktemp -d /var/tmp/ioh-bench-firstrun.XXXXXX)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
export GOFLAGS="${GOFLAGS:-} -modcacherw"

cache=${BENCH_GOCACHE:-cold}
# gocache NAME: the build cache a measured step uses.
gocache() { if [ "$cache" = warm ]; then go env GOCACHE; else echo "$work/cache-$1"; fi; }

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(go version | cut -d' ' -f3)"

now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'; }

# The README's path: clone, make demo, from an empty build cache.
t0=$(now)
git clone -q "$repo" "$work/clone"
t1=$(now)
if ! (cd "$work/clone" && GOCACHE="$(gocache demo)" make -s demo >"$work/demo.out" 2>&1); then
	echo "FAIL: make demo in a fresh clone did not end verified:" >&2
	tail -20 "$work/demo.out" >&2
	exit 1
fi
t2=$(now)

# The reference: go build of the same tree from an empty build cache.
t3=$(now)
(cd "$work/clone" && GOCACHE="$(gocache ref)" CGO_ENABLED=0 go build -o "$work/ref" ./cmd/ioh-lsp)
t4=$(now)

clone=$(secs "$t0" "$t1") demo=$(secs "$t1" "$t2") total=$(secs "$t0" "$t2") ref=$(secs "$t3" "$t4")
echo "git clone to the first verified run (README: make demo): ${total}s (clone ${clone}s, make demo ${demo}s, $cache build cache); go build ./cmd/ioh-lsp of the same tree, $cache build cache: ${ref}s; ratio $(ratio "$total" "$ref")"
