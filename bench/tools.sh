#!/usr/bin/env bash
# bench/tools.sh: what the agent's workspace tools cost a model and how
# robust its edits are (bench/toolsbench), on the Go source tree with a
# fixed seed, through the real tools; each figure beside the old
# behaviour measured in the same run (whole-file read cut at 64 KiB,
# exact-only edit matching).
#
#   localising and reading 500 sampled functions by the results' hints:
#     p50 tokens (goal <= 1,500; tokens = bytes/4), % reachable (goal 100%)
#   2,000 sampled 3-line edits, exact and with one slip each (tabs written
#     as spaces, a CRLF file, a trailing space): slips applied (goal
#     >= 85%), exact edits applied (goal 100%), none at a wrong place
#     (fails the bench).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CORPUS=${CORPUS:-$(go env GOROOT)/src}
SEED=${SEED:-1}
cd "$here/.."
go run ./bench/toolsbench -corpus "$CORPUS" -seed "$SEED" -funcs "${FUNCS:-500}" -edits "${EDITS:-2000}"
