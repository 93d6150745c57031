"""The demo backend served over Streamable HTTP by the official SDK (uvicorn on loopback).

Usage: ``python sdk_http_server.py ROOT PORT [json]``; prints ``ready`` once listening. Used to
test ``--backend-url`` against a real SDK server rather than only a hand-written stub.
"""

from __future__ import annotations

import sys
from pathlib import Path

import uvicorn

from affidavit.proxy.demo_backend import build


def main() -> None:
    root, port = Path(sys.argv[1]).resolve(), int(sys.argv[2])
    app = build(root).streamable_http_app(json_response=len(sys.argv) > 3)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    server.run()


if __name__ == "__main__":
    main()
