"""Finding secrets inside free text: the one detector for the audit log and for capture.

The proxy's audit log (kept for good, served to the model) and the memories captured from a
chat (shown by ``review`` and the console) must never hold a password or a token. Both ask this
module: :func:`scrub` replaces each secret-shaped part of a string with ``[redacted]``, and
:func:`holds_secret` says whether there was one. What counts (ADR 0079, widened by ADR 0176):

- private-key blocks, credentials in URLs (``https://user:pw@host``), ``Authorization`` header
  values, ``Bearer``/``Basic``/``Token`` credentials;
- the known token formats: GitHub, OpenAI/Anthropic-style ``sk-...`` (``sk-live-...`` too),
  Stripe, Slack (tokens and webhook URLs), AWS access keys, Google API keys and OAuth tokens,
  GitLab, npm, PyPI, Hugging Face, DigitalOcean, SendGrid, Shopify, age secret keys, JWTs;
- a random-looking run of 32 or more letters and digits mixing upper case, lower case and
  digits (an API key of an unknown format);
- the value after a secret-looking name: ``NAME=value``, ``NAME: value``, ``--name value``, and
  in prose "the staging password is hunter2" (up to three words between the name and "is").

Pattern matching cannot know every secret: a password in prose with no telling word before it
still passes (docs/SECURITY.md).
"""

from __future__ import annotations

import re

REDACTED = "[redacted]"
_SENSITIVE_WORD = (
    r"(?:passw(?:or)?d|passphrase|secret|token|api[-_]?key|access[-_]?key|auth[-_]?key"
    r"|credential|private[-_]?key)"
)
# a whole name (or ``--flag``) holding such a word; anchored at the name's start, so the engine
# tries each name once instead of every position inside it (linear, not quadratic)
_SENSITIVE_NAME = rf"(?<![\w.-])[\w.-]*?{_SENSITIVE_WORD}[\w.-]*"
_SENSITIVE_FLAG = rf"(?<![\w.-])--?[\w.-]*?{_SENSITIVE_WORD}[\w.-]*"
# "my password is X", "the passphrase for staging was X", "API key is X"
_IN_PROSE = (
    r"\b((?:passw(?:or)?d|passphrase|pwd|secret|api[ -]?key|access[ -]?key|token)s?"
    r"(?:\s+[\w'-]+){0,3}?\s+(?:is|was|are|were|=|:)\s+[\"'`]?)(?![\"'`]?\[redacted\])[^\s\"'`]+"
)
_KNOWN_FORMATS = (
    r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}"
    r"|sk-[\w-]{16,}|(?:sk|rk|pk)_(?:live|test)_\w{16,}|whsec_\w{20,}"
    r"|xox[abeoprs]-[A-Za-z0-9-]{10,}|hooks\.slack\.com/services/[\w/]{20,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}|AIza[\w-]{35}|ya29\.[\w-]{20,}"
    r"|glpat-[\w-]{20,}|npm_[A-Za-z0-9]{36}|pypi-[\w-]{50,}|hf_[A-Za-z0-9]{30,}"
    r"|do[opr]_v1_[a-f0-9]{64}|SG\.[\w-]{16,}\.[\w-]{16,}|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"
    r"|AGE-SECRET-KEY-1[0-9A-Z]{50,}|eyJ[\w-]{5,}\.[\w-]{5,}\.[\w-]{5,}"
)
# (pattern, replacement) for secrets *inside* a string, applied in this order
_INLINE_SECRETS = tuple(
    (re.compile(pattern, flags), replacement)
    for pattern, flags, replacement in (
        (
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
            re.S,
            REDACTED,
        ),
        (r"(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*://)[^\s/@]+@", re.I, rf"\1{REDACTED}@"),  # user@
        (r"\b((?:proxy-)?authorization\s*[:=]\s*)[^\r\n'\"]+", re.I, rf"\1{REDACTED}"),
        (r"\b(Bearer|Basic|Token)\s+[\w.~+/=-]{8,}", re.I, rf"\1 {REDACTED}"),
        (_KNOWN_FORMATS, 0, REDACTED),
        (rf"({_SENSITIVE_NAME}[\"']?\s*[=:]\s*[\"']?)[^\s\"',;&]+", re.I, rf"\1{REDACTED}"),
        (rf"({_SENSITIVE_FLAG}\s+)(?!-)[^\s\"',;&]+", re.I, rf"\1{REDACTED}"),
        (_IN_PROSE, re.I, rf"\1{REDACTED}"),
    )
)
# every pattern above needs one of these (lower-cased): most strings (paths, names) have none
# and skip the patterns altogether
_TRIGGERS = (
    *("pass", "pwd", "secret", "token", "key", "credential", "auth", "bearer", "basic", "://"),
    *("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat", "sk-", "sk_", "rk_", "pk_", "whsec"),
    *("xox", "hooks.slack", "akia", "asia", "aiza", "ya29.", "glpat", "npm_", "pypi-", "hf_"),
    *("_v1_", "sg.", "shp", "eyj"),
)
_TRIGGER = re.compile("|".join(map(re.escape, _TRIGGERS)))
# a random-looking key of no known format: 32+ word characters with upper, lower and a digit
_RANDOM_RUN = re.compile(r"(?<![\w-])[A-Za-z0-9_-]{32,}(?![\w-])")


def _random_looking(match: re.Match[str]) -> str:
    run = match.group(0)
    mixed = (
        any(c.isupper() for c in run)
        and any(c.islower() for c in run)
        and any(c.isdigit() for c in run)
    )
    return REDACTED if mixed else run


def scrub(text: str) -> str:
    """``text`` with every secret-shaped part replaced by ``[redacted]`` (see the module)."""
    if _TRIGGER.search(text.lower()):
        for pattern, replacement in _INLINE_SECRETS:
            text = pattern.sub(replacement, text)
    if len(text) >= 32:
        text = _RANDOM_RUN.sub(_random_looking, text)
    return text


def holds_secret(text: str) -> bool:
    """Whether :func:`scrub` would change ``text``: it holds a password, token or key."""
    return scrub(text) != text
