"""Local sentence embeddings: all-MiniLM-L6-v2 (dynamic int8 ONNX) via onnxruntime + tokenizers.

Why this shape:

- The model itself (its pinned files, its onnxruntime session) is :mod:`.onnx_model`;
  this module is what turns text into the model's input and its output into vectors.
- One model per process (:func:`shared_embedder`): loading costs ~0.3 s and ~60 MB, and a
  second copy buys nothing. With ``AFFIDAVIT_EMBEDDER=shared`` (the default of ``affidavit
  serve`` and of the terminal's ``store`` and ``search``) one model per user: the windows go
  to :mod:`.model_service` (ADR 0112, ADR 0167).
- onnxruntime runs on one intra-op thread and never spin-waits: this runs on 2-core laptops
  and CI boxes next to other agents. Spinning threads were the costly part under load
  (2 spinning threads: 51 ms p50 per query embedding, 1 thread 14 ms, float graph). A
  search question (~11 tokens) costs ~1.7 ms of CPU, a 22-token memory ~3.1 ms (ADR 237),
  too little to split across threads. Bulk work (imports, ``bench retrieval``) uses both
  cores differently: :data:`BULK_THREADS` threads each run a group of windows through the
  same session at once (onnxruntime's ``run`` may be called concurrently), so no second
  session and no per-operator wake-ups.
- Bulk groups are cut by tokens (:data:`BATCH_TOKENS`, :data:`BATCH_ROWS`): one group is one
  call to the model (one round trip to the model service, one task for a bulk thread), long
  windows first so the last to finish are short. The model runs each window on its own
  (:class:`.onnx_model.OnnxModel`), so a window's vector does not depend on its group
  (checked bit for bit in the tests), and a window that occurs twice is embedded once.
- Long text is cut into overlapping token windows (:data:`WINDOW_TOKENS`, stride
  :data:`WINDOW_STRIDE`), each embedded on its own; recall scores a memory by its best
  window, so a fact at the end of a long record is as findable as one at its start.
- No model installed -> :func:`shared_embedder` returns ``None`` and says why through
  :func:`unavailable_reason`; keyword recall keeps working and ``status`` reports semantic
  recall as off.

Vectors are L2-normalised float32 rows (mean pooling over the attention mask, as the
sentence-transformers model was trained), so a dot product is the cosine.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from affidavit.core.errors import IntegrityError, UnsupportedError
from affidavit.recall.onnx_model import (
    DIM,
    MODEL_FILE,
    MODEL_ID,
    TOKENIZER_FILE,
    Model,
    local_model,
    locate,
    verify,
)

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np
    import numpy.typing as npt

logger = logging.getLogger(__name__)


#: Tokens per window including [CLS] and [SEP]: the length MiniLM-L6-v2 was trained at.
WINDOW_TOKENS = 256
#: Window start every this many content tokens: 62 tokens of overlap, so no sentence of
#: ordinary length is cut in half by every window.
WINDOW_STRIDE = 192
#: A pathological record (a pasted log) still costs a bounded number of windows; 64 float16
#: windows (48 KiB) stay inside the vault's 64 KiB sealed-vector limit.
MAX_WINDOWS = 64
#: Tokens per group of windows in bulk work (rows x longest window): ~16 short memories,
#: ~8 of 64 tokens, or one full 256-token window (module docstring).
BATCH_TOKENS = 512
#: Windows per bulk call at most, however short.
BATCH_ROWS = 32
#: Threads running bulk batches at once (both cores of the 2-core machines this targets).
BULK_THREADS = max(1, min(2, os.cpu_count() or 1))
#: Search questions whose vectors are kept (384 float32 each: 1.5 KiB, 384 KiB in all).
QUERY_CACHE = 256
#: ``AFFIDAVIT_EMBEDDER``: ``local`` (the model in this process), ``shared`` (the per-user
#: model service, falling back to local), ``off`` (keyword recall only).
MODE_ENV = "AFFIDAVIT_EMBEDDER"
MODES = ("shared", "local", "off")


class Embedder:
    """A sentence model: text in, L2-normalised 384-d float32 vectors out.

    Tokenizing stays in this process (cheap, and the windows are this module's rule); the
    ``model`` that turns windows into vectors may run here or in the shared service.
    """

    def __init__(self, tokenizer_path: Path, model: Model) -> None:
        from concurrent.futures import ThreadPoolExecutor

        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        cls, sep = self._tokenizer.token_to_id("[CLS]"), self._tokenizer.token_to_id("[SEP]")
        if cls is None or sep is None:
            raise IntegrityError(f"{tokenizer_path} lacks [CLS]/[SEP]", "reinstall affidavit")
        self._cls, self._sep = cls, sep
        self._model = model
        # Its one thread starts on the first submit, so a process that never searches has none.
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="affidavit-embed")
        self._recent: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._recent_lock = threading.Lock()
        self._bulk_pool: ThreadPoolExecutor | None = None
        self.model_id = MODEL_ID
        self.dim = DIM

    def windows(self, text: str) -> list[list[int]]:
        """Split a text into overlapping token windows, each framed by [CLS] ... [SEP]."""
        return self._framed(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def _framed(self, ids: list[int]) -> list[list[int]]:
        span = WINDOW_TOKENS - 2
        starts = [0]
        while starts[-1] + span < len(ids) and len(starts) < MAX_WINDOWS:
            starts.append(starts[-1] + WINDOW_STRIDE)
        return [[self._cls, *ids[s : s + span], self._sep] for s in starts]

    def _run(self, batch: list[list[int]]) -> npt.NDArray[np.float32]:
        return self._model(batch)

    def embed_query_soon(self, text: str) -> Callable[[], npt.NDArray[np.float32]]:
        """Start embedding a question; calling the returned function waits for its vector.

        A search reads its literal channel (FTS5 postings, ~1 ms at 10k memories) while the
        question is embedded: with the shared model the request is sent from this thread
        before returning (:meth:`~.model_service.RemoteModel.start`); with the model in
        this process it runs on the embedder's own thread (onnxruntime releases the GIL).
        """
        with self._recent_lock:
            known = self._recent.get(text)
        if known is not None:
            return lambda: self.embed_query(text)  # from the cache, at once
        start = getattr(self._model, "start", None)
        if start is None:
            return self._worker.submit(self.embed_query, text).result
        pending = start(self.windows(text)[:1])
        return lambda: self._remember(text, pending()[0])

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """One vector for a search question (its first window: questions are short).

        The last :data:`QUERY_CACHE` questions are remembered (read-only vectors): agents
        repeat questions, and a repeat then costs no model run.
        """
        with self._recent_lock:
            known = self._recent.get(text)
            if known is not None:
                self._recent.move_to_end(text)
                return known
        return self._remember(text, self._run(self.windows(text)[:1])[0])

    def _remember(self, text: str, vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Keep a question's vector among the recent ones (read-only from now on)."""
        vector.setflags(write=False)
        with self._recent_lock:
            self._recent[text] = vector
            if len(self._recent) > QUERY_CACHE:
                self._recent.popitem(last=False)
        return vector

    def embed_windows(self, texts: list[str]) -> list[npt.NDArray[np.float32]]:
        """For each text, a (windows x 384) matrix: every distinct window embedded once, in
        length-sorted groups of :data:`BATCH_TOKENS`, :data:`BULK_THREADS` groups at once."""
        import numpy as np

        encoded = self._tokenizer.encode_batch(texts, add_special_tokens=False)
        distinct: dict[tuple[int, ...], int] = {}  # window -> its row in ``out``
        rows = [
            [distinct.setdefault(tuple(w), len(distinct)) for w in self._framed(e.ids)]
            for e in encoded
        ]
        windows = list(distinct)
        out = np.zeros((len(windows), DIM), dtype=np.float32)
        batches = length_batches([len(w) for w in windows])

        def run(batch: list[int]) -> None:
            out[batch] = self._run([list(windows[i]) for i in batch])

        if len(batches) <= 1:  # one store, one short import: no hop to another thread
            for batch in batches:
                run(batch)
        else:
            for _ in self._bulk.map(run, batches):
                pass  # re-raises the first failure
        return [out[r] for r in rows]

    @property
    def _bulk(self) -> ThreadPoolExecutor:
        from concurrent.futures import ThreadPoolExecutor

        with self._recent_lock:
            if self._bulk_pool is None:
                self._bulk_pool = ThreadPoolExecutor(
                    BULK_THREADS, thread_name_prefix="affidavit-embed-bulk"
                )
            return self._bulk_pool


def length_batches(lengths: list[int]) -> list[list[int]]:
    """Indexes of windows grouped for one model call each: sorted by length, each group at
    most :data:`BATCH_ROWS` windows and :data:`BATCH_TOKENS` tokens counted as rows x longest
    (one window however long), longest groups first so the last to finish are short."""
    batches: list[list[int]] = []
    current: list[int] = []
    for i in sorted(range(len(lengths)), key=lambda k: lengths[k]):
        if current and (
            len(current) == BATCH_ROWS or (len(current) + 1) * lengths[i] > BATCH_TOKENS
        ):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches[::-1]


def vector_to_bytes(windows: npt.NDArray[np.float32]) -> bytes:
    """Serialise a (windows x DIM) matrix for ``VaultItem.vector`` (sealed with the record).

    float16 on disk: half the sealed bytes, and a cosine changes by < 1e-3, far below any
    ranking bound in ``ranking.py``.
    """
    import numpy as np

    return np.ascontiguousarray(windows, dtype="<f2").tobytes()


def vector_from_bytes(blob: bytes) -> npt.NDArray[np.float32] | None:
    """Inverse of :func:`vector_to_bytes`; ``None`` for a blob that is not whole rows."""
    import numpy as np

    if not blob or len(blob) % (DIM * 2):
        return None
    return np.frombuffer(blob, dtype="<f2").reshape(-1, DIM).astype(np.float32)


_shared: Embedder | None = None
_reason: str | None = None
_shared_lock = threading.Lock()
_default_mode = "local"


def prefer_shared() -> None:
    """Make ``shared`` this process's mode when ``AFFIDAVIT_EMBEDDER`` does not say (what
    ``affidavit serve`` does: several servers of one user then hold one model)."""
    global _default_mode
    _default_mode = "shared"


def mode() -> str:
    """``shared``, ``local`` or ``off``: ``AFFIDAVIT_EMBEDDER``, else this process's default."""
    chosen = os.environ.get(MODE_ENV, "").strip().lower()
    return chosen if chosen in MODES else _default_mode


def shared_embedder() -> Embedder | None:
    """The process's one model, loaded and verified on first use; ``None`` if unavailable.

    ``AFFIDAVIT_EMBEDDER=off`` turns semantic recall off on purpose (keyword-only mode), so the
    fallback is testable and usable on machines where onnxruntime has no wheel. In ``shared``
    mode the vectors come from the per-user model service; any failure to reach it loads
    the model here instead.
    """
    global _shared, _reason
    with _shared_lock:
        if _shared is not None or _reason is not None:
            return _shared
        chosen = mode()
        if chosen == "off":
            _reason = "semantic recall is off (AFFIDAVIT_EMBEDDER=off)"
            return None
        try:
            tokenizer = locate(TOKENIZER_FILE)
            verify(TOKENIZER_FILE, tokenizer)
            model = _service_model() if chosen == "shared" else None
            _shared = Embedder(tokenizer, model or local_model())
        except (UnsupportedError, IntegrityError) as exc:
            _reason = f"semantic recall is off: {exc}"
        except ImportError as exc:
            _reason = f"semantic recall is off: {exc}"
        return _shared


def _service_model() -> Model | None:
    """The per-user model service, started if need be; None (logged) when it cannot serve."""
    try:
        from affidavit.recall import model_service
    except ImportError as exc:  # a platform without fcntl: the model runs here
        logger.info("model service not available here: %s", exc)
        return None
    return model_service.connect()


def unavailable_reason() -> str | None:
    """Why :func:`shared_embedder` returned ``None`` (``None`` if it loaded or was not tried)."""
    return _reason


def availability() -> dict[str, Any]:
    """Whether semantic recall can run here, without loading the model (for ``status``).

    Checks the switch, the two packages, onnxruntime's presence and the files' sha256 (the
    one pinned check); does not build an inference session.
    """
    if mode() == "off":
        return {
            "semantic": False,
            "model": None,
            "reason": "semantic recall is off (AFFIDAVIT_EMBEDDER=off)",
        }
    try:
        for pinned in (MODEL_FILE, TOKENIZER_FILE):
            verify(pinned, locate(pinned))
        if importlib.util.find_spec("onnxruntime") is None:
            raise UnsupportedError("onnxruntime is not installed", "pip install onnxruntime")
    except (UnsupportedError, IntegrityError) as exc:
        return {"semantic": False, "model": None, "reason": f"semantic recall is off: {exc}"}
    return {"semantic": True, "model": MODEL_ID, "dim": DIM}


def describe() -> dict[str, Any]:
    """What ``status`` reports about semantic recall."""
    emb = shared_embedder()
    if emb is None:
        return {"semantic": False, "model": None, "reason": unavailable_reason()}
    return {"semantic": True, "model": emb.model_id, "dim": emb.dim}
