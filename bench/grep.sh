#!/usr/bin/env bash
# bench/grep.sh: `ioh-lsp grep` and `ioh-lsp find` against ripgrep on the Go
# source tree, measured side by side in one run (warm cache, median of
# several runs), after checking that both tools return the same result set.
# Prints a table with the ratio ioh/rg per pattern (goal: <= 1.5), then
# the same one-shot commands with an index file in the state directory
# (each file's stamp checked, unread when its trigrams rule it out), then
# bench/indexbench: the server's case, repeated searches through a warm,
# watched index against rg (goal: >= 10x faster), the index's build time,
# size and RSS, and freshness (save -> a search returns the new text).
#
# Needs IOH_LSP (the built binary, `make bench` sets it) and rg; uses
# hyperfine when installed, a timing loop otherwise.
set -euo pipefail

IOH_LSP=${IOH_LSP:?set IOH_LSP to the ioh-lsp binary (make bench does)}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUNS=${RUNS:-10}
command -v rg >/dev/null || { echo "grep.sh: ripgrep (rg) is not installed" >&2; exit 1; }
CORPUS=${CORPUS:-$(go env GOROOT)/src}
cd "$CORPUS"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# name | ioh-lsp arguments | rg arguments (same semantics: hidden files
# searched, ignore files honoured, path:line:text output)
cases=(
  "rare literal|grep ParseDuration|-n --no-heading --hidden ParseDuration"
  "common literal|grep 'err != nil'|-n --no-heading --hidden 'err != nil'"
  "regex with literal|grep 'func \\w+Parse\\w*\\('|-n --no-heading --hidden 'func \\w+Parse\\w*\\('"
  "case-insensitive|grep -i 'unexpected eof'|-n --no-heading --hidden -i 'unexpected eof'"
  "find **/*_test.go|find '**/*_test.go'|--files --hidden -g '*_test.go'"
)

# measure CMD: prints "WALL CPU": the median wall time of RUNS runs and the
# mean CPU time (user + system) in milliseconds; CPU is "-" without
# hyperfine. On a shared machine the CPU figure is the steadier one.
measure() {
  local cmd=$1
  if command -v hyperfine >/dev/null && command -v python3 >/dev/null; then
    hyperfine -N --style none --warmup 2 --runs "$RUNS" -i --export-json "$tmp/h.json" "$cmd" >/dev/null 2>&1
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.1f %.1f" % (r["median"]*1000, (r["user"]+r["system"])*1000))' "$tmp/h.json"
    return
  fi
  local i t0 t1 times=()
  for i in 1 2; do eval "$cmd" >/dev/null 2>&1 || true; done
  for ((i = 0; i < RUNS; i++)); do
    t0=$(date +%s%N); eval "$cmd" >/dev/null 2>&1 || true; t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f -\n", m/1000}'
}

printf '%-22s %9s %9s %7s %9s %9s %7s %8s  %s\n' "pattern" "ioh ms" "rg ms" "ioh/rg" "ioh cpu" "rg cpu" "cpu x" "results" "same set"
fail=0
for c in "${cases[@]}"; do
  IFS='|' read -r name ioh rgargs <<<"$c"
  eval "\"$IOH_LSP\" $ioh" | LC_ALL=C sort >"$tmp/ioh.txt" || true
  eval "rg $rgargs" | LC_ALL=C sort >"$tmp/rg.txt" || true
  if cmp -s "$tmp/ioh.txt" "$tmp/rg.txt"; then same=yes; else same=NO; fail=1; fi
  n=$(wc -l <"$tmp/ioh.txt")
  read -r ti ci < <(measure "\"$IOH_LSP\" $ioh")
  read -r tr cr < <(measure "rg $rgargs")
  ratio=$(awk -v a="$ti" -v b="$tr" 'BEGIN { printf "%.2f", a / b }')
  cratio=$(awk -v a="$ci" -v b="$cr" 'BEGIN { if (b + 0 > 0) printf "%.2f", a / b; else print "-" }')
  printf '%-22s %9s %9s %7s %9s %9s %7s %8s  %s\n' "$name" "$ti" "$tr" "$ratio" "$ci" "$cr" "$cratio" "$n" "$same"
  if [ "$same" = NO ]; then diff "$tmp/ioh.txt" "$tmp/rg.txt" | head -5 >&2; fi
done
echo "corpus: $CORPUS ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?), wall: median of $RUNS runs, cpu: mean user+sys, warm cache)"

(cd "$here/.." && go build -o "$tmp/indexbench" ./bench/indexbench)
mkdir -m 700 "$tmp/state"
"$tmp/indexbench" -corpus "$CORPUS" -build "$tmp/state"
echo
echo "ioh-lsp grep with an index file (IOH_STATE_DIR), one process per search:"
printf '%-22s %9s %9s %7s %8s  %s\n' "pattern" "ioh ms" "rg ms" "ioh/rg" "results" "same set"
for c in "${cases[@]:0:4}"; do
  IFS='|' read -r name ioh rgargs <<<"$c"
  eval "IOH_STATE_DIR=$tmp/state \"$IOH_LSP\" $ioh" | LC_ALL=C sort >"$tmp/ioh.txt" || true
  eval "rg $rgargs" | LC_ALL=C sort >"$tmp/rg.txt" || true
  if cmp -s "$tmp/ioh.txt" "$tmp/rg.txt"; then same=yes; else same=NO; fail=1; fi
  read -r ti _ < <(measure "env IOH_STATE_DIR=$tmp/state \"$IOH_LSP\" $ioh")
  read -r tr _ < <(measure "rg $rgargs")
  printf '%-22s %9s %9s %7s %8s  %s\n' "$name" "$ti" "$tr" "$(awk -v a="$ti" -v b="$tr" 'BEGIN { printf "%.2f", a / b }')" "$(wc -l <"$tmp/ioh.txt")" "$same"
done
echo
echo "the server's case: searches in one process through a warm, watched index (bench/indexbench):"
"$tmp/indexbench" -corpus "$CORPUS" -runs "$RUNS" || fail=1
exit $fail
