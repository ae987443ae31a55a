#!/usr/bin/env bash
# bench/netproxy.sh: the egress proxy of a run (package netproxy) on
# loopback, each figure against a direct connection measured in the same
# run (bench/netproxybench):
#   throughput of a 100 MB download through a CONNECT tunnel and through
#     plain-HTTP forwarding vs direct (goal >= 0.8x);
#   the latency one connection gains through the proxy (median, goal <= 1 ms);
#   the cost of starting and closing a run's proxy, which a run that asks
#     for no network does not pay (it starts none).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/.."
go run ./bench/netproxybench -mb "${MB:-100}" -rounds "${ROUNDS:-3}" -conns "${CONNS:-300}"
