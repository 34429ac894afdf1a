"""What the browser receives: the page and JSON gzipped, static assets addressed and cached by content hash."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

STATIC = Path(__file__).resolve().parents[2] / "src" / "hybridplan" / "web" / "static"


def test_page_and_json_are_gzipped(client):
    for res in (client.get("/", headers={"accept-encoding": "gzip"}),
                client.get("/api/pages/qwen3.8-27b", headers={"accept-encoding": "gzip"}),
                client.post("/api/render", json={"page": "qwen3.8-27b"}, headers={"accept-encoding": "gzip"})):
        assert res.status_code == 200 and res.headers["content-encoding"] == "gzip"
        assert res.headers["content-security-policy"]  # the security headers survive the compression
    assert "content-encoding" not in client.get("/", headers={"accept-encoding": "identity"}).headers


def test_assets_are_linked_and_cached_by_content_hash(client):
    html = client.get("/").text
    links = re.findall(r'/static/([a-z]+\.(?:js|css))\?v=([0-9a-f]{12})', html)
    assert {name for name, _ in links} == {"app.js", "style.css", "theme.js"}
    for name, digest in links:
        assert digest == hashlib.sha256((STATIC / name).read_bytes()).hexdigest()[:12]
        res = client.get(f"/static/{name}?v={digest}")
        assert res.status_code == 200 and "immutable" in res.headers["cache-control"]
        # another hash (an older page) or none is never cached for good
        assert client.get(f"/static/{name}?v=000000000000").headers["cache-control"] == "no-cache"
        assert client.get(f"/static/{name}").headers["cache-control"] == "no-cache"


def test_render_takes_the_calculators_flags_into_the_effective_command(client):
    """set_flags puts the Calculator's C into the command (`effective`), the recipe itself unchanged."""
    base = client.post("/api/render", json={"page": "qwen3.8-27b"}).json()
    res = client.post("/api/render", json={"page": "qwen3.8-27b", "concurrency": 16,
                                           "set_flags": ["--max-running-requests 16"]}).json()
    assert res["command"] == base["command"] and res["effective"]["command"] != base["command"]
    assert "--max-running-requests 16" in res["effective"]["flags"]
    assert [f for f in res["effective"]["flags"] if f != "--max-running-requests 16"] == base["flags"]
    for bad in (["rm -rf /"], ["--flag a b"], ["--x"] * 9):
        out = client.post("/api/render", json={"page": "qwen3.8-27b", "set_flags": bad})
        assert out.status_code == 400 and out.json()["error"]["message"].startswith("set_flags")
