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

# The commands the plugin sends (recorded by the fake server and, in the
# e2e, by the spec) must fit the server's declarations.
root=$(cd "$plugin/../.." && pwd)
log=$(mktemp "${TMPDIR:-/tmp}/ioh-nvim-commands.XXXXXX")
trap 'rm -f "$log"' EXIT
export IOH_COMMAND_LOG="$log"
check_commands() {
  if ! command -v go >/dev/null 2>&1; then
    echo "editors/neovim: go not found; cannot check the recorded commands against schema/commands.schema.json" >&2
    exit 1
  fi
  (cd "$root" && go run ./internal/schemagen -validate "$log")
  : >"$log"
}

run plugin_spec.lua
check_commands
if [ -n "${IOH_LSP:-}" ] && [ "${IOH_E2E:-1}" != 0 ]; then
  IOH_LSP=$IOH_LSP run e2e_spec.lua
  check_commands
else
  echo "== editors/neovim: e2e_spec.lua not run (IOH_LSP unset, or IOH_E2E=0)"
fi
