"""The local embedder: real model files, pinned bytes, windows for long text."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from affidavit.core.errors import IntegrityError, UnsupportedError
from affidavit.recall import embedder as emb
from affidavit.recall.embedder import shared_embedder, vector_from_bytes, vector_to_bytes
from affidavit.recall.onnx_model import DIM, MODEL_ID, TOKENIZER_FILE, PinnedFile, locate, verify


@pytest.fixture(scope="module")
def model() -> emb.Embedder:
    loaded = shared_embedder()
    assert loaded is not None, emb.unavailable_reason()
    return loaded


def test_vectors_are_unit_length_and_mean_something(model: emb.Embedder) -> None:
    q = model.embed_query("where does the deploy script live?")
    near, far = (
        w[0]
        for w in model.embed_windows(
            ["The deploy script is in tools/deploy.sh", "My sister adopted a grey cat last spring"]
        )
    )
    assert q.shape == (DIM,)
    for v in (q, near, far):
        assert abs(float(np.linalg.norm(v)) - 1.0) < 1e-4
    assert float(q @ near) > float(q @ far) + 0.2


def test_long_text_gets_overlapping_windows(model: emb.Embedder) -> None:
    words = " ".join(f"word{i}" for i in range(2000))
    windows = model.windows(words)
    assert len(windows) > 1
    assert all(len(w) <= emb.WINDOW_TOKENS for w in windows)
    span = emb.WINDOW_TOKENS - 2
    assert span > emb.WINDOW_STRIDE  # consecutive windows share tokens
    assert (
        windows[0][1 + emb.WINDOW_STRIDE : 1 + span] == windows[1][1 : 1 + span - emb.WINDOW_STRIDE]
    )
    assert len(model.windows("short text")) == 1


def test_a_question_gets_the_vector_its_text_gets_in_bulk(model: emb.Embedder) -> None:
    """A question runs alone; the same text in a bulk group beside longer and shorter texts
    must get the same vector, bit for bit (the quantized graph would let batch-mates move it
    if windows shared a run: ADR 237).

    Stored vaults hold vectors from either path, so the two must never drift apart.
    """
    texts = ["where does the deploy script live?", "a longer memory " * 12, "kettle"]
    batched = model.embed_windows(texts)  # one group of three windows
    for text, windows in zip(texts, batched, strict=True):
        assert np.array_equal(model.embed_query(text), windows[0])


def test_bulk_batches_hold_every_window_once_within_their_bounds() -> None:
    lengths = [3, 256, 40, 40, 12, 256, 90, 7, 7, 7, 130, 33] * 9
    batches = emb.length_batches(lengths)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        widest = max(lengths[i] for i in batch)
        assert len(batch) <= emb.BATCH_ROWS
        assert len(batch) == 1 or len(batch) * widest <= emb.BATCH_TOKENS
    firsts = [max(lengths[i] for i in b) for b in batches]
    assert firsts == sorted(firsts, reverse=True)  # the long ones first, the short ones last


def test_bulk_path_embeds_each_window_once_and_matches_single_windows(
    model: emb.Embedder,
) -> None:
    """Many batches on two threads, a repeated text, long texts: every vector is the one the
    window gets alone, bit for bit, and a repeated window reaches the model once."""
    seen: list[list[int]] = []

    def counting(batch: list[list[int]]) -> np.ndarray:
        seen.extend(batch)
        return model._model(batch)

    bulk = emb.Embedder(locate(TOKENIZER_FILE), counting)
    texts = [f"note {i}: the kettle on shelf {i * 7} is " + "very " * (i % 40) for i in range(60)]
    texts += ["the same text twice"] * 2 + [" ".join(f"w{i}" for i in range(700))]
    out = bulk.embed_windows(texts)
    windows = [w for t in texts for w in bulk.windows(t)]
    assert len(seen) == len({tuple(w) for w in windows}) == len(windows) - 1
    assert np.array_equal(out[60], out[61])
    for text, vectors in zip(texts, out, strict=True):
        alone = np.stack([model._model([w])[0] for w in bulk.windows(text)])
        assert np.array_equal(vectors, alone)


def test_vector_bytes_round_trip(model: emb.Embedder) -> None:
    windows = model.embed_windows(["one window", "x " * 600])[1]
    back = vector_from_bytes(vector_to_bytes(windows))
    assert back is not None and back.shape == windows.shape
    assert float(np.abs(back - windows).max()) < 1e-2
    assert vector_from_bytes(b"\x00" * 7) is None


def test_pinned_file_must_match(tmp_path: Path) -> None:
    real = locate(TOKENIZER_FILE)
    verify(TOKENIZER_FILE, real)  # the installed one passes
    copy = tmp_path / "tokenizer.json"
    shutil.copy(real, copy)
    data = bytearray(copy.read_bytes())
    data[100] ^= 0x01
    copy.write_bytes(bytes(data))
    with pytest.raises(IntegrityError, match="sha256"):
        verify(TOKENIZER_FILE, copy)


def test_a_missing_model_file_is_a_clear_unsupported_error() -> None:
    with pytest.raises(UnsupportedError, match=r"missing.*reinstall"):
        locate(PinnedFile("model/no-such-model.onnx", "0" * 64))


def test_availability_reports_without_loading_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    assert emb.availability() == {"semantic": True, "model": MODEL_ID, "dim": DIM}
    monkeypatch.setenv("AFFIDAVIT_EMBEDDER", "off")
    off = emb.availability()
    assert off["semantic"] is False and "AFFIDAVIT_EMBEDDER=off" in off["reason"]
