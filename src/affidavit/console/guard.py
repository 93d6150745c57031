"""Who may talk to the console: the browser that was given this launch's token, and no page
elsewhere.

The console listens on 127.0.0.1, which every local user and every web page the browser runs
can reach, so each request must pass, in this order:

1. ``Host`` is ``127.0.0.1:PORT`` or ``localhost:PORT`` (a DNS-rebinding page has its own name);
2. ``Origin``, when sent, is this console; a request that changes something (not GET or HEAD)
   must send it (a form or script on another page, including another port of 127.0.0.1, has a
   different origin);
3. ``Sec-Fetch-Site``, when sent, is ``same-origin`` or ``none`` (typed, bookmarked, opened by
   us), so another site cannot even make the browser fetch a page;
4. the session cookie, or the per-launch token in ``?token=``: the token is exchanged for the
   cookie (``HttpOnly``, ``SameSite=Strict``, named after the port) and the browser is sent on
   to the same address without the token.

Everything else is refused with 403 (wrong Host/Origin/site) or 401 (no session). Every response
carries a Content-Security-Policy that allows only the console's own scripts and styles.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from urllib.parse import parse_qsl, quote, urlencode

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from affidavit.console.html import document, tag

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


class Guard:
    """ASGI middleware in front of the whole console (see the module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        port: int,
        token: str,
        session: str,
        on_login: Callable[[], None] = lambda: None,
    ) -> None:
        self.app = app
        self.token = token.encode("ascii")
        self.session = session.encode("ascii")
        self.cookie = f"affidavit_console_{port}"
        self.hosts = frozenset((f"127.0.0.1:{port}", f"localhost:{port}"))
        self.origins = frozenset(f"http://{host}" for host in self.hosts)
        self.on_login = on_login

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        offered = [value for key, value in query if key == TOKEN_PARAM]
        refusal = self._refusal(scope["method"].encode("latin-1"), headers, bool(offered))
        if refusal is not None:
            await _page(send, 403, "Refused", refusal)
            return
        if offered:
            await self._login(send, scope["path"], query, offered[-1])
            return
        if not self._has_session(headers.get("cookie", "")):
            await _page(
                send,
                401,
                "Open the console from its link",
                "This page needs the link `affidavit console` printed when it started "
                "(it holds a one-launch token). Open that link, or start the console again.",
            )
            return
        await self.app(scope, receive, _with_security_headers(send))

    def _refusal(self, method: bytes, headers: dict[str, str], login: bool) -> str | None:
        """Why a request must be refused before any token or cookie is looked at, or None.

        ``login``: the request offers a token; a navigation from elsewhere (the launch file, a
        link pasted into another page) may carry one, and the token decides.
        """
        if headers.get("host") not in self.hosts:
            return "This console answers only to 127.0.0.1 and localhost on its own port."
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
        for part in cookie_header.split(";"):
            name, _, value = part.strip().partition("=")
            if name == self.cookie and hmac.compare_digest(value.encode("latin-1"), self.session):
                return True
        return False

    async def _login(
        self, send: Send, path: str, query: list[tuple[str, str]], offered: str
    ) -> None:
        if not hmac.compare_digest(offered.encode("latin-1", "replace"), self.token):
            await _page(send, 403, "Wrong token", "This link's token is not this console's.")
            return
        self.on_login()
        rest = urlencode([(k, v) for k, v in query if k != TOKEN_PARAM])
        target = "/" + quote(path.lstrip("/\\")) + (f"?{rest}" if rest else "")  # never //host
        cookie = f"{self.cookie}={self.session.decode()}; Path=/; HttpOnly; SameSite=Strict"
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


def _with_security_headers(send: Send) -> Send:
    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            names = {name for name, _ in SECURITY_HEADERS}
            kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
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
