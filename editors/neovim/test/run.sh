#!/bin/sh
# Neovim plugin tests, headless. First the plugin against a fake LSP server
# (test/fake_server.py), then the real end-to-end run (test/e2e_spec.lua)
# against $IOH_LSP (the top-level Makefile passes bin/ioh-lsp) with the
# replay provider. IOH_E2E=0 skips the second.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
plugin=$(dirname "$here")
NVIM=${NVIM:-nvim}

if ! command -v "$NVIM" >/dev/null 2>&1; then
  echo "editors/neovim: nvim not found (apt-get install neovim); cannot run the plugin tests" >&2
  exit 1
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "editors/neovim: python3 not found; the fake LSP server needs it" >&2
  exit 1
fi

run() {
  echo "== editors/neovim: $1"
  # -u NONE: no user config; the spec loads plugin/ioh.lua itself.
  "$NVIM" --headless -u NONE -i NONE -n --cmd "set rtp^=$plugin" -c "luafile $here/$1" </dev/null
}

run plugin_spec.lua
if [ -n "${IOH_LSP:-}" ] && [ "${IOH_E2E:-1}" != 0 ]; then
  IOH_LSP=$IOH_LSP run e2e_spec.lua
else
  echo "== editors/neovim: e2e_spec.lua not run (IOH_LSP unset, or IOH_E2E=0)"
fi
