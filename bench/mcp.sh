#!/usr/bin/env bash
# mcp.sh: the per-call overhead of a stdio MCP tool call made the agent's
# way (its acts judged by the policy, the server running contained in the
# sandbox, the result rendered and capped) against the reference: the same
# call to the same server (@modelcontextprotocol/server-everything, echo)
# run directly with the official Go SDK's CommandTransport. Both are Go
# benchmarks of internal/wire, compiled once and run alternately over five
# rounds (the machine's load moves both alike); the medians are compared.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root/test/mcp"
[ -d node_modules/@modelcontextprotocol/server-everything ] || npm ci --no-audit --no-fund >/dev/null
cd "$root"
mkdir -p "$tmp/home" "$tmp/config" "$tmp/state"
# A world of its own, but the Go caches of the machine.
export GOCACHE=$(go env GOCACHE) GOMODCACHE=$(go env GOMODCACHE) GOPATH=$(go env GOPATH)
HOME=$tmp/home XDG_CONFIG_HOME=$tmp/config XDG_STATE_HOME=$tmp/state IOH_STATE_DIR=$tmp/state/ioh \
  go test -c -o "$tmp/wire.test" ./internal/wire/
cd "$root/internal/wire"
for round in 1 2 3 4 5; do
  for b in Direct Contained; do
    HOME=$tmp/home XDG_CONFIG_HOME=$tmp/config XDG_STATE_HOME=$tmp/state IOH_STATE_DIR=$tmp/state/ioh \
      "$tmp/wire.test" -test.run '^$' -test.bench "MCPCall$b\$" -test.benchtime 300x >>"$tmp/out"
  done
done
python3 - "$tmp/out" <<'PY'
import re, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r"BenchmarkMCPCall(\w+)-\d+\s+\d+\s+([\d.]+) ns/op", line)
    if m:
        runs.setdefault(m.group(1), []).append(float(m.group(2)) / 1e6)
if set(runs) != {"Direct", "Contained"}:
    raise SystemExit("mcp.sh: the benchmarks did not run:\n" + open(sys.argv[1]).read())
d, c = statistics.median(runs["Direct"]), statistics.median(runs["Contained"])
print(f"stdio MCP call, server-everything echo (median of {len(runs['Direct'])} alternating rounds of 300 calls)")
print(f"  direct (Go SDK CommandTransport):        {d:.3f} ms/call")
print(f"  ioh-lsp (policy + sandbox + rendering):  {c:.3f} ms/call")
print(f"  overhead: +{c - d:.3f} ms/call, ratio {c / d:.2f}x")
PY
