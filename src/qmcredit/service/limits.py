"""The upload size limit, enforced on the bytes as they arrive (a lying or absent Content-Length
changes nothing): a body over the limit is answered 413 and never reaches the application."""

from __future__ import annotations

import json


class BodyTooLarge(Exception):
    pass


class BodyLimit:
    """ASGI middleware refusing request bodies larger than ``limit`` bytes."""

    def __init__(self, app, limit: int):
        self.app = app
        self.limit = limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            return await self._refuse(send)
        seen = 0
        started = False

        async def limited_receive():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLarge()
            return message

        async def tracking_send(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyTooLarge:
            if not started:
                await self._refuse(send)

    async def _refuse(self, send):
        body = json.dumps({"error": f"request body larger than the upload limit of {self.limit} bytes",
                           "problems": [{"location": "body", "message": f"more than {self.limit} bytes"}]}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


class StrictJsonBodies:
    """ASGI middleware: a JSON request body is read by the one parser (``jsontext.parse_json``)
    before any route sees it, so duplicate keys, NaN, huge numbers and deep nesting are refused
    (422 naming the line and column) on every route, not only those that parse bodies themselves.
    What it read is kept in the request's state (``parsed_body``): a route reads the body once."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            return await self.app(scope, receive, send)
        ctype = dict(scope.get("headers") or []).get(b"content-type", b"").split(b";")[0].strip().lower()
        if ctype not in (b"", b"application/json") and not ctype.endswith(b"+json"):
            return await self.app(scope, receive, send)
        chunks, more = [], True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return await self.app(scope, _replay([message]), send)
            chunks.append(message)
            more = message.get("more_body", False)
        body = b"".join(m.get("body", b"") for m in chunks)
        if body.strip():
            from qmcredit import ClaimError
            from qmcredit.jsontext import parse_json
            try:
                scope.setdefault("state", {})[PARSED] = (body, parse_json(body))
            except ClaimError as e:
                payload = json.dumps({"error": "the body is not JSON the office reads",
                                      "problems": [p.to_dict() for p in e.problems]}).encode()
                await send({"type": "http.response.start", "status": 422,
                            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
                return await send({"type": "http.response.body", "body": payload})
        await self.app(scope, _replay([{"type": "http.request", "body": body, "more_body": False}], receive), send)


PARSED = "qmcredit_parsed_body"


def parsed_body(scope, body: bytes):
    """``body`` as ``StrictJsonBodies`` parsed it, or None when it did not (not JSON, or another body)."""
    kept = (scope.get("state") or {}).get(PARSED)
    return kept[1] if kept is not None and kept[0] == body else None


def _replay(messages: list, then=None):
    async def receive():
        if messages:
            return messages.pop(0)
        return await then() if then else {"type": "http.disconnect"}
    return receive


SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]
#: the pages need nothing from elsewhere; /docs (Swagger UI) loads its scripts from a CDN and keeps none
CSP = b"default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"


class SecurityHeaders:
    """ASGI middleware adding nosniff, X-Frame-Options, Referrer-Policy and a Content-Security-Policy
    to every answer (and Strict-Transport-Security when the office runs behind TLS)."""

    def __init__(self, app, tls: bool = False):
        self.app = app
        self.tls = tls

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        extra = list(SECURITY_HEADERS)
        if not scope["path"].startswith(("/docs", "/redoc")):
            extra.append((b"content-security-policy", CSP))
        if self.tls:
            extra.append((b"strict-transport-security", b"max-age=31536000"))

        async def with_headers(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)
        await self.app(scope, receive, with_headers)
