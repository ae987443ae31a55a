#!/bin/sh
# Harness figures (issue 4): per-step durable commit time over a 200-step
# scripted run, against fsync'd appends of the same bytes to a file measured
# in the same run; prompt bytes per step over a 30-step run and the share of
# each request that is a byte-identical prefix of the next (goal >= 90%).
# The trace store runs SQLite in WAL mode with synchronous=FULL: each step's
# commit is fsynced before the next step starts.
set -eu
cd "$(dirname "$0")/.."
out=$(IOH_BENCH=1 go test -count=1 -run '^TestHarnessFigures$' -v ./internal/agent/ 2>&1) || { echo "$out"; exit 1; }
echo "$out" | grep '^FIGURE' | sed 's/^FIGURE //' | tr ' ' '\n' | sed 's/=/: /'
