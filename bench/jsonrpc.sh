#!/usr/bin/env bash
# jsonrpc.sh: messages per second through internal/jsonrpc's connection
# (the one the language server and the ACP agent speak) with each framer,
# beside go.lsp.dev/jsonrpc2 with the same framing (what the server used
# before; the reference), measured in the same run over OS pipes: a burst
# of didChange-sized notifications handled in order, and requests
# answered one at a time. Median of 3 runs of 20000 messages each.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.bash"

out=$(cd "$root" && go test -count=3 -run '^$' -bench 'Notify|Call' -benchtime 20000x ./internal/jsonrpc/)
# median ns/op of one benchmark
med() { printf '%s\n' "$out" | awk -v b="$1" '$1 ~ "^"b"-" { print $3 }' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
printf '%-8s %-7s %14s %14s %8s\n' bench framer "ours msg/s" "jsonrpc2 msg/s" ratio
for b in Notify Call; do
	for f in header line; do
		o=$(med "Benchmark$b/$f/ours")
		r=$(med "Benchmark$b/$f/jsonrpc2")
		printf '%-8s %-7s %14.0f %14.0f %8s\n' "$b" "$f" "$(ratio 1e9 "$o")" "$(ratio 1e9 "$r")" "$(ratio "$r" "$o")"
	done
done
echo "ratio: ours / jsonrpc2 in messages per second (above 1: ours is faster)"
