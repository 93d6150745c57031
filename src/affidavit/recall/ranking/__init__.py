"""Hybrid recall: how memories are ranked for a question.

The core scorer, for every memory (docs/recall.md, "How ranking works"):

- Two channels are independent evidence, combined as a soft OR in log-odds space::

      evidence = -W_VEC * log(1 - p_vec) - W_LEX * log(1 - p_lex)

  ``p_vec`` maps the best-window cosine through fixed bounds (an L2-normalised encoder's
  cosines are comparable across questions; per-query min-max would promote the best hit of
  a hopeless question to certainty), capped below what a conclusive literal match reaches.
  ``p_lex`` is the share of the question's self-information ``I(t) = log((N+1)/df(t))``
  that a record holds, against at least one unique term's worth, so a term unique to one
  memory is near-conclusive and a term in a tenth of the vault is almost nothing. Terms
  are matched on their inflection stem (:func:`affidavit.recall.ranking.channels.stem`),
  and a term counts only as far as the records holding it are in the question's sense:
  the best cosine among them within LEX_SENSE_NEAR of the best match counts in full,
  beyond LEX_SENSE_FAR not at all (a word whose every record is about something else).
- Priors multiply, so they reorder matches and never surface a non-match: importance
  centred on 0.5; for an opinion, a recency bonus halving every OPINION_HALF_LIFE_DAYS
  since its last re-affirmation; for a question that names a date
  (:mod:`affidavit.recall.dates`), 1 + W_DATE for a memory known to be from then.
- Age is the share of the searched population written after a memory, applied to the
  semantic term in odds (:func:`.score.aged`); imported rows have none.
- The evidence floor (ABSOLUTE_FLOOR) and, for an adaptive page, the relative cut
  (RELATIVE_CUT of the best) read the unaged, unweighted evidence, so a question the vault
  knows nothing about returns nothing, and priors never decide which memories qualify.
- The page is picked from the DIVERSITY_POOL best, discounting a restatement of a memory
  already on it (:mod:`.page`).
- Filters run after ranking; the vector pool widens when they leave too few results, and
  the last widening is exhaustive, so a filter never loses a match behind the pool size.

Conversation structure, only for memories that name a ``thread``
(:mod:`.conversation`, ADR 55): a turn gains W_NEIGHBOR of the stronger
adjacent turn's evidence and W_ANSWER of the question it replies to; a turn that ends in a
question counts QUESTION_DAMP of its own; one thread's turns are spread over the page
(SAME_THREAD_DECAY). Authored memories get none of it.

Modules: :mod:`.params` (every constant: what it means, why it has its value),
:mod:`.channels` (the keyword and vector indexes), :mod:`.entry` (what ranking holds of a
memory), :mod:`.index` (:class:`RecallIndex` and its search), :mod:`.score` (the formulas
above), :mod:`.page` (diversity) and :mod:`.conversation` (thread links).
"""

from affidavit.recall.ranking.entry import Entry, Filters, Hit, ScoreParts
from affidavit.recall.ranking.index import RecallIndex

__all__ = ["Entry", "Filters", "Hit", "RecallIndex", "ScoreParts"]
