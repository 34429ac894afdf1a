"""Static assets addressed by content hash: `/static/app.js?v=<hash>` is cached for a year, any other URL revalidates."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from urllib.parse import parse_qs

from fastapi.staticfiles import StaticFiles
from starlette.responses import Response
from starlette.types import Scope

STATIC = Path(__file__).parent / "static"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


@lru_cache(maxsize=None)
def content_hash(name: str) -> str:
    """The first 12 hex digits of the asset's SHA-256 (read once per process: assets ship with the package)."""
    return hashlib.sha256((STATIC / name).read_bytes()).hexdigest()[:12]


def asset_url(name: str) -> str:
    """The URL a template links an asset by: its content hash in the query, so a changed file is a new URL."""
    return f"/static/{name}?v={content_hash(name)}"


class HashedStatic(StaticFiles):
    """StaticFiles whose answers carry Cache-Control: immutable when the URL names the file's current hash."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code in (200, 304):
            asked = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("v", [""])[0]
            current = (STATIC / path).is_file() and asked == content_hash(path)
            response.headers["cache-control"] = IMMUTABLE if current else REVALIDATE
        return response
