#!/bin/sh
# Verification figures, as sizes and ratios measured in the same run:
#   chatty suite: 300 passing tests that each log a line and one failing
#     TestMean: the bytes of feedback the model reads after a failed
#     finish against the bytes of test2json events the check printed
#     (the feedback was 34 KB, without the assertion, before it was built
#     per failing test).
#   big suite: a 40-package module of 4,000 chatty tests verified in the
#     real sandbox (red and green run): the verifier's heap peak against
#     the bytes of test2json events it read (the evidence streams through
#     a spool file; before, a 1 MiB cap killed the run).
set -eu
cd "$(dirname "$0")/.."
a=$(IOH_BENCH=1 go test -count=1 -run '^TestFailureTextChattySuite$' -v ./internal/agent/ 2>&1) || { echo "$a"; exit 1; }
b=$(IOH_BENCH=1 go test -count=1 -run '^TestBigSuiteVerified$' -v ./internal/agent/verify/ 2>&1) || { echo "$b"; exit 1; }
printf '%s\n%s\n' "$a" "$b" | grep '^FIGURE' | sed 's/^FIGURE //' | tr ' ' '\n' | sed 's/=/: /'
