"""GitHub claims: ``create_pull_request``, ``create_branch`` and ``issue_write`` from GitHub's
MCP server, checked against GitHub's REST API.

What it proves: the pull request or issue the reply points at exists, is *new* (its number is
above the newest one the repository had just before the call, so an older PR handed back as
new is caught), is of the right kind (an issue, not a PR), and carries the requested title
(and, for a PR, the requested head and base branches; for an update, every requested field);
a created branch did not exist before and points at the commit its base branch had before the
call.

What it cannot prove: anything when the API is not configured, cannot be reached, or does
not show the repository (a private repository without a token): then the verdict is
``unchecked`` — a 404 only contradicts a claim once the repository itself is visible.

Configuration (never from the backend): the API base URL from the proxy settings key
``github_api_url`` (``affidavit proxy --github-api URL``, which ``wrap`` adds in front of
GitHub's MCP server) or ``AFFIDAVIT_GITHUB_API_URL``; a token from ``github_token`` or
``GITHUB_PERSONAL_ACCESS_TOKEN`` / ``GITHUB_TOKEN`` — the environment the client gives the
fronted server, so the proxy uses the token that server was given and nothing else. The token
goes only into the ``Authorization`` header of requests to the configured API's own origin: a
redirect to any other origin is not followed (urllib would carry the header along), and a base
URL with credentials in it is refused. It never appears in evidence or errors. The configured
host is added to the offline guard's allow-list, since the user named it.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from affidavit.core import offline
from affidavit.proxy.verifiers.base import CallContext, Evidence, Receipt
from affidavit.proxy.verifiers.locate import string_arg
from affidavit.proxy.verifiers.replies import Judge, backend_failed, is_error, json_in_text, text_of

TOOLS = frozenset({"create_pull_request", "create_branch", "issue_write"})
HTTP_TIMEOUT_S = 10.0
_NUMBER_IN_URL = re.compile(r"/(?:pull|pulls|issues)/(\d+)\b")
_UPDATE_FIELDS = ("title", "body", "state")


class ApiUnavailable(Exception):
    """The API could not answer (not configured, unreachable, an unexpected status)."""


def api_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a GitHub API base URL (None when it can): http(s), a host, no
    credentials, no query or fragment."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return "it must be an http:// or https:// URL with a host"
    if parsed.username is not None or parsed.password is not None:
        return "it must not carry credentials (the token comes from the environment)"
    if parsed.query or parsed.fragment:
        return "it must not have a query or fragment"
    return None


def _origin(url: str) -> tuple[str, str, int | None]:
    parsed = urllib.parse.urlsplit(url)
    port = parsed.port or {"http": 80, "https": 443}.get(parsed.scheme)
    return parsed.scheme, (parsed.hostname or "").lower(), port


@dataclass(frozen=True)
class Api:
    """A configured GitHub REST API endpoint."""

    base: str
    token: str | None

    def get(self, path: str) -> tuple[int, Any]:
        """``GET base + path`` -> (status, parsed JSON or None); 404 is an answer, not an error.

        Redirects are followed only within the base URL's origin: the token must not travel
        to a host the user did not name."""
        import urllib.error  # 30 ms of imports, paid only when a GitHub claim is checked
        import urllib.request

        home = _origin(self.base)

        class SameOrigin(urllib.request.HTTPRedirectHandler):
            def redirect_request(
                self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
            ) -> Any:
                if _origin(newurl) != home:
                    raise ApiUnavailable(f"GET {path} was redirected to another host")
                return super().redirect_request(req, fp, code, msg, headers, newurl)

        opener = urllib.request.build_opener(SameOrigin)
        request = urllib.request.Request(  # noqa: S310 - the scheme is checked in api_for
            self.base + path,
            headers={
                "Accept": "application/vnd.github+json",
                "User-Agent": "affidavit-proxy-verifier",
                **({"Authorization": f"Bearer {self.token}"} if self.token else {}),
            },
        )
        try:
            with opener.open(request, timeout=HTTP_TIMEOUT_S) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            if exc.code in (401, 403, 404):
                return exc.code, None
            raise ApiUnavailable(f"GET {path} answered HTTP {exc.code}") from None
        except (OSError, ValueError) as exc:
            raise ApiUnavailable(f"GET {path} failed: {type(exc).__name__}") from None


def api_for(ctx: CallContext) -> Api | None:
    """The API the user configured, or None."""
    base = str(ctx.settings.get("github_api_url") or os.environ.get("AFFIDAVIT_GITHUB_API_URL", ""))
    if api_url_problem(base) is not None:
        return None
    offline.allow([urllib.parse.urlsplit(base).hostname or ""])
    token = (
        ctx.settings.get("github_token")
        or os.environ.get("GITHUB_PERSONAL_ACCESS_TOKEN")
        or os.environ.get("GITHUB_TOKEN")
    )
    return Api(base=base.rstrip("/"), token=str(token) if token else None)


@dataclass(frozen=True)
class _Before:
    """What the repository looked like on GitHub just before the call."""

    api: Api | None
    repo_path: str = ""
    problem: str | None = None
    newest_number: int = 0
    base_sha: str | None = None
    branch_existed: bool = False
    repo: Mapping[str, Any] = field(default_factory=dict)


def _quote(part: str) -> str:
    return urllib.parse.quote(part, safe="")


def _claimed_number(result: Mapping[str, Any]) -> int | None:
    doc = json_in_text(result)
    if isinstance(doc, Mapping):
        if isinstance(doc.get("number"), int):
            return int(doc["number"])
        for key in ("url", "html_url"):
            if isinstance(doc.get(key), str):
                match = _NUMBER_IN_URL.search(doc[key])
                if match:
                    return int(match.group(1))
    match = _NUMBER_IN_URL.search(text_of(result))
    return int(match.group(1)) if match else None


class GitHubVerifier:
    """Looks the claimed pull request, issue or branch up in GitHub's REST API."""

    name = "github"
    tool_names = TOOLS

    def applies(self, ctx: CallContext) -> bool:
        if ctx.method != "tools/call" or ctx.name not in TOOLS:
            return False
        if string_arg(ctx.arguments, "owner") is None or string_arg(ctx.arguments, "repo") is None:
            return False
        if ctx.name == "issue_write":
            return ctx.arguments.get("method") in ("create", "update")
        return True

    def snapshot(self, ctx: CallContext) -> _Before:
        api = api_for(ctx)
        if api is None:
            return _Before(api=None, problem="no GitHub API base URL is configured")
        owner, name = ctx.arguments["owner"], ctx.arguments["repo"]
        repo_path = f"/repos/{_quote(owner)}/{_quote(name)}"
        try:
            status, repo = api.get(repo_path)
            if status != 200 or not isinstance(repo, Mapping):
                return _Before(api, repo_path, problem=f"the repository is not visible ({status})")
            if ctx.name == "create_branch":
                return self._branch_before(ctx, api, repo_path, repo)
            status, newest = api.get(
                f"{repo_path}/issues?state=all&sort=created&direction=desc&per_page=1"
            )
            number = 0
            if status == 200 and isinstance(newest, list) and newest:
                number = int(newest[0].get("number", 0))
            return _Before(api, repo_path, newest_number=number, repo=repo)
        except ApiUnavailable as exc:
            return _Before(api, repo_path, problem=str(exc))

    @staticmethod
    def _branch_before(
        ctx: CallContext, api: Api, repo_path: str, repo: Mapping[str, Any]
    ) -> _Before:
        branch = string_arg(ctx.arguments, "branch") or ""
        base = string_arg(ctx.arguments, "from_branch") or str(repo.get("default_branch", ""))
        status, _ = api.get(f"{repo_path}/git/ref/heads/{_quote(branch)}")
        existed = status == 200
        status, ref = api.get(f"{repo_path}/git/ref/heads/{_quote(base)}")
        sha = None
        if status == 200 and isinstance(ref, Mapping) and isinstance(ref.get("object"), Mapping):
            sha = ref["object"].get("sha")
        return _Before(api, repo_path, base_sha=sha, branch_existed=existed, repo=repo)

    def verify(self, ctx: CallContext, before: Any, result: Mapping[str, Any]) -> Receipt:
        judge = Judge(self.name, self._claim(ctx))
        if is_error(result):
            return backend_failed(judge, ctx, result)
        if not isinstance(before, _Before) or before.api is None or before.problem:
            why = before.problem if isinstance(before, _Before) else "no snapshot"
            return judge.unchecked(f"GitHub could not be consulted: {why}", "GitHub REST API")
        try:
            if ctx.name == "create_branch":
                return self._verify_branch(ctx, judge, before)
            return self._verify_item(ctx, judge, before, result)
        except ApiUnavailable as exc:
            return judge.unchecked(f"GitHub could not be consulted: {exc}", before.api.base)

    def still_holds(self, ctx: CallContext, receipt: Receipt) -> bool:
        api = api_for(ctx)
        path = receipt.vouched.get("path")
        if api is None or not isinstance(path, str):
            return False
        try:
            status, doc = api.get(path)
        except ApiUnavailable:
            return False
        if status != 200 or not isinstance(doc, Mapping):
            return False
        sha = receipt.vouched.get("sha")
        if sha is not None:
            obj = doc.get("object")
            return isinstance(obj, Mapping) and obj.get("sha") == sha
        return True

    @staticmethod
    def _claim(ctx: CallContext) -> str:
        args = ctx.arguments
        where = f"{args.get('owner')}/{args.get('repo')}"
        if ctx.name == "create_pull_request":
            return f"opened pull request {args.get('title')!r} on {where}"
        if ctx.name == "create_branch":
            return f"created branch {args.get('branch')} on {where}"
        verb = "opened" if args.get("method") == "create" else "updated"
        return f"{verb} issue {args.get('title') or args.get('issue_number')} on {where}"

    def _verify_item(
        self, ctx: CallContext, judge: Judge, before: _Before, result: Mapping[str, Any]
    ) -> Receipt:
        assert before.api is not None
        args = ctx.arguments
        creating = ctx.name == "create_pull_request" or args.get("method") == "create"
        number = _claimed_number(result) if creating else args.get("issue_number")
        if not isinstance(number, int):
            return judge.contradicted(
                Evidence("the reply names no pull request or issue number", "reply")
            )
        kind = "pulls" if ctx.name == "create_pull_request" else "issues"
        path = f"{before.repo_path}/{kind}/{number}"
        where = before.api.base + path
        status, doc = before.api.get(path)
        if status != 200 or not isinstance(doc, Mapping):
            return judge.contradicted(Evidence(f"#{number} does not exist (HTTP {status})", where))
        if creating and number <= before.newest_number:
            return judge.contradicted(
                Evidence(
                    f"#{number} already existed before the call (the newest was "
                    f"#{before.newest_number})",
                    where,
                )
            )
        if kind == "issues" and "pull_request" in doc:
            return judge.contradicted(Evidence(f"#{number} is a pull request, not an issue", where))
        wanted: dict[str, Any] = {}
        if creating:
            wanted["title"] = args.get("title")
        else:
            wanted.update({k: args[k] for k in _UPDATE_FIELDS if k in args})
        observed = {k: doc.get(k) for k in wanted}
        if ctx.name == "create_pull_request":
            head = str(args.get("head", "")).split(":")[-1]
            wanted.update({"head": head, "base": args.get("base")})
            observed["head"] = (doc.get("head") or {}).get("ref")
            observed["base"] = (doc.get("base") or {}).get("ref")
        mismatched = sorted(k for k in wanted if observed.get(k) != wanted[k])
        if mismatched:
            return judge.contradicted(
                Evidence(
                    f"#{number} does not carry the requested {', '.join(mismatched)}",
                    where,
                    details={"requested": wanted, "observed": observed},
                )
            )
        return judge.verified(
            Evidence(
                f"#{number} exists with the requested {', '.join(sorted(wanted))}",
                where,
                details={"html_url": doc.get("html_url"), "observed": observed},
            ),
            vouched={"path": path},
        )

    @staticmethod
    def _verify_branch(ctx: CallContext, judge: Judge, before: _Before) -> Receipt:
        assert before.api is not None
        branch = string_arg(ctx.arguments, "branch") or ""
        path = f"{before.repo_path}/git/ref/heads/{_quote(branch)}"
        where = before.api.base + path
        if before.base_sha is None:
            return judge.unchecked("the base branch could not be read before the call", where)
        if before.branch_existed:
            return judge.contradicted(Evidence(f"{branch} already existed before the call", where))
        status, ref = before.api.get(path)
        if status != 200 or not isinstance(ref, Mapping):
            return judge.contradicted(Evidence(f"no branch {branch} exists (HTTP {status})", where))
        sha = (ref.get("object") or {}).get("sha")
        if sha != before.base_sha:
            return judge.contradicted(
                Evidence(
                    f"{branch} points at {sha}, not at its base ({before.base_sha})",
                    where,
                )
            )
        return judge.verified(
            Evidence(f"{branch} is new and points at its base ({sha})", where),
            vouched={"path": path, "sha": sha},
        )
