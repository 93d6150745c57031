"""Hybrid recall: how memories are ranked for a question (ADR 151).

The core scorer, for every memory (docs/recall.md, "How ranking works"):

- Relevance is meaning first, with words and exact terms only ever added::

      relevance = max(0, cos - VEC_FLOOR) + W_LEX * share ** LEX_POWER + W_EXACT * exact

  ``cos`` is the best window's cosine after the vault's mean window is partly taken out of
  both sides (:meth:`.channels.VectorIndex._centring`). ``share`` is the part of the
  question's self-information ``I(t) = log((N+1)/df(t))`` that the memory holds (inflection
  stems, function words and terms in over COMMON_SHARE of the memories left out, each term
  scaled by how far its memories are in the question's sense). ``exact`` is ``1/n`` when
  the memory is one of ``n`` holding an id, port, version, env var, host or path written in
  the question (:func:`.score.exact_terms`). No channel can take away what another gives.
  A correction's ``cos`` is also read from the windows of what it corrected, less
  INHERITED_DISCOUNT (:mod:`.corrections`, ADR 235).
- Priors multiply relevance, so they reorder matches and never surface a non-match:
  importance centred on 0.5; for an opinion, a recency bonus halving every
  OPINION_HALF_LIFE_DAYS since its last re-affirmation; for a question that names a date
  (:mod:`affidavit.recall.dates`), 1 + W_DATE for a memory known to be from then. Nothing
  ages a fact.
- Order: score, then cosine, then the newer save, then id (:func:`.score.order_key`).
- ``top_k`` returns exactly ``top_k`` memories when that many pass the filters; without it,
  the adaptive page holds what the question is about (:func:`.score.rank`).
- Filters run after ranking; the vector pool widens when they leave too few results, and
  the last widening is exhaustive, so a filter never loses a match behind the pool size.

Conversation structure, only for memories that name a ``thread``
(:mod:`.conversation`, ADR 55): a turn's words weigh W_LEX_TURN; a turn gains W_NEIGHBOR of
the stronger adjacent turn's relevance and W_ANSWER of the question it replies to; a turn
that ends in a question counts QUESTION_DAMP of its own; the page is spread over threads and
away from restated turns (:mod:`.page`). Authored memories get none of it.

Modules: :mod:`.params` (every constant: what it means, why it has its value),
:mod:`.channels` (the keyword and vector indexes), :mod:`.entry` (what ranking holds of a
memory), :mod:`.index` (:class:`RecallIndex` and its search), :mod:`.score` (the formulas
above), :mod:`.page` (diversity), :mod:`.conversation` (thread links) and
:mod:`.corrections` (what a correction inherits).
"""

from affidavit.recall.ranking.entry import Entry, Filters, Hit, ScoreParts
from affidavit.recall.ranking.index import RecallIndex

__all__ = ["Entry", "Filters", "Hit", "RecallIndex", "ScoreParts"]
