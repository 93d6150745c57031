"""Output-schema conformance: every tool that declares an outputSchema has its results checked.

Unit cases judge results against schemas directly. End to end: the dev server behind the proxy
(``test_verifier_sqlite.py``: its tools all declare schemas) and the lying backend's schema lies
in the corpus (``test_verifier_corpus.py``).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from affidavit.proxy.verifiers.base import Verdict
from affidavit.proxy.verifiers.schema import OutputSchemas, SchemaChecked, conformance
from affidavit.proxy.verifiers.sqlite import SQLiteVerifier
from tests.proxy._verifier_fixtures import call, tool_result

SCHEMA = {
    "type": "object",
    "properties": {"changes": {"type": "integer"}, "db": {"type": "string"}},
    "required": ["changes", "db"],
}
CTX = call("count_rows", {})


def test_conforming_and_malformed_results() -> None:
    ok = conformance(CTX, SCHEMA, tool_result("1", {"changes": 1, "db": "a.db"}))
    assert ok.verdict is Verdict.VERIFIED and ok.verifier == "output-schema"
    wrong = conformance(CTX, SCHEMA, tool_result("1", {"changes": "1", "db": "a.db"}))
    assert wrong.verdict is Verdict.CONTRADICTED
    assert "changes: '1' is not of type 'integer'" in wrong.evidence[0].observed
    missing = conformance(CTX, SCHEMA, tool_result("1"))
    assert missing.verdict is Verdict.CONTRADICTED
    assert "no structuredContent" in missing.evidence[0].observed
    failed = conformance(CTX, SCHEMA, tool_result("boom", is_error=True))
    assert failed.verdict is Verdict.UNCHECKED  # an error promises no shape
    broken = conformance(CTX, {"type": 12}, tool_result("1", {"changes": 1}))
    assert broken.verdict is Verdict.UNCHECKED


def test_a_remote_ref_is_never_fetched() -> None:
    """A backend's schema must not make the proxy reach out (an SSRF through ``$ref``)."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(json.dumps({"type": "object"}).encode())

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        ref = {"$ref": f"http://127.0.0.1:{server.server_address[1]}/schema.json"}
        receipt = conformance(CTX, ref, tool_result("1", {"changes": 1}))
    finally:
        server.shutdown()
        server.server_close()
    assert receipt.verdict is Verdict.UNCHECKED and seen == []


def test_schemas_are_learned_and_forgotten_from_listings() -> None:
    schemas = OutputSchemas()
    schemas.learn([{"name": "a", "outputSchema": SCHEMA}, {"name": "b"}, "junk"])
    assert schemas.get("a") == SCHEMA and schemas.get("b") is None
    schemas.learn([{"name": "a"}])  # listed again without one: no longer checked
    assert schemas.get("a") is None


def test_a_malformed_result_is_contradicted_whatever_the_domain_verifier_says(tmp_path) -> None:
    checked = SchemaChecked(SCHEMA, SQLiteVerifier())
    ctx = call("sqlite_execute", {"db": "a.db", "sql": "SELECT 1"})
    receipt = checked.verify(ctx, None, tool_result("1", {"changes": "1", "db": "a.db"}))
    assert receipt.verdict is Verdict.CONTRADICTED and receipt.verifier == "output-schema"
    assert any(e.observed.startswith("sqlite (unchecked)") for e in receipt.evidence)
    assert not SchemaChecked(SCHEMA, None).replayable
