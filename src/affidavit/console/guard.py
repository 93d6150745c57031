"""Who may talk to the console: the browser that signed in with this launch's link, and no
page elsewhere.

The console listens on a loopback address that every local user can reach and every web page
the browser runs can address, so each request must pass, in this order:

1. ``Host`` is this launch's ``ADDRESS:PORT`` (a DNS-rebinding page has its own name);
2. the path is under this launch's secret root (``/<secret>/...``); anything else is 404.
   A page on another port of the same address, which any local account can serve, never
   learns the root: the browser sends it no ``Referer`` (policy ``same-origin``) and the
   session cookie is scoped to the root's path, so it is never sent there (issue 26);
3. ``Origin``, when sent, is this console; a request that changes something (not GET or HEAD)
   must send it (a form or script on another page, including another port, has a different
   origin);
4. ``Sec-Fetch-Site``, when sent, is ``same-origin`` or ``none`` (typed, bookmarked, opened by
   us), so another site cannot even make the browser fetch a page;
5. the session cookie, or the launch token in ``?token=``. The token is good for one sign-in:
   it is exchanged for a session made then (a cookie ``HttpOnly``, ``SameSite=Strict``,
   ``Path=/<secret>/``), and the browser is sent on to the same address without it. Offered
   again, it only lets through the browser that holds the session.

The cookie alone is never enough (it opens nothing outside the root), nor is the root alone
(it is in the printed link, but the link's token is spent at the first sign-in). Everything
else is refused with 403 (wrong Host/Origin/site/token), 404 (outside the root) or 401 (no
session). Every response carries a Content-Security-Policy that allows only the console's own
scripts and styles. Redirects the sections send (``Location: /memory/``) are put under the
root here, and links in pages by :func:`affidavit.console.html.rooted`.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable
from urllib.parse import parse_qsl, quote, urlencode

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from affidavit.console.html import URL_ROOT, document, tag

TOKEN_PARAM = "token"  # noqa: S105 - the name of the query parameter, not a secret
SAFE_METHODS = frozenset((b"GET", b"HEAD"))
SAFE_SITES = frozenset(("same-origin", "none"))
SECURITY_HEADERS = (
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
OPEN_FROM_LINK = (
    "This page needs the link `affidavit console` printed when it started. Open that link in "
    "the browser that first signed in with it, or start the console again for a new one."
)


class Guard:
    """ASGI middleware in front of the whole console (see the module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        address: str,
        port: int,
        root: str,
        token: str,
        on_login: Callable[[], None] = lambda: None,
    ) -> None:
        self.app = app
        self.root = root
        self.token = token.encode("ascii")
        self.session: bytes | None = None  # made at the one sign-in the token allows
        self.cookie = f"affidavit_console_{port}"
        names = [address, "localhost"] if address == "127.0.0.1" else [address]
        self.hosts = frozenset(f"{name}:{port}" for name in names)
        self.origins = frozenset(f"http://{host}" for host in self.hosts)
        self.on_login = on_login

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        if headers.get("host") not in self.hosts:
            message = "This console answers only to its own address and port."
            await _page(send, 403, "Refused", message)
            return
        if not self._under_root(scope["path"]):
            await _page(send, 404, "Open the console from its link", OPEN_FROM_LINK)
            return
        URL_ROOT.set(self.root)  # this request's task only: the links it writes are rooted
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        offered = [value for key, value in query if key == TOKEN_PARAM]
        refusal = self._refusal(scope["method"].encode("latin-1"), headers, bool(offered))
        if refusal is not None:
            await _page(send, 403, "Refused", refusal)
            return
        signed_in = self._has_session(headers.get("cookie", ""))
        if offered:
            await self._login(send, scope["path"], query, offered[-1], signed_in)
            return
        if not signed_in:
            await _page(send, 401, "Open the console from its link", OPEN_FROM_LINK)
            return
        rooted_scope = {**scope, "root_path": self.root}  # routes see /memory/..., not the root
        await self.app(rooted_scope, receive, _answering(send, self.root))

    def _under_root(self, path: str) -> bool:
        """Whether ``path`` is the secret root or below it (compared in constant time)."""
        head = path[: len(self.root) + 1]
        return hmac.compare_digest(head.encode("latin-1", "replace"), f"{self.root}/".encode())

    def _refusal(self, method: bytes, headers: dict[str, str], login: bool) -> str | None:
        """Why a request must be refused before any token or cookie is looked at, or None.

        ``login``: the request offers a token; a navigation from elsewhere (the launch file, a
        link pasted into another page) may carry one, and the token decides.
        """
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            return "A page from another origin may not use this console."
        if origin is None and method not in SAFE_METHODS:
            return "A request that changes something must come from the console's own pages."
        site = headers.get("sec-fetch-site")
        navigation = headers.get("sec-fetch-mode") == "navigate"
        if site is not None and site not in SAFE_SITES and not (login and navigation):
            return "A page from another site may not use this console."
        return None

    def _has_session(self, cookie_header: str) -> bool:
        if self.session is None:
            return False
        for part in cookie_header.split(";"):
            name, _, value = part.strip().partition("=")
            if name == self.cookie and hmac.compare_digest(value.encode("latin-1"), self.session):
                return True
        return False

    async def _login(
        self, send: Send, path: str, query: list[tuple[str, str]], offered: str, signed_in: bool
    ) -> None:
        """Trade the launch token for the session, once; then only its browser may reuse it."""
        rest = urlencode([(k, v) for k, v in query if k != TOKEN_PARAM])
        inner = path[len(self.root) :]
        target = f"{self.root}/" + quote(inner.lstrip("/\\")) + (f"?{rest}" if rest else "")
        if signed_in:  # the browser that signed in opened its link again
            await _page(send, 200, "Signed in", "Opening the console…", refresh=target)
            return
        if not hmac.compare_digest(offered.encode("latin-1", "replace"), self.token):
            await _page(send, 403, "Wrong token", "This link's token is not this console's.")
            return
        if self.session is not None:
            await _page(send, 403, "Link already used", _LINK_USED)
            return
        self.session = secrets.token_urlsafe(32).encode("ascii")  # the token is spent now
        self.on_login()
        cookie = (
            f"{self.cookie}={self.session.decode()}; Path={self.root}/; HttpOnly; SameSite=Strict"
        )
        # A page, not a redirect: a redirect that began on another site would not carry a
        # SameSite=Strict cookie; a refresh started by this page does.
        await _page(
            send,
            200,
            "Signed in",
            "Opening the console…",
            extra=[(b"set-cookie", cookie.encode("ascii"))],
            refresh=target,
        )


_LINK_USED = (
    "This link has already been used to sign in, and it signs in one browser once. Use the "
    "browser that opened it, or stop the console and start it again for a new link."
)


def _answering(send: Send, root: str) -> Send:
    """``send`` with the security headers on every response, and redirects put under
    ``root`` (a section redirects to ``/memory/``; the browser must go to ``ROOT/memory/``)."""

    def header(name: bytes, value: bytes) -> tuple[bytes, bytes]:
        if name.lower() == b"location" and value.startswith(b"/") and not value.startswith(b"//"):
            return name, root.encode("ascii") + value
        return name, value

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            names = {name for name, _ in SECURITY_HEADERS}
            kept = [header(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
            message = {**message, "headers": kept + list(SECURITY_HEADERS)}
        await send(message)

    return sending


async def _page(
    send: Send,
    status: int,
    title: str,
    text: str,
    *,
    extra: list[tuple[bytes, bytes]] | None = None,
    refresh: str | None = None,
) -> None:
    """A small page of the guard's own (refusals, the sign-in hop)."""
    header = tag("header", tag("span", "affidavit console", class_="brand"))
    body = tag("section", tag("h1", title), tag("p", text), class_="card narrow")
    data = document(title, header, body, refresh=refresh).encode("utf-8")
    headers = [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"content-length", str(len(data)).encode("ascii")),
        *(extra or []),
        *SECURITY_HEADERS,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})
