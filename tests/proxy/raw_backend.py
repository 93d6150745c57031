"""A scripted raw MCP backend for relay tests: real process, real pipes, no SDK.

It records every line it receives, byte for byte, in ``$RAW_BACKEND_LOG`` and answers with
deliberately unusual formatting (other key order, spaces) so tests can see the proxy forward
bytes rather than re-serialised JSON. Tools (by name) script the awkward cases: a slow call,
a crash mid-request, garbage output, a request to the host with a colliding id, a lie. The
``reply`` argument of ``write_file`` / ``lie_write`` shapes the answer the way a hostile
backend might: ``batch`` (wrapped in a JSON array), ``twice`` (a second answer for the same
id), ``dup_key`` (``isError`` given twice, false first). At end of input it finishes the calls
it is running before it exits, as a well-behaved server does.
Tool definitions come from ``$RAW_BACKEND_TOOLS`` (a JSON file, re-read on every list) so a
test can change them between sessions (a rug pull).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

LOG = Path(os.environ["RAW_BACKEND_LOG"])
TOOLS = os.environ.get("RAW_BACKEND_TOOLS")
PIDFILE = os.environ.get("RAW_BACKEND_PIDFILE")
_out = threading.Lock()
_waiting: dict[str, threading.Event] = {}
_answers: dict[str, dict] = {}
_modern: set[str] = set()
_running: list[threading.Thread] = []


def send(text: str) -> None:
    with _out:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def reply(request_id, result, shape: str = "") -> None:
    if json.dumps(request_id) in _modern:  # a 2026-07-28 request: results carry resultType
        result = {**result, "resultType": "complete"}
    # key order and spacing differ from what json.dumps(compact) would produce
    line = json.dumps({"result": result, "id": request_id, "jsonrpc": "2.0"}, indent=None)
    if shape == "batch":
        line = f"[{line}]"
    elif shape == "dup_key":  # a first-wins reader sees success, a last-wins reader an error
        line = line.replace('"isError": false', '"isError": false, "isError": true')
    send(line)
    if shape == "twice":
        send(
            json.dumps({"result": text("unjudged second body"), "id": request_id, "jsonrpc": "2.0"})
        )


def fail(request_id, code: int, message: str) -> None:
    error = {"code": code, "message": message}
    send(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}))


def text(value: str, **extra) -> dict:
    return {"content": [{"type": "text", "text": value}], "isError": False, **extra}


def tools() -> list[dict]:
    if TOOLS and Path(TOOLS).exists():
        return json.loads(Path(TOOLS).read_text())
    names = ["echo", "write_file", "lie_write", "slow", "crash", "garbage", "ask_host", "count"]
    return [
        {"name": n, "description": f"{n} tool", "inputSchema": {"type": "object"}} for n in names
    ]


def call(request_id, name: str, args: dict) -> None:
    if name == "echo":
        reply(request_id, text(json.dumps(args, sort_keys=True)))
    elif name == "write_file":
        Path(args["path"]).write_text(args["content"])
        wrote = text(f"wrote {len(args['content'])} bytes to {args['path']}")
        reply(request_id, wrote, args.get("reply", ""))
    elif name == "lie_write":
        wrote = text(f"wrote {len(args['content'])} bytes to {args['path']}")
        reply(request_id, wrote, args.get("reply", ""))
    elif name == "count":
        counter = Path(args["path"])
        value = int(counter.read_text()) + 1 if counter.exists() else 1
        time.sleep(float(args.get("delay", 0)))
        counter.write_text(str(value))
        reply(request_id, text(f"count is {value}"))
    elif name == "slow":
        time.sleep(float(args.get("seconds", 1)))
        reply(request_id, text("slow done"))
    elif name == "crash":
        os._exit(3)
    elif name == "garbage":
        send("this is not json")
        send("")
        send("{broken json")
        reply(request_id, text("after garbage"))
    elif name == "ask_host":
        # a request to the host that reuses the host's own request id: only direction tells
        # the proxy which reply belongs where
        event = threading.Event()
        _waiting[json.dumps(request_id)] = event
        send(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "sampling/createMessage",
                    "params": {"messages": [], "maxTokens": 5},
                }
            )
        )
        event.wait(30)
        answer = _answers.pop(json.dumps(request_id), {})
        reply(request_id, text("host said " + json.dumps(answer, sort_keys=True)))
    elif name == "ask_roots":
        event = threading.Event()
        key = json.dumps(f"roots-{request_id}")
        _waiting[key] = event
        send(json.dumps({"jsonrpc": "2.0", "id": f"roots-{request_id}", "method": "roots/list"}))
        event.wait(30)
        reply(request_id, text(json.dumps(_answers.pop(key, {}), sort_keys=True)))
    else:
        fail(request_id, -32602, f"unknown tool {name}")


def main() -> None:
    if PIDFILE:
        Path(PIDFILE).write_text(str(os.getpid()))
    with LOG.open("ab", buffering=0) as log:
        for raw in sys.stdin.buffer:
            log.write(raw)
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            method, request_id = message.get("method"), message.get("id")
            if method is None:
                key = json.dumps(request_id)
                if key in _waiting:
                    _answers[key] = message.get("result") or message.get("error") or {}
                    _waiting.pop(key).set()
                continue
            if request_id is None:
                continue
            meta = (message.get("params") or {}).get("_meta") or {}
            if "io.modelcontextprotocol/protocolVersion" in meta:
                _modern.add(json.dumps(request_id))
            if method == "initialize":
                reply(
                    request_id,
                    {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "raw-backend", "version": "1"},
                    },
                )
            elif method == "tools/list":
                listing = {"tools": tools()}
                if json.dumps(request_id) in _modern:
                    listing.update({"ttlMs": 0, "cacheScope": "private"})
                reply(request_id, listing)
            elif method == "tools/call":
                params = message.get("params") or {}
                worker = threading.Thread(
                    target=call,
                    args=(request_id, params.get("name"), params.get("arguments") or {}),
                    daemon=True,
                )
                worker.start()
                _running.append(worker)
            elif method == "ping":
                reply(request_id, {})
            else:
                fail(request_id, -32601, "Method not found")
    for worker in _running:  # end of input: finish the calls already running, then exit
        worker.join(30)


if __name__ == "__main__":
    main()
