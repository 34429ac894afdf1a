"""The page's script as native ES modules, no bundler: no static file over 600 lines; every module addressed by its
content hash through the page's import map, so a changed module is a new URL while the modules importing it keep
theirs (and stay cached); each served as JavaScript; the map admitted by the CSP by its hash, nothing else inline."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlparse

import pytest

from hybridplan.web.assets import asset_url, import_map, modules

STATIC = Path(__file__).resolve().parents[2] / "src" / "hybridplan" / "web" / "static"
MAX_LINES = 600
JS = "text/javascript; charset=utf-8"
# a module's relative imports, read here apart from the server's own reading of them
SPECIFIER = re.compile(r'^(?:import|export)\b[^;]*?"(\.\.?/[^"]+)";', re.MULTILINE)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def _imports(html: str) -> dict[str, str]:
    return json.loads(re.search(r'<script type="importmap">(.*?)</script>', html, re.S).group(1))["imports"]


def test_no_static_file_is_over_600_lines():
    files = [p for p in STATIC.rglob("*") if p.is_file()]
    assert len([p for p in files if p.suffix == ".js"]) >= 20  # app.js is split: the entry, its panels and helpers
    lines = {p.relative_to(STATIC).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in files}
    assert {name: n for name, n in lines.items() if n > MAX_LINES} == {}


def test_the_import_map_sends_every_module_to_its_content_hashed_url(client):
    """Every module file (all .js under static/ but the two scripts the page links itself) is in the map, at its
    current hash, preloaded by that URL, and answers 200 as JavaScript, cached for good."""
    html = client.get("/").text
    imports = _imports(html)
    files = {p.relative_to(STATIC).as_posix() for p in STATIC.rglob("*.js")} - {"app.js", "theme.js"}
    assert set(imports) == {f"/static/{name}" for name in files}
    for plain, hashed in imports.items():
        path = STATIC / plain.removeprefix("/static/")
        assert hashed == f"{plain}?v={_digest(path)}"
        assert f'<link rel="modulepreload" href="{hashed}">' in html
        res = client.get(hashed)
        assert res.status_code == 200 and res.content == path.read_bytes()
        assert res.headers["content-type"] == JS and "immutable" in res.headers["cache-control"]
    entry = re.findall(r'<script type="module" src="([^"]+)"></script>', html)
    assert entry == [f"/static/app.js?v={_digest(STATIC / 'app.js')}"]
    assert client.get(entry[0]).headers["content-type"] == JS


def test_every_import_resolves_to_a_mapped_url(client):
    """A relative import resolves against its module's URL, query dropped: each such URL must be a key of the map,
    or the browser would fetch that module unhashed."""
    imports = _imports(client.get("/").text)
    base = "http://127.0.0.1"
    for path in STATIC.rglob("*.js"):
        name = path.relative_to(STATIC).as_posix()
        for spec in SPECIFIER.findall(path.read_text(encoding="utf-8")):
            resolved = urlparse(urljoin(f"{base}/static/{name}?v={_digest(path)}", spec))
            assert resolved.path in imports and not resolved.query, (name, spec)


def test_the_csp_admits_the_import_map_by_its_hash_and_nothing_else_inline(client):
    res = client.get("/")
    text = re.search(r'<script type="importmap">(.*?)</script>', res.text, re.S).group(1)
    policy = dict(d.strip().split(" ", 1) for d in res.headers["content-security-policy"].split(";"))
    digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
    assert policy["script-src"] == f"'self' 'sha256-{digest}'" and policy["default-src"] == "'self'"
    assert "unsafe" not in res.headers["content-security-policy"]
    scripts = re.findall(r"<script\b[^>]*>", res.text)
    assert len(scripts) == 3 and len([s for s in scripts if "src=" not in s]) == 1  # theme.js, the map, app.js


def test_a_changed_module_changes_its_url_and_no_other(tmp_path):
    """A new release changing lib/format.js: the map gives that module a new URL; every other module, the entry
    that imports it through others included, keeps its URL (and its year-long cache)."""
    before, after = tmp_path / "before", tmp_path / "after"
    shutil.copytree(STATIC, before)
    shutil.copytree(STATIC, after)
    with (after / "lib" / "format.js").open("a", encoding="utf-8") as f:
        f.write("// changed\n")
    old, new = json.loads(import_map(root=before))["imports"], json.loads(import_map(root=after))["imports"]
    assert set(old) == set(new)
    assert {k for k in old if old[k] != new[k]} == {"/static/lib/format.js"}
    assert new["/static/lib/format.js"] == f"/static/lib/format.js?v={_digest(after / 'lib' / 'format.js')}"
    assert asset_url("app.js", before) == asset_url("app.js", after)


@pytest.mark.parametrize("spec", ["./missing.js", "lodash", "/static/lib/dom.js", "../../app.py"])
def test_an_import_the_map_cannot_address_stops_the_server(tmp_path, spec):
    """An import of a file that is not there, a bare name or an absolute path would fail (or go unhashed) only in a
    browser: the server refuses to start with it instead."""
    root = tmp_path / "static"
    shutil.copytree(STATIC, root)
    memory = root / "panels" / "memory.js"
    memory.write_text(f'import {{ x }} from "{spec}";\n' + memory.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(ValueError, match="panels/memory.js imports"):
        modules(root=root)


@pytest.mark.browser
def test_the_browser_fetches_each_script_once_by_its_hash(page):
    """Preloads and imports meet on the same hashed URL: each script is fetched once, at its current hash, as
    JavaScript; the page then runs (the fixture fails on any console error, a CSP refusal included)."""
    fetched: dict[str, list[tuple[str, int, str]]] = {}

    def seen(res) -> None:
        url = urlparse(res.url)
        if url.path.endswith(".js"):
            version = parse_qs(url.query).get("v", [""])[0]
            fetched.setdefault(url.path.removeprefix("/static/"), []).append(
                (version, res.status, res.headers["content-type"]))

    page.on("response", seen)
    page.goto(page.base + "/")
    page.wait_for_selector("#memory-pools [data-key='max_running_requests']")
    files = {p.relative_to(STATIC).as_posix(): p for p in STATIC.rglob("*.js")}
    assert set(fetched) == set(files)
    for name, answers in fetched.items():
        assert answers == [(_digest(files[name]), 200, JS)], name
