#!/usr/bin/env python3
"""A small LSP server for the Neovim plugin's tests.

It speaks JSON-RPC 2.0 with Content-Length framing over stdio, like
ioh-lsp, and plays SPEC section 8's held-proposal flow for a client without
change-annotation support: ioh.ask answers {runId} (with a runId: a new
run, as for a follow-up on an ended run; an unknown one is an error), then reports
$/progress, publishes an `ioh` diagnostic and sends window/showMessageRequest
(Apply / Show diff / Reject); ioh.showDiff returns the diff; ioh.approve
sends the plain workspace/applyEdit and answers with the outcome. Every
message it receives is kept; the command fake.calls returns them. With
IOH_COMMAND_LOG set, each ioh.* command and its answer is appended to that
file as one JSON line, {command, arguments, result?}, and the `ioh` settings
of initialize and workspace/configuration as {settings}; run.sh checks them
against schema/commands.schema.json and schema/settings.schema.json (`go
run ./internal/schemagen -validate`). The command list it offers is read
from the commands schema.
"""
import json
import os
import sys

IN = sys.stdin.buffer
OUT = sys.stdout.buffer
calls = []
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "schema", "commands.schema.json")
with open(SCHEMA) as f:
    COMMANDS = json.load(f)["properties"]["command"]["enum"]
LOG = os.environ.get("IOH_COMMAND_LOG", "")
next_id = 1000
runs = {}
# The fixture's bug: calc.go line 5 (0-based 4) reads "\treturn a - b".
FIX_RANGE = {"start": {"line": 4, "character": 8}, "end": {"line": 4, "character": 13}}
# A goal naming "two hunks": the asked file (12 lines "l1".."l12") gets its
# first and last lines changed, two hunks of the diff.
TWO_DIFF = ("--- a/two.txt\n+++ b/two.txt\n@@ -1,4 +1,4 @@\n-l1\n+L1\n l2\n l3\n l4\n"
            "@@ -9,4 +9,4 @@\n l9\n l10\n l11\n-l12\n+L12\n")
TWO_EDITS = [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 2}}, "newText": "L1"},
             {"range": {"start": {"line": 11, "character": 0}, "end": {"line": 11, "character": 3}}, "newText": "L12"}]
DIFF = "--- a/calc.go\n+++ b/calc.go\n@@ -4,3 +4,3 @@\n func Add(a, b int) int {\n-\treturn a - b\n+\treturn a + b\n }\n"


def read():
    length = None
    while True:
        line = IN.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        k, _, v = line.decode().partition(":")
        if k.lower() == "content-length":
            length = int(v)
    if length is None:
        raise SystemExit("fake server: message without Content-Length")
    return json.loads(IN.read(length))


def send(msg):
    msg["jsonrpc"] = "2.0"
    body = json.dumps(msg).encode()
    OUT.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    OUT.flush()


def notify(method, params):
    send({"method": method, "params": params})


def request(method, params):
    """Sends a request and serves incoming messages until its answer comes."""
    global next_id
    next_id += 1
    rid = next_id
    send({"id": rid, "method": method, "params": params})
    while True:
        msg = read()
        if msg is None:
            raise SystemExit(0)
        if "method" not in msg and msg.get("id") == rid:
            return msg.get("result"), msg.get("error")
        handle(msg)


def diag(uri, message, severity):
    notify("textDocument/publishDiagnostics", {"uri": uri, "diagnostics": [{
        "range": FIX_RANGE, "severity": severity, "source": "ioh", "message": message}]})


def progress(run, value):
    notify("$/progress", {"token": "ioh/" + run, "value": value})


def command(name, args):
    arg = args[0] if args else None
    if name == "fake.calls":
        return calls
    if name == "ioh.ask":
        if not isinstance(arg, dict) or not arg.get("goal"):
            return {"__error": "ioh.ask: missing argument object with [goal]"}
        prev = arg.get("runId")
        if prev is not None and prev not in runs:
            return {"__error": "ioh.ask: follow up on %s: no such run" % prev}
        run = "r-%d" % (len(runs) + 1)
        runs[run] = {"runId": run, "goal": arg["goal"], "outcome": "running", "steps": 0,
                     "tokens": 0, "costUsd": 0, "started": "2026-11-29T22:00:00Z", "uri": arg.get("uri")}
        if prev is not None:
            # A follow-up on an ended run: a new run linked to it (its flow is not played).
            return {"runId": run}
        return {"runId": run, "__after": run}
    if name == "ioh.showDiff":
        two = "two hunks" in runs.get(arg["runId"], {}).get("goal", "")
        return {"runId": arg["runId"], "diff": TWO_DIFF if two else DIFF}
    if name in ("ioh.approve", "ioh.reject"):
        run = runs.get(arg and arg.get("runId"))
        if run is None:
            return {"__error": "%s: no run %r in this session" % (name, arg)}
        if name == "ioh.reject":
            run["outcome"] = "rejected"
        else:
            edits = TWO_EDITS if "two hunks" in run["goal"] else [{"range": FIX_RANGE, "newText": "a + b"}]
            res, err = request("workspace/applyEdit", {"label": "ioh: " + run["goal"], "edit": {
                "changes": {run["uri"]: edits}}})
            run["outcome"] = "applied" if (res and res.get("applied")) else "rejected"
            diag(run["uri"], "run %s, step 2: edit_file — make Add add" % run["runId"], 3)
        progress(run["runId"], {"kind": "end", "message": run["outcome"]})
        return {"runId": run["runId"], "outcome": run["outcome"]}
    if name == "ioh.runs":
        return [{k: v for k, v in r.items() if k != "uri"} for r in runs.values()]
    if name == "ioh.run":
        run = "r-%d" % (len(runs) + 1)
        runs[run] = {"runId": run, "goal": "task file", "outcome": "running", "steps": 0,
                     "tokens": 0, "costUsd": None, "started": "2026-11-29T22:05:00Z", "uri": arg.get("contract")}
        return {"runId": run}
    if name == "ioh.cancel":
        return {"runId": arg["runId"], "cancelled": False}
    if name == "ioh.resume":
        return {"runId": arg["runId"]}
    if name == "ioh.trace":
        r = {k: v for k, v in runs[arg["runId"]].items() if k != "uri"}
        r.update(events=4, types={"tool_call": 2, "run_end": 1}, summary="Add now adds")
        return r
    if name == "ioh.clearTrace":
        return {"cleared": (arg or {}).get("runId", "")}
    return {"__error": "unknown command %r" % name}


def after_ask(run):
    r = runs[run]
    request("window/workDoneProgress/create", {"token": "ioh/" + run})
    progress(run, {"kind": "begin", "title": "ioh: " + r["goal"], "cancellable": True, "message": "run " + run})
    r.update(steps=2, tokens=2000, costUsd=0.0036)
    progress(run, {"kind": "report", "message": "step 2 · 2000 tokens · $0.0036 · edit_file"})
    diag(r["uri"], "run %s, step 2: edit_file — make Add add (pending review)" % run, 3)
    r["outcome"] = "awaiting_approval"
    request("window/showMessageRequest", {"type": 3, "message": "ioh run %s: verified change to 1 file(s) ready: Add now adds" % run,
                                          "actions": [{"title": "Apply"}, {"title": "Show diff"}, {"title": "Reject"}]})


def handle(msg):
    method = msg.get("method")
    calls.append({"method": method, "params": msg.get("params")})
    if method is None:
        return
    mid = msg.get("id")
    if method == "initialize":
        record({"settings": (msg["params"].get("initializationOptions") or {}).get("ioh")})
        send({"id": mid, "result": {"serverInfo": {"name": "ioh-lsp"}, "capabilities": {
            "textDocumentSync": 2, "executeCommandProvider": {"commands": COMMANDS}}}})
    elif method == "initialized":
        res, _ = request("workspace/configuration", {"items": [{"section": "ioh"}, {"section": "other"}]})
        record({"settings": res[0] if res else None})
        calls.append({"method": "fake/configuration", "params": res})
    elif method == "workspace/executeCommand":
        p = msg["params"]
        res = command(p["command"], p.get("arguments") or [])
        rec = {"command": p.get("command"), "arguments": p.get("arguments")}
        if isinstance(res, dict) and "__error" in res:
            record(rec)
            send({"id": mid, "error": {"code": -32602, "message": res["__error"]}})
            return
        after = res.pop("__after", None) if isinstance(res, dict) else None
        rec["result"] = res
        record(rec)
        send({"id": mid, "result": res})
        if after:
            after_ask(after)
    elif method == "shutdown":
        send({"id": mid, "result": None})
    elif method == "exit":
        raise SystemExit(0)
    elif mid is not None:
        send({"id": mid, "error": {"code": -32601, "message": "method not found: " + method}})


def record(rec):
    """Appends an ioh.* command the plugin sent (and the answer), or the
    settings it sent ({settings}), to LOG."""
    if not LOG:
        return
    if "settings" not in rec and not str(rec.get("command", "")).startswith("ioh."):
        return
    if "arguments" in rec and rec["arguments"] is None:
        del rec["arguments"]
    with open(LOG, "a") as f:
        f.write(json.dumps(rec) + "\n")


def main():
    while True:
        msg = read()
        if msg is None:
            return
        handle(msg)


if __name__ == "__main__":
    main()
