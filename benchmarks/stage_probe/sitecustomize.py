"""Per-call spans for ``benchmarks/percall_stages.py``: loaded only by processes that have
this folder on ``PYTHONPATH`` (the benchmark's server and the model service it starts).

Why here and not in ``src/``: the spans wrap named functions from outside (after their
module has run), so the product's hot path carries no tracing code, not even a disabled
check. Each span is one line ``[pid, label, start, end, thread CPU]`` (perf_counter is
CLOCK_MONOTONIC on Linux: one clock for every process), written to ``out/<pid>.jsonl``
beside this file, flushed after each top-level span so no line waits for process exit.
"""

from __future__ import annotations

import atexit
import functools
import importlib.abc
import importlib.machinery
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "out"
#: module -> [(qualified name, label, flush after it)]
TARGETS: dict[str, list[tuple[str, str, bool]]] = {
    "affidavit.servers.toolserver": [
        ("_plain", "server: read line, parse JSON", False),
        ("_FastSession._call", "server: worker call", False),
        ("_FastSession._send", "server: encode reply, write", True),
    ],
    "affidavit.servers.toolkit": [
        ("check_arguments", "server: validate arguments", False),
        ("json_wire", "server: encode result text", False),
    ],
    "affidavit.servers.memory.handlers": [
        ("MemoryTools.memory_store", "handler: memory_store", False),
        ("MemoryTools.memory_search", "handler: memory_search", False),
    ],
    "affidavit.vault.vault": [
        ("Vault.refresh", "vault: refresh (others' writes)", False),
        ("Vault._write", "vault: write transaction (seal, audit, commit)", False),
    ],
    "affidavit.vault.rows": [
        ("RowFile.write", "vault: COMMIT (WAL append, fsync)", False),
    ],
    "affidavit.recall.memory": [
        ("Memory._embed", "recall: embed the memory (IPC incl.)", False),
        ("Memory._decide", "recall: duplicate check (nearest)", False),
        ("Memory._sweep", "recall: expiry sweep", False),
        ("Memory._view", "recall: result views", False),
        ("Memory._sync", "recall: sync (refresh, drain)", False),
        ("Memory._hidden", "recall: expired ids", False),
        ("Memory._max_chars", "recall: length limit setting", False),
        ("Memory._require_write", "recall: write grant", False),
    ],
    "affidavit.recall.ranking.index": [
        ("RecallIndex.search", "recall: ranking (waits for the question's vector)", False),
        ("literal_evidence", "ranking: keyword channel (FTS5)", False),
        ("exact_evidence", "ranking: exact ids and numbers", False),
        ("rank", "ranking: fuse and score", False),
        ("spread", "ranking: page", False),
    ],
    "affidavit.recall.ranking.channels": [
        ("VectorIndex.search", "ranking: vector channel (10k products)", False),
    ],
    "affidavit.recall.installed_packs": [
        ("PackShelf.sync", "recall: installed packs sync", False),
    ],
    "affidavit.access.grants": [
        ("Access.scope", "recall: readable namespaces", False),
    ],
    "affidavit.recall.views": [
        ("search_json", "recall: search page to wire", False),
        ("store_json", "recall: store outcome to wire", False),
        ("store_stamp", "recall: store stamp", False),
    ],
    "affidavit.recall.embedder": [
        ("Embedder.embed_query", "recall: embed the question (IPC incl.)", False),
        ("Embedder.windows", "recall: tokenize", False),
    ],
    "affidavit.recall.model_service": [
        ("_ask", "IPC: model service round trip", False),
        ("RemoteModel.start", "IPC: send the question (search)", False),
        ("RemoteModel._collect", "IPC: read the question's vector (search)", False),
        ("_answer", "service: answer (decode, model, reply)", True),
    ],
    "affidavit.recall.onnx_model": [
        ("OnnxModel.__call__", "service: onnxruntime + pooling", True),
    ],
}
_lines: list[str] = []


def _flush() -> None:
    if _lines:
        OUT.mkdir(exist_ok=True)
        with (OUT / f"{os.getpid()}.jsonl").open("a") as fh:
            fh.write("".join(_lines))
        _lines.clear()


def _wrap(fn: Any, label: str, flush: bool) -> Any:
    @functools.wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        cpu = time.thread_time()
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            end = time.perf_counter()
            used = time.thread_time() - cpu
            _lines.append(json.dumps([os.getpid(), label, start, end, used]) + "\n")
            if flush:
                _flush()

    return timed


class _TimedExit:
    """A context manager whose exit (a transaction's COMMIT) is one span."""

    def __init__(self, inner: Any, label: str) -> None:
        self.inner, self.label = inner, label

    def __enter__(self) -> Any:
        return self.inner.__enter__()

    def __exit__(self, *exc: Any) -> Any:
        return _wrap(self.inner.__exit__, self.label, False)(*exc)


def _wrap_exit(fn: Any, label: str) -> Any:
    @functools.wraps(fn)
    def opened(*args: Any, **kwargs: Any) -> Any:
        return _TimedExit(fn(*args, **kwargs), label)

    return opened


#: Context managers timed at their exit, not their creation.
EXITS = {"RowFile.write"}


def _patch(module: Any) -> None:
    name = module.__spec__.name  # ``python -m`` runs a module as ``__main__``
    for qualname, label, flush in TARGETS.get(name, ()):
        owner: Any = module
        *path, attr = qualname.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        fn = getattr(owner, attr, None)
        if fn is None:
            continue  # an older tree without it
        wrapped = _wrap_exit(fn, label) if qualname in EXITS else _wrap(fn, label, flush)
        setattr(owner, attr, wrapped)


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_module(self, spec: Any) -> Any:
        return self.inner.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.inner.exec_module(module)
        _patch(module)

    def __getattr__(self, name: str) -> Any:  # get_code etc.: ``python -m`` runs through them
        return getattr(self.inner, name)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name not in TARGETS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


sys.meta_path.insert(0, _Finder())
atexit.register(_flush)
