"""The FastAPI application: pages, JSON API, static assets (content-hashed, gzipped), error handlers, Host check, body
limit and security headers."""

from __future__ import annotations

import base64
import hashlib
import time
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI
from starlette.middleware.gzip import GZipMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hybridplan.version import __version__
from hybridplan.web.hosts import HostPolicy

if TYPE_CHECKING:
    from hybridplan.model_sources import ModelSourcePolicy

HERE = Path(__file__).parent


def content_security_policy(*inline_scripts: str) -> str:
    """The page loads only its own assets, nothing from another origin; nothing inline runs but the scripts given,
    each admitted by the SHA-256 of its text (the page's module import map)."""
    hashes = [base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() for text in inline_scripts]
    scripts = " ".join(["'self'", *(f"'sha256-{h}'" for h in hashes)])
    return (f"default-src 'self'; script-src {scripts}; style-src 'self'; img-src 'self' data:; object-src 'none'; "
            "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


def create_app(*, hosts: HostPolicy | None = None, sources: ModelSourcePolicy | None = None) -> FastAPI:
    """A fresh application (tests build one each; `hybridplan serve` runs one).

    `hosts`: the Host headers it answers (default: bound to 127.0.0.1:8000); `sources`: where it may read model
    configs (default: the catalog and the local HF cache, no server paths).
    """
    from markupsafe import Markup

    from hybridplan.model_sources import ModelSourcePolicy
    from hybridplan.web import api, errors, pages
    from hybridplan.web.assets import HashedStatic, asset_url, import_map, modules
    from hybridplan.web.hosts import HostGuard
    from hybridplan.web.limits import BodyLimit

    app = FastAPI(title="hybridplan", version=__version__, docs_url=None, redoc_url=None,
                  description="The JSON API of `hybridplan serve`. Each endpoint returns the object its CLI command "
                              "prints with `--json`; errors are the CLI's `error` object.")
    app.state.model_sources = sources or ModelSourcePolicy()
    errors.install(app)
    app.include_router(api.router)
    app.include_router(pages.router)
    app.mount("/static", HashedStatic(directory=str(HERE / "static")), name="static")
    imports = import_map()
    pages.templates.env.globals.update(asset=asset_url, modules=modules(), import_map=Markup(imports))

    # outermost last: security headers on every answer, then the Host check before anything reads the request;
    # the page, its assets and the JSON answers are gzipped when the client accepts it
    app.add_middleware(GZipMiddleware, minimum_size=1024)
    app.add_middleware(BodyLimit)
    app.add_middleware(ServerTiming)
    app.add_middleware(HostGuard, policy=hosts or HostPolicy())
    app.add_middleware(SecurityHeaders, csp=content_security_policy(imports))
    return app


class ServerTiming:
    """ASGI middleware: `Server-Timing: app;dur=<ms>`, the time to the response head (what benchmarks/ reads)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        t0 = time.perf_counter()

        async def send_with_timing(message: Message) -> None:
            if message["type"] == "http.response.start":
                dur = f"app;dur={(time.perf_counter() - t0) * 1000:.2f}".encode()
                message = {**message, "headers": [*message.get("headers", []), (b"server-timing", dur)]}
            await send(message)

        return await self.app(scope, receive, send_with_timing)


class SecurityHeaders:
    """ASGI middleware adding the CSP and no-sniff headers to every response (pure ASGI: body reads stay direct)."""

    def __init__(self, app: ASGIApp, csp: str) -> None:
        self.app = app
        self.headers = [(b"content-security-policy", csp.encode()), (b"x-content-type-options", b"nosniff"),
                        (b"referrer-policy", b"no-referrer")]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self.headers]}
            await send(message)

        return await self.app(scope, receive, send_with_headers)
