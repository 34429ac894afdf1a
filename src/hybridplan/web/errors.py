"""Errors as the API answers them: the CLI's `{"error": ...}` object and an HTTP status, never a traceback."""

from __future__ import annotations

import logging
from typing import Any, Callable, Coroutine

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException

from hybridplan.errors import BadInput, EngineRefusal, HybridPlanError

log = logging.getLogger("hybridplan.web")

# CLI exit code -> HTTP status: 2 bad input, 3 the engine would refuse to start, 1 findings
STATUS_FOR_EXIT = {0: 200, 1: 200, 2: 400, 3: 422}


def error_body(message: str, kind: str, **extra: str) -> dict[str, Any]:
    """The object `run_guarded` prints under --json."""
    return {"error": {"message": message, "type": kind, **extra}}


UNPROCESSABLE = "this input could not be processed (an unexpected error; the server log has the details)"


def _shown(part: object, limit: int = 64) -> str:
    """A field name as the message shows it: printable (escaped otherwise), one line, at most `limit` characters."""
    text = str(part)
    if not text.isprintable():
        text = text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _validation_message(exc: RequestValidationError) -> str:
    """One line naming each bad field (never echoing the input, which may be large)."""
    parts = []
    for err in exc.errors():
        if err.get("type") == "json_invalid":
            parts.append("request body: not valid JSON")
            continue
        loc = ".".join(_shown(p) for p in err.get("loc", ()) if p not in ("body", "query", "path"))
        parts.append(f"{loc or 'request body'}: {err.get('msg', 'invalid')}")
    return "; ".join(dict.fromkeys(parts)) or "invalid request"


BODY_UNPARSED = "There was an error parsing the body"  # fastapi.routing's answer when json.loads itself raised


async def _name_the_bad_number(request: Request) -> None:
    """Re-read a body FastAPI could not parse with the bounded parser, which names the field: json.loads raises
    on an integer past Python's 4,300-digit conversion limit without saying where (the body is cached and bounded)."""
    from hybridplan.jsontext import parse_json

    body = await request.body()
    parse_json(body.decode("utf-8", errors="replace"), origin="request body", what="JSON")


class GuardedRoute(APIRoute):
    """An API route whose unexpected exceptions are answered as bad input (400, one generic line), the traceback
    logged here: an endpoint's exception comes from what the request asked for, never a 500 to the client."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except StarletteHTTPException as exc:
                if exc.status_code == 400 and exc.detail == BODY_UNPARSED:
                    await _name_the_bad_number(request)
                raise
            except (HybridPlanError, RequestValidationError):
                raise
            except Exception:
                log.exception("unexpected error on %s %s", request.method, request.url.path)
                return JSONResponse(error_body(UNPROCESSABLE, BadInput.__name__), status_code=400)

        return guarded


def install(app: FastAPI) -> None:
    """Register the handlers: known errors map to their exit code's status; anything else outside the API routes
    (which answer it as bad input, GuardedRoute) to a one-line 500."""

    @app.exception_handler(EngineRefusal)
    async def _refusal(_: Request, exc: EngineRefusal) -> JSONResponse:
        return JSONResponse({"error": exc.as_dict()}, status_code=STATUS_FOR_EXIT[3])

    @app.exception_handler(HybridPlanError)
    async def _known(_: Request, exc: HybridPlanError) -> JSONResponse:
        status = STATUS_FOR_EXIT.get(exc.exit_code, 400)
        return JSONResponse(error_body(exc.message, type(exc).__name__), status_code=status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(error_body(_validation_message(exc), BadInput.__name__), status_code=400)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = BadInput.__name__ if exc.status_code in (400, 413) else "HTTPError"  # an unparsable or oversized body
        return JSONResponse(error_body(str(exc.detail), kind), status_code=exc.status_code)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s", request.url.path)
        return JSONResponse(error_body(f"internal error ({type(exc).__name__}); the server log has the details",
                                       "InternalError"), status_code=500)
