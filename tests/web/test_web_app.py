"""The app shell: pages, offline API docs, security headers, body limits, and no traceback ever reaches a client."""

from __future__ import annotations

import re

import pytest


def test_page_loads_only_its_own_assets(client):
    res = client.get("/")
    assert res.status_code == 200 and "text/html" in res.headers["content-type"]
    html = res.text
    assert re.findall(r'(?:src|href)="(https?:)?//', html) == []  # no CDN, works offline
    assert "<script>" not in html  # no inline script: the CSP forbids it
    for asset in re.findall(r'(?:src|href)="(/static/[^"?]+)', html):
        assert client.get(asset).status_code == 200, asset
    csp = res.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'self'" in csp
    assert res.headers["x-content-type-options"] == "nosniff"


def test_the_header_names_both_engines_modelled(client):
    """The page explains SGLang and vLLM commands: its header names the release of each it models by default."""
    from hybridplan.engine.api import DEFAULT
    from hybridplan.engine.api import for_engine

    html = client.get("/").text
    assert f"sglang {DEFAULT} and vllm {for_engine('vllm').version} memory models" in html
    assert DEFAULT == "0.5.23" and for_engine("vllm").version == "0.33.0"


def test_openapi_describes_the_bounded_api(client):
    schema = client.get("/openapi.json").json()
    op = schema["paths"]["/api/explain"]["post"]
    assert {"400", "422"} <= set(op["responses"])
    body = schema["components"]["schemas"]["ExplainRequest"]
    assert body["properties"]["command"]["maxLength"] == 16_384
    assert body["additionalProperties"] is False


def test_docs_page_is_rendered_offline(client):
    res = client.get("/docs")
    assert res.status_code == 200
    for op in ("POST /api/explain", "POST /api/render", "POST /api/ratio", "POST /api/plan", "GET /api/pages"):
        assert op in res.text, op
    assert "maxLength=16384" in res.text
    assert re.findall(r'(?:src|href)="(https?:)?//', res.text) == []


def test_unknown_path_is_a_json_error(client):
    res = client.get("/api/nothing")
    assert res.status_code == 404 and res.json()["error"]["message"] == "Not Found"


def test_declared_body_over_the_limit_is_413(client):
    from hybridplan.web.limits import MAX_BODY_BYTES

    res = client.post("/api/explain", content=b"{" + b" " * MAX_BODY_BYTES + b"}",
                      headers={"content-type": "application/json"})
    assert res.status_code == 413 and "request body over" in res.json()["error"]["message"]


def test_streamed_body_over_the_limit_is_413(client):
    from hybridplan.web.limits import MAX_BODY_BYTES

    def chunks():
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b" " * 65536

    res = client.post("/api/explain", content=chunks(), headers={"content-type": "application/json"})
    assert res.status_code == 413


def test_unexpected_error_is_one_generic_line_and_a_logged_traceback(client, monkeypatch, caplog):
    import hybridplan.engine.sglang.serving.explain
    from hybridplan.web.errors import UNPROCESSABLE

    def boom(*a, **k):
        raise ZeroDivisionError("secret internals")

    monkeypatch.setattr(hybridplan.engine.sglang.serving.explain, "explain", boom)
    with caplog.at_level("ERROR", logger="hybridplan.web"):
        res = client.post("/api/explain", json={"command": "--model-path Qwen/Qwen3.8-27B"})
    assert res.status_code == 400
    assert res.json() == {"error": {"message": UNPROCESSABLE, "type": "BadInput"}}
    assert "secret internals" not in res.text
    assert "ZeroDivisionError: secret internals" in caplog.text  # the traceback stays in the server log


@pytest.mark.parametrize("path", ["/", "/docs", "/openapi.json", "/static/app.js"])
def test_get_pages(client, path):
    assert client.get(path).status_code == 200


def test_server_timing_header_reports_the_handler_time(client):
    res = client.post("/api/explain", json={"command": "--model-path Qwen/Qwen3.8-27B"})
    name, dur = res.headers["server-timing"].split(";dur=")
    assert name == "app" and float(dur) > 0


def test_assets_are_covered_by_the_package_data_globs():
    """Every template and static asset (the page's modules under static/lib/ and static/panels/ included) matches a
    package-data glob of pyproject as setuptools expands it: a file no glob names would be missing from an installed
    package while the checkout still works."""
    import glob
    import tomllib
    from pathlib import Path

    import hybridplan.web

    root = Path(hybridplan.web.__file__).parent
    package = root.parent
    pyproject = tomllib.loads((package.parents[1] / "pyproject.toml").read_text())
    shipped = {Path(package, p) for pattern in pyproject["tool"]["setuptools"]["package-data"]["hybridplan"]
               for p in glob.glob(pattern, root_dir=package, recursive=True)}
    for folder in ("templates", "static"):
        files = {p for p in (root / folder).rglob("*") if p.is_file()}
        assert files and files <= shipped, sorted(map(str, files - shipped))
    assert any(p.parent.name == "panels" for p in shipped)  # the subfolders are there, and shipped
