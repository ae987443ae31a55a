#!/usr/bin/env bash
# lsp.sh: ioh-lsp side by side with gopls (installed from the module proxy
# into a temporary GOBIN in this run): spawn → initialize response (median
# of 10), RSS 2 s after `initialized` on $(go env GOROOT)/src, and
# textDocument/codeAction p50/p99 on a file of that workspace.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ioh=${IOH_LSP:-}
if [ -z "$ioh" ]; then
  (cd "$root" && go build -o "$tmp/ioh-lsp" ./cmd/ioh-lsp)
  ioh=$tmp/ioh-lsp
fi
echo "installing gopls@latest from the module proxy into $tmp/bin"
if ! GOBIN=$tmp/bin go install golang.org/x/tools/gopls@latest 2>"$tmp/gopls.err"; then
  # The newest gopls may need a newer Go than this machine's toolchain;
  # take the newest release that builds with it.
  sed 's/^/  /' "$tmp/gopls.err"
  echo "gopls@latest does not build with $(go env GOVERSION); trying gopls@v0.23.0"
  GOBIN=$tmp/bin go install golang.org/x/tools/gopls@v0.23.0
fi
echo "reference: $("$tmp/bin/gopls" version | head -1)"
(cd "$here/lspbench" && go build -o "$tmp/lspbench" .)

ws=$(go env GOROOT)/src
"$tmp/lspbench" -workspace "$ws" -file fmt/print.go -n 10 -settle 2s -requests 200 \
  -- "ioh-lsp=$ioh" serve -- "gopls=$tmp/bin/gopls"
