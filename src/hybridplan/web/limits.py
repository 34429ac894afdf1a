"""Request-size bound: a body over the limit is refused with 413, whether declared up front or streamed."""

from __future__ import annotations

import json

from fastapi import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hybridplan.limits import WEB_MAX_LOG_CHARS
from hybridplan.web.errors import error_body

MAX_BODY_BYTES = 256 * 1024  # a command, a few numbers and up to two uploaded config.json objects
# /api/logs/*: a boot log (logparse.WEB_MAX_LOG_CHARS characters, at up to 2 bytes each once UTF-8 and JSON-escaped)
# plus the rest of an ordinary body
MAX_LOG_BODY_BYTES = 2 * WEB_MAX_LOG_CHARS + MAX_BODY_BYTES
LOG_PATHS = "/api/logs/"


def limit_for(path: str) -> int:
    """The body limit of one request path."""
    return MAX_LOG_BODY_BYTES if path.startswith(LOG_PATHS) else MAX_BODY_BYTES


def _too_large(limit: int) -> HTTPException:
    return HTTPException(413, f"request body over {limit:,} bytes")


class BodyLimit:
    """ASGI middleware: checks Content-Length against the path's limit before the app runs and counts the bytes of
    chunked bodies.

    A streamed overflow raises HTTPException(413) inside the body read, which the app's handlers answer.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = limit_for(scope.get("path", ""))
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            body = json.dumps(error_body(_too_large(limit).detail, "BadInput")).encode()
            await send({"type": "http.response.start", "status": 413,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return None
        seen = 0

        async def counted_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise _too_large(limit)
            return message

        return await self.app(scope, counted_receive, send)
