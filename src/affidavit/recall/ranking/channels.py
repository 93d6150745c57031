"""The two channels' indexes in RAM, rebuilt at unlock and updated one record at a time.

Nothing here touches disk: plaintext exists only in RAM (DESIGN.md, "Memory plane").

- :class:`KeywordIndex`: SQLite FTS5 in ``:memory:`` over unicode61 tokens of text whose
  words are reduced to their inflection stem (:func:`stem`), so "deploy" finds "Deploys"
  and "deployed", while "manager" does not find "managed". It answers per-term document
  frequencies (the literal channel's self-information) and per-term postings.
- :class:`VectorIndex`: every embedding window as one row of a float32 matrix, searched
  exactly by one matrix-vector product (numpy/BLAS) up to :data:`HNSW_THRESHOLD` windows;
  above it a usearch HNSW graph answers the same question approximately. Windows of one
  record share an owner; a record's score is its best window.

Both are keyed by a small integer *slot* that the caller (:class:`.index.RecallIndex`) maps to a
record id, because FTS5 rowids and matrix rows are integers.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sqlite3
import threading
import weakref
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from affidavit.recall.onnx_model import DIM
from affidavit.recall.ranking import background

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Cosines = npt.NDArray[np.float64]

#: Above this many windows an HNSW graph is built in the background and then answers the
#: vector channel (DESIGN.md: exact below ~20k). benchmarks/recall_measures.py: the exact
#: product costs ~1.4 ms at 10k windows and ~13 ms at 100k on this box.
HNSW_THRESHOLD = 20_000
#: Windows copied per step of the background build (the lock is held only for the copy).
HNSW_BUILD_CHUNK = 5_000
#: While a search runs, the build pauses between inserts of this many windows (~35 ms of
#: work here), so a search shares the two cores and the memory bus with at most one step.
HNSW_INSERT_STEP = 64
#: Longest pause per step: a steady stream of searches slows the build, never stops it.
HNSW_MAX_PAUSE = 0.05
#: Seconds between crossing the threshold and the build's first step, unless someone waits
#: for it (:meth:`VectorIndex.wait_ready`): a command that opens a large vault, answers and
#: exits within them never imports usearch (:mod:`.background`; ADR 0233).
HNSW_BUILD_DELAY = 2.0

#: Postings the keyword index keeps between changes (slots summed over terms, ~36 bytes
#: each: ~15 MB). A common word's postings cost ~4.6 ms of FTS5 iteration at 100k memories
#: (20,000 holders), and questions repeat common words; rare words are cheap either way.
POSTINGS_CACHE_SLOTS = 400_000

#: Distinct words whose stem is remembered: a vault's vocabulary repeats, and stemming every
#: word of 100k agent facts at unlock took 1.2 s of CPU uncached, 0.5 s cached.
STEM_CACHE = 1 << 16

_TERM = re.compile(r"\w+", re.UNICODE)
#: A run of letters (captured): what :func:`stem` reduces (digits and ids are left as they are).
_LETTERS = re.compile(r"([^\W\d_]+)", re.UNICODE)
_VOWEL = re.compile(r"[aeiouy]")


def query_terms(text: str) -> list[str]:
    """The distinct lower-cased word tokens of a question, in order (the index stems them)."""
    seen: dict[str, None] = {}
    for match in _TERM.finditer(text.lower()):
        seen.setdefault(match.group(0), None)
    return list(seen)


@functools.lru_cache(maxsize=STEM_CACHE)
def stem(word: str) -> str:
    """A lower-case word without its inflection: plural or third-person -s, -ed, -ing.

    Inflections only, never derivations: Porter's stemmer also cuts -er, -ment, -ive, ...
    and a final "e", so "manager" met "managed" (then "Who is Rania's manager?" found "the
    account is managed by Rania" first) and the name "Ines" met the word "in". A final "e"
    is dropped after the ending so "release", "releases", "released" and "releasing" meet;
    a doubled consonant left by -ed/-ing is undoubled ("stopped" -> "stop"). Words of three
    letters or fewer are kept whole.
    """
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for ending in ("ing", "ed"):
        rest = word[: -len(ending)]
        if word.endswith(ending) and len(rest) >= 3 and _VOWEL.search(rest):
            if ending == "ed" and rest.endswith("e"):  # "agreed", "freed": the e is the word's
                break
            if ending == "ed" and rest.endswith("i"):  # "copied" -> "copy"
                rest = rest[:-1] + "y"
            elif rest[-1] == rest[-2] and rest[-1] not in "aeioulsz":
                rest = rest[:-1]
            word = rest
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def stemmed(text: str) -> str:
    """Text lower-cased with every run of letters reduced by :func:`stem` (what is indexed)."""
    parts = _LETTERS.split(text.lower())  # the letter runs at the odd places
    parts[1::2] = map(stem, parts[1::2])
    return "".join(parts)


def _quoted(term: str) -> str:
    return '"' + stemmed(term).replace('"', '""') + '"'


class KeywordIndex:
    """An FTS5 table in RAM of :func:`stemmed` texts: add/remove by slot, per-term df and
    postings (terms are stemmed the same way when asked).

    Answers are remembered until the next change (any add or remove forgets them all): at
    100,000 memories a search read the postings of its common words from FTS5 in ~20 ms of
    CPU, the largest part of a search (benchmarks/team_vault.py, docs/performance.md)."""

    def __init__(self, image: bytes | None = None, count: int = 0) -> None:
        """An empty index, or (``image``, ``count``) one :meth:`image` wrote: the same rows,
        postings and statistics, without stemming or inserting a single text again."""
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        if image is None:
            self._db.execute(
                "CREATE VIRTUAL TABLE fts USING fts5(body, "
                "tokenize='unicode61 remove_diacritics 2')"
            )
        else:
            self._db.deserialize(image)
            self._db.execute("SELECT rowid FROM fts LIMIT 0")  # the table is there
        self._count = count
        self._dfs: dict[str, int] = {}
        self._postings: dict[str, tuple[int, ...]] = {}
        self._cached_slots = 0

    def _changed(self) -> None:
        """Forget every remembered answer (the index is about to change)."""
        self._dfs.clear()
        self._postings.clear()
        self._cached_slots = 0

    def image(self) -> bytes:
        """The whole index as SQLite's serialised database (what a sealed snapshot keeps).

        Committed first: the module's connection opens a transaction before its first
        insert, and an image taken inside one does not open again ("malformed")."""
        self._db.commit()
        return self._db.serialize()

    def __len__(self) -> int:
        return self._count

    def add(self, slot: int, text: str) -> None:
        """Index one record's text under ``slot``."""
        self._changed()
        self._db.execute("INSERT INTO fts(rowid, body) VALUES (?, ?)", (slot, stemmed(text)))
        self._count += 1

    def add_many(self, rows: list[tuple[int, str]]) -> None:
        """Index many records in one statement batch (unlock, import)."""
        self._changed()
        self._db.executemany(
            "INSERT INTO fts(rowid, body) VALUES (?, ?)", [(slot, stemmed(t)) for slot, t in rows]
        )
        self._count += len(rows)

    def remove(self, slot: int) -> None:
        """Drop a record (forgotten, superseded, expired)."""
        self._changed()
        cur = self._db.execute("DELETE FROM fts WHERE rowid = ?", (slot,))
        self._count -= cur.rowcount

    def remove_many(self, slots: Iterable[int]) -> None:
        """Drop many records in one statement batch (what a restored image no longer holds)."""
        self._changed()
        cur = self._db.executemany("DELETE FROM fts WHERE rowid = ?", [(slot,) for slot in slots])
        # rowcount sums the deleted rows; total_changes also counts FTS5's own bookkeeping
        # writes, which made a restored index's record count (and so every term's
        # information) too small
        self._count -= max(cur.rowcount, 0)

    def df(self, term: str) -> int:
        """How many records contain ``term`` (after stemming)."""
        found = self._dfs.get(term)
        if found is None:
            row = self._db.execute(
                "SELECT count(*) FROM fts WHERE fts MATCH ?", (_quoted(term),)
            ).fetchone()
            found = self._dfs[term] = int(row[0])
        return found

    def postings(self, term: str) -> list[int]:
        """The slots of every record containing ``term``."""
        found = self._postings.get(term)
        if found is None:
            rows = self._db.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (_quoted(term),))
            found = tuple(r[0] for r in rows)
            self._dfs[term] = len(found)
            while self._postings and self._cached_slots + len(found) > POSTINGS_CACHE_SLOTS:
                oldest = next(iter(self._postings))  # the first remembered goes first
                self._cached_slots -= len(self._postings.pop(oldest))
            if len(found) <= POSTINGS_CACHE_SLOTS:
                self._postings[term] = found
                self._cached_slots += len(found)
        return list(found)


class VectorIndex:
    """Embedding windows in a growing float32 matrix, with HNSW above a size threshold.

    The HNSW graph is built on a background thread (one core) while the exact matrix keeps
    answering: building it for 100k windows takes ~55 s on this box, which no one-shot CLI
    command should wait for, while a long-running server profits from it for hours. The
    build steps aside while a search runs (:meth:`foreground`), begins only after
    :data:`HNSW_BUILD_DELAY`, and is stopped and joined before the interpreter exits
    (:mod:`.background`).
    """

    def __init__(self, threshold: int = HNSW_THRESHOLD) -> None:
        import numpy as np

        self._np = np
        self._matrix: npt.NDArray[np.float32] = np.zeros((1024, DIM), dtype=np.float32)
        self._owner: npt.NDArray[np.int64] = np.full(1024, -1, dtype=np.int64)
        self._size = 0
        self._live = 0
        #: Each record's matrix rows: one contiguous run, since a record's windows are added
        #: together and a changed record is removed, then added again.
        self._rows_of: dict[int, range] = {}
        self._threshold = threshold
        self._hnsw: Any = None
        self._lock = threading.Lock()
        self._builder: background.Job | None = None
        self._removed_while_building: list[int] = []
        self._searching = 0
        self._quiet = threading.Condition()
        #: Sum of the live windows (float64) and, once asked for, each row's dot product with
        #: their mean: the centring of :meth:`search` (see :meth:`_centring`).
        self._sum = np.zeros(DIM, dtype=np.float64)
        self._row_dot_mean: npt.NDArray[np.float64] | None = None

    def __len__(self) -> int:
        """Live windows."""
        return self._live

    @property
    def mode(self) -> str:
        """``exact``, ``exact (hnsw building)`` or ``hnsw``: what answers searches now."""
        if self._hnsw is not None:
            return "hnsw"
        return "exact (hnsw building)" if self._builder is not None else "exact"

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Start a pending HNSW build now and wait for it (``timeout`` seconds at most;
        benchmarks, tests); True if HNSW is in use."""
        builder = self._builder
        if builder is not None:
            builder.join(timeout)
        return self._hnsw is not None

    @contextlib.contextmanager
    def foreground(self) -> Iterator[None]:
        """Mark a search or store someone waits for: a background HNSW build pauses meanwhile.

        benchmarks/recall_measures.py at 100k memories: search p95 while the graph builds
        was 33 ms with the builder inserting throughout.
        """
        with self._quiet:
            self._searching += 1
        try:
            yield
        finally:
            with self._quiet:
                self._searching -= 1
                self._quiet.notify_all()

    def _yield_to_searches(self) -> None:
        with self._quiet:
            self._quiet.wait_for(lambda: not self._searching, timeout=HNSW_MAX_PAUSE)

    def _grow(self, need: int) -> None:
        np = self._np
        if self._size + need <= len(self._owner):
            return
        # Exactly the size of a bulk load (unlock), then 1.5x steps for single stores: the
        # matrix is the largest recall structure (1.5 KB a window), doubling wasted up to half.
        capacity = max(self._size + need, len(self._owner) * 3 // 2)
        matrix = np.zeros((capacity, DIM), dtype=np.float32)
        matrix[: self._size] = self._matrix[: self._size]
        owner = np.full(capacity, -1, dtype=np.int64)
        owner[: self._size] = self._owner[: self._size]
        self._matrix, self._owner = matrix, owner

    def add(self, slot: int, windows: npt.NDArray[np.floating]) -> None:
        """Add a record's windows (rows already L2-normalised; float16 rows are widened)."""
        self.add_many([(slot, windows)])

    def add_many(self, items: list[tuple[int, npt.NDArray[np.floating]]]) -> None:
        """Add many records' windows at once (unlock, import)."""
        if not items:
            return
        np = self._np
        block = np.concatenate([w for _, w in items]) if len(items) > 1 else items[0][1]
        self.add_block([slot for slot, _ in items], [len(w) for _, w in items], block)

    def add_block(
        self, slots: Sequence[int], counts: Sequence[int], block: npt.NDArray[np.floating]
    ) -> None:
        """Add many records' windows as one block: ``counts[i]`` rows of ``block`` (in order)
        for ``slots[i]``. One copy into the matrix and one sum, not a numpy call per record
        (a 10k-memory unlock spent ~60 ms on those)."""
        np = self._np
        total = len(block)
        if not total:
            return
        with self._lock:
            self._grow(total)
            start = self._size
            end = start + total
            self._matrix[start:end] = block
            self._owner[start:end] = np.repeat(np.asarray(slots, dtype=np.int64), counts)
            ends = (np.cumsum(counts) + start).tolist()
            starts = [first - n for first, n in zip(ends, counts, strict=True)]
            self._rows_of.update(zip(slots, map(range, starts, ends), strict=True))
            self._size = end
            self._sum += block.sum(axis=0, dtype=np.float64)
            self._live += total
            self._row_dot_mean = None
            if self._hnsw is not None:
                keys = np.arange(start, self._size, dtype=np.uint64)
                self._hnsw.add(keys, self._matrix[start : self._size], threads=1)
            elif self._builder is None and self._live > self._threshold:
                build = functools.partial(self._build_hnsw, weakref.ref(self))
                self._builder = background.Job("affidavit-hnsw", build, HNSW_BUILD_DELAY)
                self._builder.start()

    @staticmethod
    def _build_hnsw(ref: weakref.ref[VectorIndex], job: background.Job) -> None:
        """Insert every live window into a new graph, a chunk at a time, then swap it in.

        Returns early, leaving the exact matrix in charge, when ``job`` is stopping (the
        process exits) or the index is gone: the build holds the index only through ``ref``
        between steps, so an index its owner dropped (a server's vault locked, a benchmark's
        store closed) is freed and stops costing a core.
        """
        # usearch's SIMD library loaded before onnxruntime makes onnxruntime's own import
        # segfault (usearch 2.26 / onnxruntime 1.32, tests/vault/test_index.py); loading
        # onnxruntime first is harmless, so a process that later embeds stays alive.
        with contextlib.suppress(ImportError):
            import onnxruntime  # noqa: F401

        from usearch.index import Index

        graph = Index(ndim=DIM, metric="ip", dtype="f16")
        done = 0
        while (index := ref()) is not None and not job.stopping():
            np = index._np
            with index._lock:  # copy a chunk under the lock; the slow insert runs outside it
                end = min(index._size, done + HNSW_BUILD_CHUNK)
                rows = done + np.nonzero(index._owner[done:end] >= 0)[0]
                vectors = index._matrix[rows].copy()
                if done == end:  # caught up: swap in, applying removals seen meanwhile
                    for row in index._removed_while_building:
                        if graph.contains(row):
                            graph.remove(row)
                    index._removed_while_building.clear()
                    index._hnsw = graph
                    return
            del index
            keys = rows.astype(np.uint64)
            for at in range(0, len(rows), HNSW_INSERT_STEP):
                if (index := ref()) is None or job.stopping():
                    return
                index._yield_to_searches()
                del index
                step = slice(at, at + HNSW_INSERT_STEP)
                graph.add(keys[step], vectors[step], threads=1)
            done = end

    def remove(self, slot: int) -> None:
        """Drop a record's windows."""
        with self._lock:
            rows = self._rows_of.pop(slot, range(0))
            if rows:
                self._sum -= self._matrix[rows].sum(axis=0, dtype=self._np.float64)
                self._row_dot_mean = None
            for row in rows:
                self._owner[row] = -1
                self._matrix[row] = 0.0
                if self._hnsw is not None:
                    self._hnsw.remove(row)
                elif self._builder is not None:
                    self._removed_while_building.append(row)
            self._live -= len(rows)

    def similarity(self, slots: Sequence[int]) -> npt.NDArray[np.float64]:
        """Pairwise cosine of records, by their closest pair of windows (0 without vectors).

        For a page of candidates (:mod:`.page`): a handful of records, so one
        small product over their windows.
        """
        np = self._np
        rows = [self._rows_of.get(slot, range(0)) for slot in slots]
        present = [i for i, r in enumerate(rows) if r]
        windows = self._matrix[[row for i in present for row in rows[i]]]
        gram: Cosines = np.einsum("ik,jk->ij", windows, windows).astype(np.float64)
        if len(present) == len(slots) == len(windows):  # one window each: the usual memory
            return gram
        out: Cosines = np.zeros((len(slots), len(slots)))
        if present:
            starts = np.cumsum([0] + [len(rows[i]) for i in present[:-1]])
            best = np.maximum.reduceat(np.maximum.reduceat(gram, starts, axis=0), starts, axis=1)
            out[np.ix_(present, present)] = best
        return out

    def best_cosine(self, slots: Iterable[int], query: npt.NDArray[np.float32]) -> float | None:
        """The best window cosine of any of ``slots`` (``None``: none of them has a vector).

        For the few records of a question term that the vector pool did not reach (the
        literal channel's sense check in :mod:`.score`), so one small product.
        """
        rows = [row for slot in slots for row in self._rows_of.get(slot, ())]
        if not rows:
            return None
        np = self._np
        raw = np.einsum("ij,j->i", self._matrix[rows], query).astype(np.float64)
        return float(self._centred(np.asarray(rows), raw, query).max())

    def search(
        self, query: npt.NDArray[np.float32], pool: int | None, *, centred: bool = True
    ) -> dict[int, float]:
        """Best-window cosine per slot for the ``pool`` nearest records (``None`` = all).

        ``centred`` (ranking): cosines after taking the vault's mean window out of both
        sides (:meth:`_centring`); without it, the model's own cosines (the store-time
        duplicate and conflict rules, whose thresholds are the model's).
        """
        np = self._np
        if not self._live:
            return {}
        # einsum, not BLAS: OpenBLAS's threads contend with onnxruntime and other agents on a
        # 2-core box (a 10k-row product measured 7.9 ms through BLAS, 0.8-1.4 ms this way).
        if self._hnsw is not None and pool is not None and pool < self._live:
            found = self._hnsw.search(query, min(self._live, pool * 2))
            rows = np.asarray(found.keys, dtype=np.int64)
            sims = np.einsum("ij,j->i", self._matrix[rows], query)
        else:
            sims = np.einsum("ij,j->i", self._matrix[: self._size], query)
            rows = np.arange(self._size)
        if centred:
            sims = self._centred(rows, sims.astype(np.float64), query)
        if pool is not None and pool * 2 < len(rows):
            top = np.argpartition(-sims, pool * 2)[: pool * 2]
            rows, sims = rows[top], sims[top]
        owners = self._owner[rows]
        keep = owners >= 0
        owners, sims = owners[keep], sims[keep]
        order = np.argsort(-sims, kind="stable")
        owners, sims = owners[order], sims[order]
        _, first = np.unique(owners, return_index=True)  # each owner's best window
        first.sort()
        if pool is not None:
            first = first[:pool]
        return dict(zip(owners[first].tolist(), sims[first].tolist(), strict=True))

    def _centring(self) -> tuple[float, npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """The centring weight ``a``, the mean window ``m`` and every row's ``row . m``.

        Every window of one vault shares a component (what the vault is about: "an ops
        fact of this company"), which lifts every cosine alike and drowns what tells one
        memory from the next. Ranking reads cosines of ``row - a m`` and ``query - a m``
        instead; ``a`` shrinks towards 0 for a small vault, whose mean is mostly its few
        memories (CENTRE_WEIGHT, CENTRE_PRIOR in :mod:`.params`). ``row . m`` is cached
        until the vault changes: one product over the matrix, like a search.
        """
        from affidavit.recall.ranking import params

        np = self._np
        mean = self._sum / max(self._live, 1)
        weight = params.CENTRE_WEIGHT * self._live / (self._live + params.CENTRE_PRIOR)
        if self._row_dot_mean is None:
            self._row_dot_mean = np.einsum(
                "ij,j->i", self._matrix[: self._size], mean.astype(np.float32)
            ).astype(np.float64)
        return weight, mean, self._row_dot_mean

    def _centred(
        self,
        rows: npt.NDArray[np.int64],
        raw: npt.NDArray[np.float64],
        query: npt.NDArray[np.float32],
    ) -> npt.NDArray[np.float64]:
        """Cosines of ``row - a m`` and ``query - a m``, from the raw ones (rows are unit)."""
        np = self._np
        a, mean, row_dot_mean = self._centring()
        if a == 0.0:
            return raw
        q_dot_mean = float(mean @ query)
        mean_sq = float(mean @ mean)
        dots = row_dot_mean[rows]
        numerator = raw - a * dots - a * q_dot_mean + a * a * mean_sq
        row_norms = np.sqrt(np.maximum(1.0 - 2.0 * a * dots + a * a * mean_sq, 1e-12))
        query_norm = np.sqrt(max(1.0 - 2.0 * a * q_dot_mean + a * a * mean_sq, 1e-12))
        centred: Cosines = numerator / (row_norms * query_norm)
        return centred
