"""Static assets addressed by content hash: `/static/app.js?v=<hash>` is cached for a year, any other URL revalidates.

The page's script is ES modules loaded without a bundler: the entry `app.js` imports the panels and the helpers they
share by relative paths. The page's import map sends each module's plain URL to its hashed one, so every module is
fetched by its own content hash: a changed module is a new URL although the modules importing it are unchanged (and
cached for good), and no module is ever served stale under an immutable URL.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import parse_qs

from fastapi.staticfiles import StaticFiles
from starlette.responses import Response
from starlette.types import Scope

STATIC = Path(__file__).parent / "static"
ENTRY = "app.js"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
# a module script is refused under any other type, and Python's MIME table is the OS's (text/plain on some)
JAVASCRIPT = "text/javascript; charset=utf-8"
# a static import or re-export: `import {a} from "./x.js";`, `import "./x.js";`, `export {a} from "./x.js";`
_IMPORT = re.compile(r'^(?:(?:import|export)\s[^;"]*?\bfrom\s*|import\s*)"(?P<spec>[^"]+)"\s*;', re.MULTILINE)


@lru_cache(maxsize=None)
def content_hash(name: str, root: Path = STATIC) -> str:
    """The first 12 hex digits of the asset's SHA-256 (read once per process: assets ship with the package)."""
    return hashlib.sha256((root / name).read_bytes()).hexdigest()[:12]


def asset_url(name: str, root: Path = STATIC) -> str:
    """The URL a page links an asset by: its content hash in the query, so a changed file is a new URL."""
    return f"/static/{name}?v={content_hash(name, root)}"


@lru_cache(maxsize=None)
def modules(entry: str = ENTRY, root: Path = STATIC) -> tuple[str, ...]:
    """The modules `entry` reaches through its static imports, sorted (the entry itself only if something imports it:
    the page links it by its hashed URL already).

    Every specifier must be relative and name a file under `root`: anything else fails here, when the app starts,
    rather than in a browser.
    """
    seen: set[str] = set()
    todo = [entry]
    while todo:
        name = todo.pop()
        for match in _IMPORT.finditer((root / name).read_text(encoding="utf-8")):
            spec = match["spec"]
            target = posixpath.normpath(posixpath.join(posixpath.dirname(name), spec))
            if not spec.startswith(("./", "../")) or target.startswith("../") or not (root / target).is_file():
                raise ValueError(f"{name} imports {spec!r}: not a relative path to a module under {root}")
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return tuple(sorted(seen))


def import_map(entry: str = ENTRY, root: Path = STATIC) -> str:
    """The page's import map (JSON text): each module's plain URL, where a relative import resolves, to its hashed
    URL."""
    imports = {f"/static/{name}": asset_url(name, root) for name in modules(entry, root)}
    return json.dumps({"imports": imports}, separators=(",", ":"), sort_keys=True)


class HashedStatic(StaticFiles):
    """StaticFiles whose answers carry Cache-Control: immutable when the URL names the file's current hash, and a
    JavaScript type for every module."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if response.status_code in (200, 304):
            asked = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("v", [""])[0]
            current = (STATIC / path).is_file() and asked == content_hash(path)
            response.headers["cache-control"] = IMMUTABLE if current else REVALIDATE
            if path.endswith(".js"):
                response.headers["content-type"] = JAVASCRIPT
        return response
