#!/usr/bin/env bash
# bench/startup.sh: how fast the binary starts (issue 11 item 4). Every CLI
# command and every re-executed sandbox stage starts the whole binary, so
# `ioh-lsp version` is measured side by side with programs built by the same
# toolchain in the same run:
#   hello      a hello-world Go program (the goal: version <= 1.5x hello);
#   cgo        `ioh-lsp version` built with cgo, as a plain `go build` or
#              `go install` does when a C compiler is present (net, os/user
#              and go-landlock's psx then use libc: the dynamic loader,
#              libc and psx's pthread set-up run at every start); make build
#              and make install build without cgo, a static binary;
#   floor      this very binary with every package initializer skipped: the
#              same source built with a one-line overlay of runtime/proc.go
#              that exits before the package inits when argv[1] is
#              __ioh_floor (the Go runtime's own cost for a binary this size,
#              which no change to our packages can go under), also with cgo;
# then per command the minor page faults (getrusage of the child), and the
# package initializers of `version` from GODEBUG=inittrace=1: how many ran,
# the bytes and allocations they made, the costliest by bytes.
# The floor builds recompile everything against the patched runtime once
# (a few minutes on 2 cores; cached after). Needs python3 and go; installs
# python3 when root.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
IOH_LSP=${IOH_LSP:-$repo/bin/ioh-lsp}
if [ ! -x "$IOH_LSP" ]; then
	echo "building $IOH_LSP" >&2
	(cd "$repo" && CGO_ENABLED=0 go build -o "$IOH_LSP" ./cmd/ioh-lsp)
fi
. "$repo/bench/lib.bash"
need bench/startup.sh python3:python3

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
	(cd "$repo" && CGO_ENABLED=0 go build -overlay "$work/overlay.json" -o "$work/floor" ./cmd/ioh-lsp)
	(cd "$repo" && CGO_ENABLED=1 go build -overlay "$work/overlay.json" -o "$work/floor-cgo" ./cmd/ioh-lsp)
	if [ "$("$work/floor" __ioh_floor 2>&1)" = floor ] && [ "$("$work/floor-cgo" __ioh_floor 2>&1)" = floor ]; then
		floor=yes
	else
		echo "(floor not measured: the patched runtime did not exit before the package inits)"
	fi
else
	echo "(floor not measured: this Go version's runtime.main has no line starting '$anchor')"
fi

(cd "$repo" && CGO_ENABLED=1 go build -o "$work/cgo" ./cmd/ioh-lsp)

# Every program is measured from a copy made the same way: how many page
# faults a start takes depends on how the file came into the page cache,
# since the kernel maps a whole large folio per fault. A cgo build is
# linked by GNU ld, whose large writes leave the file in folios of up to
# 2 MB; Go's own linker (every static build) writes through a memory
# mapping, which leaves 4 KB pages. Just built, the cgo binary thus took
# 594 faults against the static one's 739, and seemed the faster; copied
# (or read back from disk after eviction) the same two files take 740-750
# against 656-710. This bench compares copies.
mkdir "$work/run"
for b in "$IOH_LSP:ioh-lsp" "$work/hello/hello:hello" "$work/cgo:cgo" "$work/floor:floor" "$work/floor-cgo:floor-cgo"; do
	if [ -f "${b%%:*}" ]; then cp "${b%%:*}" "$work/run/${b#*:}"; fi
done
IOH_LSP=$work/run/ioh-lsp
hello=$work/run/hello

# The programs run in turn, one start of each per round (the order turning
# each round), so load from elsewhere on a shared machine falls on all of
# them alike; per start: wall time, CPU (user+sys, the child's rusage)
# and minor page faults. A program that fails stops the bench.
labels=("ioh-lsp version" "hello-world Go binary" "ioh-lsp version, built with cgo")
cmds=("$IOH_LSP version" "$hello" "$work/run/cgo version")
if [ -n "$floor" ]; then
	labels+=("floor: same binary, no package init" "floor, built with cgo")
	cmds+=("$work/run/floor __ioh_floor" "$work/run/floor-cgo __ioh_floor")
fi
python3 - "$runs" "${cmds[@]}" >"$work/start.tsv" <<'PY'
import os, statistics, sys, time
runs, cmds = int(sys.argv[1]), [c.split() for c in sys.argv[2:]]
null = os.open(os.devnull, os.O_WRONLY)
got = [([], [], []) for _ in cmds]
for r in range(20 + runs):  # the first 20 rounds warm up
    for k in range(len(cmds)):
        i = (k + r) % len(cmds)
        t0 = time.perf_counter()
        pid = os.posix_spawn(cmds[i][0], cmds[i], os.environ, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1)])
        _, status, ru = os.wait4(pid, 0)
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit("bench/startup.sh: %s failed (%d)" % (" ".join(cmds[i]), os.waitstatus_to_exitcode(status)))
        if r >= 20:
            for l, v in zip(got[i], (wall, ru.ru_utime + ru.ru_stime, ru.ru_minflt)):
                l.append(v)
for wall, cpu, flt in got:
    print("%.6f %.6f %.6f %d" % (statistics.median(wall), min(wall), statistics.median(cpu), statistics.median(flt)))
PY
col() { awk -v n="$(($1 + 1))" -v f="$2" 'NR == n { print $f }' "$work/start.tsv"; }
med() { col "$1" 1; }
minw() { col "$1" 2; }
cpu() { col "$1" 3; }

echo
echo "start-up ($runs rounds, the programs in turn: median wall | min wall | median CPU user+sys | minor page faults):"
for i in "${!labels[@]}"; do
	printf '  %-38s %6s ms | %6s ms | %6s ms | %5s\n' "${labels[$i]}" "$(ms "$(med "$i")")" "$(ms "$(minw "$i")")" "$(ms "$(cpu "$i")")" "$(col "$i" 4)"
done
echo "  ratio version/hello (median)      $(ratio "$(med 0)" "$(med 1)") (min $(ratio "$(minw 0)" "$(minw 1)"), CPU $(ratio "$(cpu 0)" "$(cpu 1)"))   (goal <= 1.5)"
echo "  ratio version/hello, with cgo     $(ratio "$(med 2)" "$(med 1)") (min $(ratio "$(minw 2)" "$(minw 1)"), CPU $(ratio "$(cpu 2)" "$(cpu 1)"))"
if [ -n "$floor" ]; then
	echo "  ratio floor/hello                 $(ratio "$(med 3)" "$(med 1)") (min $(ratio "$(minw 3)" "$(minw 1)"), CPU $(ratio "$(cpu 3)" "$(cpu 1)"))   (no package init can go under this)"
	echo "  ratio floor/hello, with cgo       $(ratio "$(med 4)" "$(med 1)") (min $(ratio "$(minw 4)" "$(minw 1)"), CPU $(ratio "$(cpu 4)" "$(cpu 1)"))"
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
