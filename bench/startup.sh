#!/usr/bin/env bash
# bench/startup.sh: how fast the binary starts (issue 11 item 4). Every CLI
# command and every re-executed sandbox stage starts the whole binary, so
# `ioh-lsp version` is measured side by side with programs built by the same
# toolchain in the same run:
#   hello      a hello-world Go program (the goal: version <= 1.5x hello);
#   floor      this very binary with every package initializer skipped: the
#              same source built with a one-line overlay of runtime/proc.go
#              that exits before the package inits when argv[1] is
#              __ioh_floor (the Go runtime's own cost for a binary this size,
#              which no change to our packages can go under), also built
#              with CGO_ENABLED=0;
#   no-cgo     `ioh-lsp version` built with CGO_ENABLED=0 (the default build
#              links libc dynamically when a C compiler is present: net,
#              os/user and go-landlock's psx use cgo; the dynamic loader,
#              libc and pthread start-up are most of the floor);
# then per command the minor page faults (getrusage of the child), and the
# package initializers of `version` from GODEBUG=inittrace=1: how many ran,
# the bytes and allocations they made, the costliest by bytes.
# The floor builds recompile everything against the patched runtime once
# (a few minutes on 2 cores; cached after). Needs hyperfine, jq, python3,
# go; installs the Debian packages when root.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
IOH_LSP=${IOH_LSP:-$repo/bin/ioh-lsp}
if [ ! -x "$IOH_LSP" ]; then
	echo "building $IOH_LSP" >&2
	(cd "$repo" && go build -o "$IOH_LSP" ./cmd/ioh-lsp)
fi
. "$repo/bench/lib.bash"
need bench/startup.sh hyperfine:hyperfine jq:jq python3:python3

work=$(mktemp -d /var/tmp/ioh-bench-startup.XXXXXX)
trap 'rm -rf "$work"' EXIT
runs=${BENCH_RUNS:-200}

ms() { awk -v a="$1" 'BEGIN { printf "%.2f", a * 1000 }'; }

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), kernel $(uname -r), $(go version | cut -d' ' -f3)"

# hello: the reference, built by the same toolchain with default flags.
mkdir "$work/hello"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' >"$work/hello/main.go"
printf 'module hello\n\ngo 1.21\n' >"$work/hello/go.mod"
(cd "$work/hello" && go build -o hello .)

# floor: the same program with the package initializers skipped. The
# overlay adds one early exit to runtime.main right before it runs the
# packages' init tasks; everything before it (exec, the dynamic loader when
# cgo is on, schedinit: heap, itabs, module data checks) is what this binary
# costs before any of our or our dependencies' code runs.
floor=""
proc="$(go env GOROOT)/src/runtime/proc.go"
anchor='	last := lastmoduledatap // grab before loop starts'
if grep -qF "$anchor" "$proc"; then
	awk -v anchor="$anchor" '
		index($0, anchor) == 1 && !done {
			print "\tif len(argslice) > 1 && argslice[1] == \"__ioh_floor\" {"
			print "\t\tmsg := \"floor\\n\""
			print "\t\twrite(1, unsafe.Pointer(unsafe.StringData(msg)), int32(len(msg)))"
			print "\t\texit(0)"
			print "\t}"
			done = 1
		}
		{ print }' "$proc" >"$work/proc.go"
	printf '{"Replace":{"%s":"%s"}}\n' "$proc" "$work/proc.go" >"$work/overlay.json"
	(cd "$repo" && go build -overlay "$work/overlay.json" -o "$work/floor" ./cmd/ioh-lsp)
	(cd "$repo" && CGO_ENABLED=0 go build -overlay "$work/overlay.json" -o "$work/floor-nocgo" ./cmd/ioh-lsp)
	if [ "$("$work/floor" __ioh_floor 2>&1)" = floor ] && [ "$("$work/floor-nocgo" __ioh_floor 2>&1)" = floor ]; then
		floor=yes
	else
		echo "(floor not measured: the patched runtime did not exit before the package inits)"
	fi
else
	echo "(floor not measured: this Go version's runtime.main has no line starting '$anchor')"
fi

(cd "$repo" && CGO_ENABLED=0 go build -o "$work/nocgo" ./cmd/ioh-lsp)

# Every program is measured from a copy made the same way: how many page
# faults a start takes depends on how the file came into the page cache
# (the kernel maps a whole large folio per fault), and a file just written
# by the linker and the same file copied differ by 30% in faults.
mkdir "$work/run"
for b in "$IOH_LSP:ioh-lsp" "$work/hello/hello:hello" "$work/nocgo:nocgo" "$work/floor:floor" "$work/floor-nocgo:floor-nocgo"; do
	if [ -f "${b%%:*}" ]; then cp "${b%%:*}" "$work/run/${b#*:}"; fi
done
IOH_LSP=$work/run/ioh-lsp
hello=$work/run/hello
cmds=("$IOH_LSP version" "$hello" "$work/run/nocgo version")
[ -z "$floor" ] || cmds+=("$work/run/floor __ioh_floor" "$work/run/floor-nocgo __ioh_floor")
hyperfine -N --style none --warmup 20 --runs "$runs" --export-json "$work/start.json" "${cmds[@]}" >/dev/null
med() { jq -r ".results[$1].median" "$work/start.json"; }
minw() { jq -r ".results[$1].min" "$work/start.json"; }
cpu() { jq -r "(.results[$1].user + .results[$1].system)" "$work/start.json"; }

# minor page faults per start: getrusage(RUSAGE_CHILDREN) over 50 runs.
faults() {
	python3 - "$@" <<'EOF'
import resource, subprocess, sys
n = 50
before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
for _ in range(n):
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(round((resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before) / n))
EOF
}

echo
echo "start-up ($runs runs each: median wall | min wall | mean CPU user+sys | minor page faults):"
row() { printf '  %-34s %6s ms | %6s ms | %6s ms | %5s\n' "$1" "$(ms "$(med "$2")")" "$(ms "$(minw "$2")")" "$(ms "$(cpu "$2")")" "$3"; }
# shellcheck disable=SC2086
row "ioh-lsp version" 0 "$(faults $IOH_LSP version)"
row "hello-world Go binary" 1 "$(faults "$hello")"
# shellcheck disable=SC2086
row "ioh-lsp version, CGO_ENABLED=0" 2 "$(faults "$work/run/nocgo" version)"
# shellcheck disable=SC2086
if [ -n "$floor" ]; then
	row "floor: same binary, no package init" 3 "$(faults "$work/run/floor" __ioh_floor)"
	row "floor, CGO_ENABLED=0" 4 "$(faults "$work/run/floor-nocgo" __ioh_floor)"
fi
echo "  ratio version/hello (median)      $(ratio "$(med 0)" "$(med 1)") (min $(ratio "$(minw 0)" "$(minw 1)"), CPU $(ratio "$(cpu 0)" "$(cpu 1)"))   (goal <= 1.5)"
echo "  ratio version/hello, no cgo       $(ratio "$(med 2)" "$(med 1)") (min $(ratio "$(minw 2)" "$(minw 1)"), CPU $(ratio "$(cpu 2)" "$(cpu 1)"))"
if [ -n "$floor" ]; then
	echo "  ratio floor/hello                 $(ratio "$(med 3)" "$(med 1)") (min $(ratio "$(minw 3)" "$(minw 1)"), CPU $(ratio "$(cpu 3)" "$(cpu 1)"))   (no package init can go under this)"
	echo "  ratio floor/hello, no cgo         $(ratio "$(med 4)" "$(med 1)") (min $(ratio "$(minw 4)" "$(minw 1)"), CPU $(ratio "$(cpu 4)" "$(cpu 1)"))"
	echo "  package inits' share of version   $(ms "$(awk -v a="$(cpu 0)" -v b="$(cpu 3)" 'BEGIN { print a - b }')") ms of $(ms "$(cpu 0)") ms CPU"
fi
echo "  binary: $(($(stat -c %s "$IOH_LSP") / 1048576)) MB, hello $(($(stat -c %s "$hello") / 1048576)) MB; $(file -b "$IOH_LSP" | grep -o 'statically linked\|dynamically linked')"

# The package initializers of one `version` (inittrace prints one line per
# package whose init does work: "init PKG @T ms, C ms clock, B bytes, A allocs").
for i in 1 2 3 4 5; do GODEBUG=inittrace=1 "$IOH_LSP" version 2>&1 >/dev/null; done |
	awk '/^init / { if (!($2 in c) || $5 < c[$2]) c[$2] = $5; b[$2] = $8; a[$2] = $10 }
	END {
		for (p in c) { printf "%d %d %.3f %s\n", b[p], a[p], c[p], p; tb += b[p]; ta += a[p]; tc += c[p]; k++ }
		printf "TOTAL %d %d %d %.2f\n", k, tb, ta, tc
	}' | sort -rn >"$work/inits.txt"
read -r _ k tb ta tc < <(grep '^TOTAL' "$work/inits.txt")
echo
echo "package initializers of \`ioh-lsp version\`: $k run, $((tb / 1024)) KB in $ta allocations, $tc ms clock (each package's best of 5 runs)"
echo "  costliest by bytes (KB, allocations, ms clock):"
grep -v '^TOTAL' "$work/inits.txt" | head -12 | awk '{ printf "    %6.1f %6d %6.3f  %s\n", $1 / 1024, $2, $3, $4 }'
own=$(grep -c ' github.com/ioh-lsp/' "$work/inits.txt" || true)
ownb=$(awk '$4 ~ /^github.com\/ioh-lsp\// { b += $1 } END { print b + 0 }' "$work/inits.txt")
echo "  this module's own packages: $own with init work, $((ownb / 1024)) KB"
