"""A tiny verifier for relay tests (the real ones: affidavit.proxy.verifiers).

Did a file get the content it was sent?

Judges the raw backend's ``write_file`` / ``lie_write`` / ``count`` tools. It looks only inside
the roots the proxy knows; with none, it says ``unchecked``. ``SLOW_VERIFY_SECONDS`` makes
``verify`` sleep, to show that a slow verification blocks nothing else.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

from affidavit.proxy.verifiers.base import CallContext, Evidence, Receipt, Verdict


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


class FileWriteVerifier:
    name = "test-file"

    def applies(self, ctx: CallContext) -> bool:
        return ctx.method == "tools/call" and ctx.name in {"write_file", "lie_write", "count"}

    def _path(self, ctx: CallContext) -> Path | None:
        path = Path(str(ctx.arguments.get("path", ""))).resolve()
        for root in ctx.roots:
            if path.is_relative_to(root):
                return path
        return None

    def snapshot(self, ctx: CallContext):
        path = self._path(ctx)
        return None if path is None else _digest(path)

    def verify(self, ctx: CallContext, before, result) -> Receipt:
        time.sleep(float(os.environ.get("SLOW_VERIFY_SECONDS", "0")))
        if ctx.arguments.get("content") == "crash the verifier":
            raise RuntimeError("a verifier bug")
        path = self._path(ctx)
        claim = f"{ctx.name} {ctx.arguments.get('path')}"
        if path is None:
            return Receipt(
                Verdict.UNCHECKED, self.name, claim, (Evidence("no root covers it", "roots"),)
            )
        now = _digest(path)
        if ctx.name == "count":
            if now is None or now == before:
                return Receipt(
                    Verdict.CONTRADICTED,
                    self.name,
                    claim,
                    (Evidence("counter unchanged", str(path)),),
                )
            return Receipt(
                Verdict.VERIFIED,
                self.name,
                claim,
                (Evidence(f"counter now {path.read_text()}", str(path)),),
                {"sha256": now},
            )
        wanted = hashlib.sha256(str(ctx.arguments.get("content", "")).encode()).hexdigest()
        if now != wanted:
            return Receipt(
                Verdict.CONTRADICTED,
                self.name,
                claim,
                (Evidence(f"{path.name} does not hold the content", str(path)),),
            )
        return Receipt(
            Verdict.VERIFIED,
            self.name,
            claim,
            (Evidence(f"{path.name} holds sha256 {now[:12]}", str(path)),),
            {"sha256": now},
        )

    def still_holds(self, ctx: CallContext, receipt: Receipt) -> bool:
        path = self._path(ctx)
        return path is not None and _digest(path) == receipt.vouched.get("sha256")
