#!/bin/bash
# Eval figures (docs/eval.md), as ratios measured in this run:
#  1. A 20-task suite generated from internal/eval/generate/testdata/calc (ioh-lsp
#     eval generate --cassettes), 2 replayed variants x 2 repeats = 80
#     cells, split 4 ways: the sharded eval (4 shards at once, then eval
#     merge) against its slowest shard (goal <= 2x), and the merged
#     report equal to the unsharded run's byte for byte (--no-timing).
#  2. Per-cell overhead of eval over a bare `ioh-lsp run` of the same task
#     with the same cassette (goal <= 10%): N cells of one task, one at a
#     time, workspace copy included, against N bare runs in fresh copies.
set -eu
cd "$(dirname "$0")/.."
. bench/lib.bash
bin=${IOH_LSP:-$PWD/bin/ioh-lsp}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export IOH_STATE_DIR=$tmp/state GOFLAGS= GOTOOLCHAIN=local GOPROXY=off
now() { date +%s%N; }
ms() { echo $(( ($2 - $1) / 1000000 )); }

"$bin" eval generate internal/eval/generate/testdata/calc --count 20 --seed 1 --max-tries 400 --cassettes --out "$tmp/suite" >/dev/null 2>"$tmp/gen.log" || { cat "$tmp/gen.log"; exit 1; }
tasks=$(grep -c '^  - id:' "$tmp/suite/suite.yaml")
echo "suite: $tasks generated tasks x 2 variants x 2 repeats"

# 1. Sharded against its slowest shard.
start=$(now)
for i in 0 1 2 3; do
	( s=$(now); "$bin" eval "$tmp/suite/suite.yaml" --repeat 2 --parallel 1 --shard $i/4 --out "$tmp/shard$i" >/dev/null 2>"$tmp/shard$i.log" || { cat "$tmp/shard$i.log"; exit 1; }; ms "$s" "$(now)" >"$tmp/shard$i.ms" ) &
done
wait
"$bin" eval merge --no-timing --title "Evaluation of calc" --out "$tmp/merged" "$tmp"/shard*/results.jsonl >/dev/null 2>&1
sharded=$(ms "$start" "$(now)")
slowest=$(cat "$tmp"/shard*.ms | sort -n | tail -1)
echo "sharded 4 ways (4 at once + merge): ${sharded} ms; slowest shard: ${slowest} ms; ratio $(ratio "$sharded" "$slowest") (goal <= 2.00)"
s=$(now)
"$bin" eval "$tmp/suite/suite.yaml" --repeat 2 --parallel 4 --no-timing --out "$tmp/whole" >/dev/null 2>"$tmp/whole.log" || { cat "$tmp/whole.log"; exit 1; }
echo "unsharded (--parallel 4): $(ms "$s" "$(now)") ms"
if cmp -s "$tmp/whole/report.md" "$tmp/merged/report.md"; then
	echo "merged report equals the unsharded report: yes"
else
	echo "merged report equals the unsharded report: NO"
	diff "$tmp/whole/report.md" "$tmp/merged/report.md" || true
	exit 1
fi

# 2. Per-cell overhead against bare runs.
n=6
task=$(sed -n 's/^  - id: //p' "$tmp/suite/suite.yaml" | head -1)
printf 'name: one\ntasks:\n  - {id: %s, workspace: %s}\nvariants:\n  - {name: restore, provider: replay, cassette: %s}\n' \
	"$task" "$tmp/suite/tasks/$task" "$tmp/suite/cassettes/restore/$task.json" >"$tmp/one.yaml"
bare=0 evalms=0
for round in 1 2; do
	s=$(now)
	for i in $(seq $n); do
		cp -r "$tmp/suite/tasks/$task" "$tmp/bare$round.$i"
		(cd "$tmp/bare$round.$i" && "$bin" run task.ioh.yaml --approve never --cassette "$tmp/suite/cassettes/restore/$task.json" >/dev/null 2>&1)
	done
	bare=$((bare + $(ms "$s" "$(now)")))
	s=$(now)
	"$bin" eval "$tmp/one.yaml" --repeat $n --parallel 1 --out "$tmp/one$round" >/dev/null 2>&1
	evalms=$((evalms + $(ms "$s" "$(now)")))
done
echo "per cell: eval $((evalms / (2 * n))) ms, bare ioh-lsp run $((bare / (2 * n))) ms; eval/bare $(ratio "$evalms" "$bare") (goal <= 1.10)"
