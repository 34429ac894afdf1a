"""Request-size bound: a body over the limit is refused with 413, whether declared up front or streamed."""

from __future__ import annotations

import json

from fastapi import HTTPException

from hybridplan.web.errors import error_body

MAX_BODY_BYTES = 4 * 1024 * 1024  # a boot log (2 MiB of text) plus a command, with room for JSON escaping


def _too_large(limit: int) -> HTTPException:
    return HTTPException(413, f"request body over {limit:,} bytes")


class BodyLimit:
    """ASGI middleware: checks Content-Length before the app runs and counts the bytes of chunked bodies.

    A streamed overflow raises HTTPException(413) inside the body read, which the app's handlers answer.
    """

    def __init__(self, app, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            body = json.dumps(error_body(_too_large(self.limit).detail, "BadInput")).encode()
            await send({"type": "http.response.start", "status": 413,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return None
        seen = 0

        async def counted_receive():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _too_large(self.limit)
            return message

        return await self.app(scope, counted_receive, send)
