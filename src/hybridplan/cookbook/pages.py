"""Loading cookbook pages: the bundled ones (data/cookbooks/<id>.yaml) and any file a user points at.

`_hardware.yaml` next to the pages is the shared hardware list (presentation, docker flags and the GPU catalog id
of each choice); a page lists the ids it supports and may add or override entries, as the docs' `hardware` key does.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from hybridplan.cookbook.builds import page_version
from hybridplan.cookbook.schema import Hardware, Page
from hybridplan.cookbook.source import SchemaError, SourceMap, Unreadable, dotted, parse_yaml, schema_errors
from hybridplan.errors import BadInput
from hybridplan.limits import MAX_YAML_BYTES
from hybridplan.textfile import read_text

if TYPE_CHECKING:
    from importlib.abc import Traversable

HARDWARE_FILE = "_hardware.yaml"


def _dir() -> Traversable:
    return resources.files("hybridplan") / "data" / "cookbooks"


@lru_cache(maxsize=1)
def hardware_catalog() -> tuple[Hardware, ...]:
    """The shared hardware list, in button order."""
    text = (_dir() / HARDWARE_FILE).read_text()
    data, src = parse_yaml(text, HARDWARE_FILE)
    try:
        return tuple(Hardware.model_validate(h) for h in (data or {}).get("hardware", []))
    except ValidationError as exc:
        first = schema_errors(exc, src)[0]
        raise BadInput(f"{HARDWARE_FILE}: {dotted(first.loc)}: {first.message}") from None


def _listed(data: dict[str, Any], key: str) -> list[Any]:
    """A list-valued key, or [] when it is absent or of another type (the schema reports the type)."""
    value = data.get(key)
    return value if isinstance(value, list) else []


@lru_cache(maxsize=1)
def docs_shared_hardware() -> frozenset[str]:
    """Hardware ids the docs' shared catalog already has (an exported page need not declare them)."""
    data, _ = parse_yaml((_dir() / HARDWARE_FILE).read_text(), HARDWARE_FILE)
    return frozenset(str(h) for h in (data or {}).get("docs_shared_catalog", []))


def _merge_hardware(data: dict[str, Any], catalog: tuple[Hardware, ...]) -> dict[str, Any]:
    """Resolve `supported_hardware` against the catalog plus the page's own entries (page entries win),
    in catalog order then page order; unknown ids and malformed entries are left for the validator to report."""
    supported = data.get("supported_hardware")
    if not isinstance(supported, list) or not isinstance(data.get("hardware", []), list):
        return data
    own = [h for h in _listed(data, "hardware") if isinstance(h, dict) and isinstance(h.get("id"), str)]
    malformed = [h for h in _listed(data, "hardware") if not (isinstance(h, dict) and isinstance(h.get("id"), str))]
    own_ids = {h.get("id") for h in own}
    merged: list[dict[str, Any]] = []
    for h in catalog:
        if h.id in supported and h.id not in own_ids:
            merged.append(h.model_dump(exclude_defaults=True))
        elif h.id in own_ids:
            merged.append(next(o for o in own if o.get("id") == h.id))
    merged += [o for o in own if o.get("id") not in {m.get("id") for m in merged}]
    merged = [m for m in merged if m.get("id") in supported]
    groups = list(dict.fromkeys([h.group for h in catalog] + [str(m.get("group", "nvidia")) for m in merged]))
    merged.sort(key=lambda m: groups.index(str(m.get("group", "nvidia"))))  # stable: a page's own GPUs join their group
    return {**data, "hardware": merged + malformed}


@dataclass(frozen=True)
class Loaded:
    """A page file after reading: the page (None when the schema rejects it), its errors and its source map."""

    page: Page | None
    errors: tuple[SchemaError, ...]
    source: SourceMap


def read_page_text(text: str, origin: str) -> Loaded:
    """Parse and validate one page. YAML that cannot be read raises Unreadable; schema violations are returned."""
    if len(text) > MAX_YAML_BYTES:
        raise Unreadable(f"{origin}: {len(text):,} characters, over the {MAX_YAML_BYTES:,}-character bound for a page")
    data, src = parse_yaml(text, origin)
    if not isinstance(data, dict):
        return Loaded(page=None, errors=(SchemaError(loc=(), line=1, message="a page is a YAML mapping"),), source=src)
    data = _merge_hardware(data, hardware_catalog())
    errors = []
    known = {h.get("id") for h in _listed(data, "hardware") if isinstance(h, dict) and isinstance(h.get("id"), str)}
    for i, hw in enumerate(_listed(data, "supported_hardware")):
        if isinstance(hw, str) and hw not in known:  # other types are the schema's to report
            errors.append(SchemaError(loc=("supported_hardware", i), line=src.line(("supported_hardware", i)),
                                      message=f"unknown hardware {hw!r}: not in {HARDWARE_FILE} and not declared "
                                              "under `hardware`"))
    note = ""
    if "engine_version" not in data:  # an explicit engine_version wins; else the release of the page's build
        install = data.get("install")
        commit = install.get("commit") if isinstance(install, dict) else None
        version, note = page_version(commit if isinstance(commit, str) else None)
        data = {**data, "engine_version": version}
    try:
        page = Page.model_validate(data)
    except ValidationError as exc:
        return Loaded(page=None, errors=tuple(errors + schema_errors(exc, src)), source=src)
    page._version_note = note
    return Loaded(page=page if not errors else None, errors=tuple(errors), source=src)


def read_page_file(path: str | Path) -> Loaded:
    """A page file: a bounded regular file of UTF-8 text (hybridplan.textfile), then read_page_text."""
    return read_page_text(read_text(Path(path), limit=MAX_YAML_BYTES, error=Unreadable), str(path))


def at_version(page: Page, version: str | None) -> Page:
    """The page modelled by another sglang release (`--engine-version`), or as it is when None."""
    if version is None:
        return page
    from hybridplan.engine.api import check_version

    return page.model_copy(update={"engine_version": check_version(version)})


def _strict(loaded: Loaded) -> Page:
    if loaded.page is None:
        e = loaded.errors[0]
        more = f" (and {len(loaded.errors) - 1} more; run `hybridplan cookbook check`)" if len(loaded.errors) > 1 else ""
        line = f":{e.line}" if e.line else ""
        raise BadInput(f"{loaded.source.origin}{line}: {dotted(e.loc) or 'page'}: {e.message}{more}")
    return loaded.page


def bundled_ids() -> list[str]:
    """Ids of the bundled pages, sorted."""
    return sorted(p.name[:-5] for p in _dir().iterdir() if p.name.endswith(".yaml") and not p.name.startswith("_"))


def bundled_path(page_id: str) -> Traversable:
    return _dir() / f"{page_id}.yaml"


@lru_cache(maxsize=None)
def _bundled(page_id: str) -> Page:
    return _strict(read_page_text(bundled_path(page_id).read_text(), f"{page_id}.yaml"))


def load_page(ref: str) -> Page:
    """A bundled page by id, or a page file by path. Bad pages raise BadInput with the file and line."""
    if ref in bundled_ids():
        return _bundled(ref)
    if ref.endswith((".yaml", ".yml")) or "/" in ref:
        return _strict(read_page_file(ref))
    raise BadInput(f"unknown cookbook page {ref!r}; bundled: {', '.join(bundled_ids())}")
