#!/bin/sh
# Context figures: fixed scripted transcripts replayed through the real
# harness, each request counted as bytes/4 of its system prompt, messages
# and tool specs (agent.approxTokens), with observation masking and, as
# the reference measured in the same run, without it.
#   long_run: 25 steps (a listing, a whole-file read of 120 KB, a grep
#     hitting a minified file, 20 reads, an edit, finish): goals Σ input
#     ≤ 250k tokens, largest request ≤ 25k, prefix reuse ≥ 0.90, fixed
#     overhead (system prompt + tools) ≤ 2.5k.
#   reads: 30 reads of distinct 8 KB files, then the first again: goal no
#     request over ~30k tokens (the last 10 results verbatim, the older
#     ones stubs: asserted by the test).
set -eu
cd "$(dirname "$0")/.."
out=$(IOH_BENCH=1 go test -count=1 -run '^TestContext(LongRun|ManyReads)Figures$' -v ./internal/agent/ 2>&1) || { echo "$out"; exit 1; }
echo "$out" | grep '^FIGURE' | sed 's/^FIGURE //' | tr ' ' '\n' | sed 's/=/: /'
