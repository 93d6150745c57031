"""Asking a human before a ``require-approval`` call goes ahead, in both protocol eras.

On a 2025-06-18 session the proxy sends the host its own ``elicitation/create`` request. A
2026-07-28 stateless request cannot be interrupted by a server-to-client request, so the proxy
answers it with an ``input_required`` result carrying the same elicitation; the host asks the
user and retries the call with ``inputResponses`` and the opaque ``requestState`` the proxy
issued. The token is single-use and bound to the tool and its canonical arguments, so an
approval cannot be replayed onto another call. Either way the user sees the tool, the backend
and the full arguments, and only ``accept`` with ``approve: true`` allows.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from typing import Any

INPUT_KEY = "affidavit-approval"
_STATE_PREFIX = "affidavit-approval:"
SCHEMA = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Allow this call", "default": False}},
    "required": ["approve"],
}


def elicitation_params(
    tool: str, backend: str, arguments: Mapping[str, Any], reason: str
) -> dict[str, Any]:
    """The ``elicitation/create`` parameters that show the user exactly what would run."""
    shown = json.dumps(dict(arguments), ensure_ascii=False, indent=2, sort_keys=True)
    message = (
        f"The agent wants to call the tool `{tool}`"
        + (f" ({backend})" if backend else "")
        + f" with these arguments:\n{shown}\n"
        + (f"Policy: {reason}\n" if reason else "")
        + "Allow this call?"
    )
    return {"mode": "form", "message": message, "requestedSchema": SCHEMA}


def judge(answer: Any) -> tuple[bool, str]:
    """Whether an elicitation result approves the call, and a reason for the audit log."""
    if not isinstance(answer, Mapping):
        return False, "the approval answer was malformed"
    content = answer.get("content")
    if (
        answer.get("action") == "accept"
        and isinstance(content, Mapping)
        and content.get("approve") is True
    ):
        return True, "approved by the user"
    return False, f"the user did not approve it ({answer.get('action', 'no answer')})"


class StatelessApprovals:
    """Single-use ``requestState`` tokens for approvals asked through ``input_required``."""

    def __init__(self) -> None:
        self._issued: dict[str, str] = {}

    def ask(self, call_key: str, params: dict[str, Any]) -> dict[str, Any]:
        """The ``input_required`` result that asks the host; remembers the token."""
        token = _STATE_PREFIX + secrets.token_urlsafe(16)
        self._issued[token] = call_key
        return {
            "resultType": "input_required",
            "inputRequests": {INPUT_KEY: {"method": "elicitation/create", "params": params}},
            "requestState": token,
        }

    @staticmethod
    def is_answer(params: Mapping[str, Any]) -> bool:
        """Whether a retried call carries a response to one of the proxy's approval asks."""
        state = params.get("requestState")
        return isinstance(state, str) and state.startswith(_STATE_PREFIX)

    def redeem(self, call_key: str, params: Mapping[str, Any]) -> tuple[bool, str]:
        """Judge the answer in a retried call; the token is spent either way."""
        issued = self._issued.pop(str(params.get("requestState")), None)
        if issued is None:
            return False, "the approval token is unknown or was already used"
        if issued != call_key:
            return False, "the approval was given for a different call"
        responses = params.get("inputResponses")
        answer = responses.get(INPUT_KEY) if isinstance(responses, Mapping) else None
        return judge(answer)


def without_answer(message: Mapping[str, Any]) -> dict[str, Any]:
    """The request with the proxy's own ``inputResponses``/``requestState`` removed."""
    params = {
        k: v
        for k, v in dict(message.get("params") or {}).items()
        if k not in ("inputResponses", "requestState")
    }
    return {**dict(message), "params": params}
