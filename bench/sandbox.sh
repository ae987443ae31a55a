#!/usr/bin/env bash
# bench/sandbox.sh: the sandbox's figures, each against a reference tool
# measured in the same run (issue 3):
#   1. per-spawn cost of `ioh-lsp sandbox run -- /bin/true` vs bare
#      /bin/true vs bubblewrap doing comparable isolation, from the CLI and
#      from a running process (the server's case: through a Pool, and on
#      the cold path as a ratio pool/cold); the landlock tier (no
#      namespaces) against the same bubblewrap; `ioh-lsp version` and one
#      re-executed stage's start against a hello-world Go binary;
#   2. staging a verification view of $(go env GOROOT) with 3 changed files
#      vs `cp -a` of it, and the staging cost on a small tree vs the whole
#      GOROOT (flat means O(changed files), not O(tree)).
# Needs hyperfine, bwrap, jq, go; installs the Debian packages when root.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
IOH_LSP=${IOH_LSP:-$repo/bin/ioh-lsp}
if [ ! -x "$IOH_LSP" ] || [ ! -x "$(dirname "$IOH_LSP")/ioh-sandbox-init" ]; then
	echo "building $IOH_LSP and its init program (make build)" >&2
	make -C "$repo" build >/dev/null
	IOH_LSP=$repo/bin/ioh-lsp
fi
INIT=$(dirname "$IOH_LSP")/ioh-sandbox-init
. "$repo/bench/lib.bash"
need bench/sandbox.sh hyperfine:hyperfine bwrap:bubblewrap jq:jq

work=$(mktemp -d /var/tmp/ioh-bench-sandbox.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
# The same binary with no init program next to it: every stage
# re-executes the whole binary (what go install gives), the "before".
mkdir reexec
cp "$IOH_LSP" reexec/ioh-lsp
REEXEC=$work/reexec/ioh-lsp
runs=${BENCH_RUNS:-100}

mean_ms() { jq -r ".results[$2].mean * 1000" "$1"; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }
fmt() { awk -v a="$1" 'BEGIN { printf "%.2f", a }'; }

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), kernel $(uname -r)"
"$IOH_LSP" sandbox doctor >doctor.txt || true
head -1 doctor.txt
for b in "$IOH_LSP" "$REEXEC"; do
	"$b" sandbox run --report report.json -- /bin/true
	echo "stages of $b: $(jq -r '.mechanisms[] | select(.name == "init-program") | .detail' report.json)"
done

bwrap_cmd="bwrap --unshare-all --die-with-parent --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp /bin/true"
hyperfine -N --style none --warmup 10 --runs "$runs" --export-json spawn.json \
	"$IOH_LSP sandbox run -- /bin/true" "/bin/true" "$bwrap_cmd" \
	"$IOH_LSP sandbox run --backend landlock -- /bin/true" \
	"$REEXEC sandbox run -- /bin/true" "$REEXEC sandbox run --backend landlock -- /bin/true" >/dev/null
ioh=$(mean_ms spawn.json 0)
bare=$(mean_ms spawn.json 1)
bw=$(mean_ms spawn.json 2)
ll=$(mean_ms spawn.json 3)
rx=$(mean_ms spawn.json 4)
rxll=$(mean_ms spawn.json 5)
echo
echo "per-spawn (mean of $runs):"
echo "  ioh-lsp sandbox run -- /bin/true  $(fmt "$ioh") ms"
echo "  bare /bin/true                    $(fmt "$bare") ms"
echo "  bwrap (comparable isolation)      $(fmt "$bw") ms"
echo "  ratio ioh/bwrap                   $(ratio "$ioh" "$bw")   (goal <= 1.0)"
echo "  landlock tier (--backend landlock) $(fmt "$ll") ms, ratio landlock/bwrap $(ratio "$ll" "$bw")"
echo "  overhead over bare exec           $(minus "$ioh" "$bare") ms   (goal < 5 ms)"
echo "  without the init program (every stage re-executes ioh-lsp): linux $(fmt "$rx") ms (ratio to bwrap $(ratio "$rx" "$bw")), landlock $(fmt "$rxll") ms (ratio $(ratio "$rxll" "$bw"))"
cpu_ms() { jq -r "(.results[$2].user + .results[$2].system) * 1000" "$1"; }
echo "  CPU per run: ioh $(fmt "$(cpu_ms spawn.json 0)") ms, without the init program $(fmt "$(cpu_ms spawn.json 4)") ms, bwrap $(fmt "$(cpu_ms spawn.json 2)") ms"
# Start-up against a hello-world Go binary built by the same toolchain:
# the CLI's own start, and the start of one re-executed stage (the hidden
# first argument dispatches in the sandbox package's init, after the
# packages it comes behind; an unknown stage exits 2 at once).
mkdir hello
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' >hello/main.go
printf 'module hello\n\ngo 1.21\n' >hello/go.mod
(cd hello && go build -o hello .)
hyperfine -N --style none --warmup 5 --runs "$runs" -i --export-json version.json \
	"$IOH_LSP version" "$work/hello/hello" "$IOH_LSP __ioh_sandbox_none" "$INIT __ioh_sandbox_none" >/dev/null 2>&1
echo "  of which ioh-lsp's own start-up (\`ioh-lsp version\`): $(fmt "$(mean_ms version.json 0)") ms"
echo "  hello-world Go binary             $(fmt "$(mean_ms version.json 1)") ms"
echo "  ratio version/hello               $(ratio "$(mean_ms version.json 0)" "$(mean_ms version.json 1)")   (goal <= 1.5)"
echo "  one stage's start, small init program $(fmt "$(mean_ms version.json 3)") ms, ratio to hello $(ratio "$(mean_ms version.json 3)" "$(mean_ms version.json 1)") (each contained run starts 1-3 stages)"
echo "  one stage's start, whole ioh-lsp  $(fmt "$(mean_ms version.json 2)") ms, ratio to hello $(ratio "$(mean_ms version.json 2)" "$(mean_ms version.json 1)")"

# The server's case: spawns from one running process, all three kinds
# measured by the same loop. As in the server, stages are started ahead
# of their run (warm stages) and each spawn is timed alone after an idle
# gap (spawn-bench --gap, 20 ms), since a server's runs come between model
# turns; bwrap and bare /bin/true get the same gaps.
read -r _ sb _ scold _ sone _ sbare _ sbw < <("$IOH_LSP" sandbox spawn-bench -n "$runs" -- $bwrap_cmd)
echo
echo "per-spawn from a running process (the server's case: warm stages, each spawn timed alone after an idle gap; mean of $runs):"
echo "  contained /bin/true               $(fmt "$sb") ms"
echo "  bare /bin/true                    $(fmt "$sbare") ms"
echo "  bwrap                             $(fmt "$sbw") ms"
echo "  ratio sandbox/bwrap               $(ratio "$sb" "$sbw")   (goal <= 0.6)"
echo "  overhead over bare exec           $(minus "$sb" "$sbare") ms   (goal < 5 ms)"
echo "  the same runs on the cold path (a Runner without a Pool, the same policy cache) $(fmt "$scold") ms"
echo "  ratio pool/cold                   $(ratio "$sb" "$scold")   (goal < 1: what a long-lived caller's Pool saves)"
echo "  with neither pool nor policy cache (a one-shot command's runs) $(fmt "$sone") ms, ratio pool/one-shot $(ratio "$sb" "$sone")"
read -r _ sbl _ sblcold _ sblone _ _ _ sblw < <("$IOH_LSP" sandbox spawn-bench -n "$runs" --backend landlock -- $bwrap_cmd)
echo "  landlock tier contained /bin/true $(fmt "$sbl") ms, bwrap in the same loop $(fmt "$sblw") ms"
echo "  ratio landlock/bwrap              $(ratio "$sbl" "$sblw")   (goal <= 0.5)"
echo "  landlock tier cold path           $(fmt "$sblcold") ms, ratio pool/cold $(ratio "$sbl" "$sblcold"); one-shot $(fmt "$sblone") ms, ratio $(ratio "$sbl" "$sblone")"
read -r _ rsb _ _ _ _ _ _ _ rsbw < <("$REEXEC" sandbox spawn-bench -n "$runs" --backend linux -- $bwrap_cmd)
read -r _ rsbl _ _ _ _ _ _ _ rsblw < <("$REEXEC" sandbox spawn-bench -n "$runs" --backend landlock -- $bwrap_cmd)
echo "  without the init program: linux $(fmt "$rsb") ms (ratio to bwrap $(ratio "$rsb" "$rsbw")), landlock $(fmt "$rsbl") ms (ratio $(ratio "$rsbl" "$rsblw"))"

# Containment counts of the tier table (sandbox/tier_contain_linux_test.go):
# with user namespaces and without (inside bwrap --disable-userns), as the
# caller and, as root, as an ordinary user too.
chmod 755 "$work" # the ordinary-user re-runs append to the counts too
mkdir -m 777 "$work/counts"
counts="$work/counts/counts.txt"
install -m 666 /dev/null "$counts"
(cd "$repo" && go test -c -o "$work/sandbox.test" ./internal/sandbox)
if IOH_CONTAIN_COUNTS="$counts" "$work/sandbox.test" -test.run '^(TestTierContainment|TestTierContainmentOtherModes)$' -test.count=1 >"$work/contain.log" 2>&1; then
	echo
	echo "containment (paired cases whose uncontained control succeeded):"
	sed 's/^/  /' "$counts"
else
	echo "containment suite failed:" >&2
	tail -40 "$work/contain.log" >&2
fi

goroot=$(go env GOROOT)
small="$goroot/src/fmt"
hyperfine -N --style none --warmup 2 --runs 10 --export-json stage.json \
	"$IOH_LSP sandbox stage-bench --changes 3 $goroot" \
	"$IOH_LSP sandbox stage-bench --changes 3 $small" \
	"$IOH_LSP sandbox run -- /bin/true" >/dev/null
hyperfine --style none --warmup 1 --runs "${BENCH_CP_RUNS:-5}" --export-json cp.json \
	--prepare "rm -rf $work/copy" "cp -a $goroot $work/copy" >/dev/null
stage=$(mean_ms stage.json 0)
stage_small=$(mean_ms stage.json 1)
spawn=$(mean_ms stage.json 2)
cp=$(mean_ms cp.json 0)
files=$(find "$goroot" -type f | wc -l)
small_files=$(find "$small" -type f | wc -l)
echo
echo "verification staging of GOROOT ($files files, $(du -sh "$goroot" | cut -f1)) with 3 changed files:"
echo "  stage + sandboxed /bin/true       $(fmt "$stage") ms"
echo "  of which staging (minus a spawn)  $(minus "$stage" "$spawn") ms"
echo "  cp -a GOROOT                      $(fmt "$cp") ms"
echo "  ratio cp/stage                    $(ratio "$cp" "$stage")x   (goal >= 50x; counts the spawn against staging)"
echo "  flatness: $small_files-file tree $(fmt "$stage_small") ms vs $files-file tree $(fmt "$stage") ms, ratio $(ratio "$stage" "$stage_small") (flat is ~1.0)"
