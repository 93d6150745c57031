"""Every ranking constant: what it means, why it has its value.

Read at call time (``params.W_LEX``, never copied into another module), so a tuning run
(``benchmarks/tuning.py``, ``--set NAME=VALUE``) or a test can change one for a while. The
measurements behind them, and how a constant may change (a gain on the tuning halves of
``benchmarks/agent_memory.py`` and ``benchmarks/locomo.py``, never measured on a held-out
half), are in docs/recall-tuning.md; how they combine is in :mod:`affidavit.recall.ranking`
and ADR 151.
"""

from __future__ import annotations

# --- meaning: the semantic channel -----------------------------------------------------
#: Cosine where a memory starts to be about the question (centred cosines of unrelated
#: sentences sit around 0): relevance is the cosine above it, so below it only words and
#: ids count, and the cosine still orders the rest (:func:`.score.order_key`). 0.1-0.2 are
#: flat on both tuning sets; 0.25 lost preference questions on the development set.
VEC_FLOOR = 0.1

#: Share of the vault's mean window taken out of every window and of the question before
#: their cosine (:meth:`.channels.VectorIndex._centring`): what all memories of a vault have
#: in common says nothing about which one answers.
CENTRE_WEIGHT = 0.7
#: The weight grows with the vault as n / (n + CENTRE_PRIOR) windows: the mean of a handful
#: of memories is those memories, not what the vault is about.
CENTRE_PRIOR = 50

#: A correction's cosine is the best of its own windows and of the windows of the memories it
#: corrected less this much (:mod:`.corrections`): it answers what they answered, and its
#: own words are the stronger evidence. 0.03-0.06 scored alike on both tuning sets
#: (correction questions 0.57 -> 0.71 on the needs tuning half, 0.61 -> 0.83 on the
#: development set); 0 let corrections crowd other questions' pages, 0.1 gave half the gain.
INHERITED_DISCOUNT = 0.04

# --- words and exact terms: evidence added to meaning ------------------------------------
#: Weight of the word channel: relevance gains W_LEX * share ** LEX_POWER, where share is
#: the part of the question's information the memory holds. In cosine units. 0.2-0.5 are
#: within one question of each other on both agent-memory tuning sets; above, questions
#: that share no word with their answer start to lose to the one shared word of another.
W_LEX = 0.3
#: The word weight for a turn of a recorded conversation (a row with a ``thread``): chat
#: turns are not claims, a sentence model reads little in them, and the names, places and
#: things the question repeats are most of the evidence.
W_LEX_TURN = 3.0
#: Raising the share suppresses the one shared word of a question asked in other words
#: (0.2 of the information -> 0.09) and keeps most of the question's words (0.8 -> 0.72).
LEX_POWER = 1.5
#: Weight of an exact term (an id, port, version, env var, host or path written in the
#: question) that a memory holds verbatim, times 1/(memories holding it): a unique id
#: outweighs any likely difference in meaning, so a lookup by id is not lost (exact-term
#: recall@5 1.000 on both tuning sets from 0.2 to 1.0; 0.5 leaves room for longer texts).
W_EXACT = 0.5

# --- the words' vocabulary ------------------------------------------------------------------
#: A term in more than this share of records carries no evidence (above 50 records).
COMMON_SHARE = 0.20
#: Below this many records the share rule cannot tell a common term; every term counts.
COMMON_MIN_RECORDS = 50
#: A question term is word evidence in full when a record holding it comes within this
#: much cosine of the best semantic match, and none when none comes within LEX_SENSE_FAR:
#: a word whose every record is about something else is another sense of it or a
#: coincidence ("manager" in "Aiko joined as an engineering manager", cosine 0.25, asked
#: "Who is Rania's manager?", best 0.66).
LEX_SENSE_NEAR = 0.2
LEX_SENSE_FAR = 0.4
#: The rarest terms' postings, up to this many records, create literal candidates; scoring
#: ~4,300 candidates a query cost 27 ms at 100k memories (recall_measures.py).
LEX_CANDIDATE_BUDGET = 1000
#: English function words, and the pieces the tokenizer leaves of possessives and
#: contractions ("Vera's" -> "vera", "s"): no evidence in any vault, and a tiny vault has
#: too few records for the share rule to see that. Dropping the pieces gained recall@5
#: +0.030 [+0.006, +0.061] on the agent-memory tuning half, LoCoMo unchanged.
_FUNCTION_WORDS = """
a an and are as at be been but by can could did do does for from had has have how i if in
is it its me my of on or our she he so than that the their them then there these they this
to was we were what when where which who whom why will with would you your about any all also
s t d ll re ve m
"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS.split())

# --- conversation structure (rows with a thread only, ADR 55) -----------------------------
#: Share of the stronger adjacent turn's own relevance a turn gains: turns next to each other
#: are about one thing; more crowded the page with one session on LoCoMo.
W_NEIGHBOR = 0.05
#: Share of a question's own relevance its reply gains: the reply holds what the question's
#: words point at ("How long have you been married?" -> "5 years already!"); 0 cost LoCoMo
#: 0.05 recall@5, and 0.4-0.8 are within noise of 0.6.
W_ANSWER = 0.6
#: Own-relevance factor of a turn that ends in a question: it asks rather than states, while
#: it repeats the words of what it asks about (1 and 0.4 both scored lower on LoCoMo).
QUESTION_DAMP = 0.6

# --- priors -------------------------------------------------------------------------------
#: Importance prior, score x (1 + W_IMP * (2 * importance - 1)): reorders near-ties without
#: overturning a clearly better match.
W_IMP = 0.15
#: Opinion recency bonus at age 0: the newest opinion on a subject wins a near-tie.
W_OPINION = 0.30
#: The opinion bonus halves every this many days since the last re-affirmation.
OPINION_HALF_LIFE_DAYS = 30.0
#: Date prior, x (1 + W_DATE) for a memory known to be from a day, month or year the
#: question names: no larger than the opinion bonus, as issue 13 asks of a date (1.5, the
#: earlier value, scored LoCoMo recall@5 +0.012 [+0.006, +0.018] higher).
W_DATE = 0.3

# --- cut and pool -------------------------------------------------------------------------
#: An adaptive page (no top_k) holds only memories the question is about: by meaning, a
#: (centred) cosine at least VEC_FLOOR + ADAPTIVE_FLOOR, 0.2: "how to bake sourdough"
#: returns nothing from an ops vault ...
ADAPTIVE_FLOOR = 0.1
#: ... or by words, at least this share of the question's information, or by an exact term.
ADAPTIVE_SHARE = 0.25
#: An adaptive page keeps every memory whose cosine is within this of the best cosine ...
ADAPTIVE_BAND = 0.1
#: ... and every memory whose relevance reaches this share of the best's.
RELATIVE_CUT = 0.5
#: An adaptive page never holds more than this many.
ADAPTIVE_CAP = 20
#: Vector candidates read first, widened POOL_GROWTH-fold up to POOL_WIDENINGS times (the
#: last exhaustive) when filters leave too few: the pool only bounds Python-side work.
POOL_START = 200
POOL_GROWTH = 4
POOL_WIDENINGS = 3

# --- page diversity, for conversation turns only (ADR 54, ADR 151) -------------------------
#: The page is picked from this many best (or the page size, if larger): picking from more
#: pushed one of the best ten off a ten-result page.
DIVERSITY_POOL = 10
#: A candidate whose cosine c to a memory on the page is above REDUNDANT_FROM counts
#: 1 - W_REDUNDANT * (c - REDUNDANT_FROM) / (1 - REDUNDANT_FROM): a restatement falls
#: behind a different match (0.2-0.4 and 0.4-0.7 scored alike on LoCoMo).
W_REDUNDANT = 0.3
REDUNDANT_FROM = 0.5
#: Each turn of its thread already on the page multiplies a candidate's score by this, so
#: one session does not fill the page (LoCoMo group_hit@5 0.914 -> 0.924 with redundancy).
SAME_THREAD_DECAY = 0.93

# --- store-time similarity (recall/decide.py) ---------------------------------------------
#: Cosine above which two memories are "near-identical" for the duplicate rule, which also
#: requires the same content words in order: MiniLM puts rewordings of one sentence above it.
DUPLICATE_COSINE = 0.95
#: A new opinion this close to a live opinion is about the same subject: a conflict.
OPINION_CONFLICT_COSINE = 0.70
#: Without a model, the informative-word overlap (Jaccard) that stands in for each cosine.
DUPLICATE_JACCARD = 0.9
OPINION_CONFLICT_JACCARD = 0.5
#: Nearest memories examined for those decisions.
SIMILAR_POOL = 20
