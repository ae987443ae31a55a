#!/usr/bin/env bash
# acp.sh: `ioh-lsp acp` beside `ioh-lsp serve` (the reference: the same
# binary's language server, measured in the same run): spawn → initialize
# reply (median of 20 spawns each, interleaved), and the RSS of the process
# right after that reply (median). ACP frames one JSON message a line; LSP
# frames with Content-Length headers.
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
mkdir -p "$tmp/ws" "$tmp/home" "$tmp/config" "$tmp/state"

HOME=$tmp/home XDG_CONFIG_HOME=$tmp/config XDG_STATE_HOME=$tmp/state IOH_STATE_DIR=$tmp/state/ioh \
python3 - "$ioh" "$tmp/ws" <<'PY'
import json, os, statistics, subprocess, sys, time

ioh, ws = sys.argv[1], sys.argv[2]
N = 20

def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0

def read_lsp(out):
    length = 0
    while True:
        line = out.readline()
        if not line:
            raise SystemExit("serve closed its stdout before answering")
        line = line.strip()
        if not line:
            break
        k, _, v = line.decode().partition(":")
        if k.lower() == "content-length":
            length = int(v)
    return json.loads(out.read(length))

def once(kind):
    args = [ioh, kind]
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    t0 = time.perf_counter()
    if kind == "acp":
        msg = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": 1, "clientCapabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
        p.stdin.write(json.dumps(msg).encode() + b"\n"); p.stdin.flush()
        reply = json.loads(p.stdout.readline())
    else:
        msg = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"processId": os.getpid(), "rootUri": "file://" + ws, "capabilities": {},
                          "workspaceFolders": [{"uri": "file://" + ws, "name": "ws"}]}}
        body = json.dumps(msg).encode()
        p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body); p.stdin.flush()
        reply = read_lsp(p.stdout)
    dt = time.perf_counter() - t0
    if "result" not in reply:
        raise SystemExit(f"{kind}: initialize failed: {reply}")
    rss = rss_kib(p.pid)
    p.stdin.close()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill(); p.wait()
    return dt, rss

res = {"acp": [], "serve": []}
for _ in range(N):
    for kind in ("acp", "serve"):
        res[kind].append(once(kind))

def med(kind, i):
    return statistics.median(r[i] for r in res[kind])

ta, ts = med("acp", 0) * 1000, med("serve", 0) * 1000
ra, rs = med("acp", 1) / 1024, med("serve", 1) / 1024
print(f"spawn → initialize reply (median of {N}): acp {ta:.1f} ms, serve {ts:.1f} ms, ratio acp/serve {ta/ts:.2f}")
print(f"RSS after initialize (median of {N}):     acp {ra:.1f} MiB, serve {rs:.1f} MiB, ratio acp/serve {ra/rs:.2f}")
PY
