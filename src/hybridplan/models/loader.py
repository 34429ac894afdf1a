"""Find a model's config.json (local path, bundled catalog, local HF cache) and parse it into geometry."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from hybridplan.errors import BadInput
from hybridplan.limits import MAX_CONFIG_BYTES, MAX_PATH_CHARS
from hybridplan.models import catalog as cat
from hybridplan.models.config_json import ConfigView, parse_config_text, text_config
from hybridplan.models.geometry import DraftGeometry, KVSpec, ModelGeometry
from hybridplan.models.quant import quant_info
from hybridplan.textfile import lookup, read_text


@dataclass(frozen=True, kw_only=True)
class ConfigSource:
    """A resolved config: the parsed JSON, an optional ModelOpt sidecar, and where both came from."""

    ref: str
    config: dict[str, Any]
    hf_quant_config: dict[str, Any] | None
    origin: str  # "catalog:<id>", a path, or "hf-cache:<path>"
    checkpoint_dir: Path | None  # local directory with weights, when there is one
    entry: cat.CatalogEntry | None = None


def hf_cache_dirs() -> list[Path]:
    """Candidate hub caches, in huggingface_hub's order (HF_HUB_CACHE, HF_HOME/hub, ~/.cache)."""
    dirs = []
    if os.environ.get("HF_HUB_CACHE"):
        dirs.append(Path(os.environ["HF_HUB_CACHE"]))
    if os.environ.get("HF_HOME"):
        dirs.append(Path(os.environ["HF_HOME"]) / "hub")
    dirs.append(Path.home() / ".cache" / "huggingface" / "hub")
    return dirs


def hf_cache_snapshot(ref: str) -> Path | None:
    """The newest cached snapshot directory of `Org/Name` that holds a config.json."""
    if ref.count("/") != 1:
        return None
    folder = "models--" + ref.replace("/", "--")
    for root in hf_cache_dirs():
        snaps = root / folder / "snapshots"
        try:
            if not snaps.is_dir():
                continue
            found = sorted((p for p in snaps.iterdir() if (p / "config.json").is_file()),
                           key=lambda p: (p / "config.json").stat().st_mtime, reverse=True)
        except OSError:  # a name too long for the file system is simply not cached
            continue
        if found:
            return found[0]
    return None


def read_json(path: Path) -> dict[str, Any]:
    """A config file as JSON: a bounded regular file, strict UTF-8 (hybridplan.textfile)."""
    return parse_config_text(read_text(path, limit=MAX_CONFIG_BYTES), origin=str(path))


def _sidecar(path: Path) -> dict[str, Any] | None:
    """The ModelOpt `hf_quant_config.json` beside a config, when there is one."""
    return read_json(path) if lookup(path) is not None else None


def read_dir(ref: str, directory: Path, origin: str) -> ConfigSource:
    """A checkpoint directory's config.json (and hf_quant_config.json sidecar)."""
    cfg_path = directory / "config.json"
    if lookup(cfg_path) is None:
        raise BadInput(f"{directory}: no config.json in this directory")
    return ConfigSource(ref=ref, config=read_json(cfg_path), hf_quant_config=_sidecar(directory / "hf_quant_config.json"),
                        origin=origin, checkpoint_dir=directory)


def from_file(ref: str, path: Path) -> ConfigSource:
    """A config.json file (with its hf_quant_config.json sidecar when one sits next to it)."""
    return ConfigSource(ref=ref, config=read_json(path), hf_quant_config=_sidecar(path.with_name("hf_quant_config.json")),
                        origin=str(path),
                        checkpoint_dir=path.parent if path.name == "config.json" else None)


def from_catalog(ref: str, entry: cat.CatalogEntry) -> ConfigSource:
    """A bundled catalog entry (its overlay merged over the config)."""
    config = parse_config_text(cat.read_text(entry.config_file), origin=f"catalog:{entry.hf_id}")
    config = {**config, **entry.overlay}
    hf_quant = None
    if entry.hf_quant_config_file:
        hf_quant = parse_config_text(cat.read_text(entry.hf_quant_config_file), origin=f"catalog:{entry.hf_id}")
    return ConfigSource(ref=ref, config=config, hf_quant_config=hf_quant, origin=f"catalog:{entry.hf_id}",
                        checkpoint_dir=None, entry=entry)


# A resolver that replaces the local one for the current context (the web server's model-source policy).
_RESOLVER: ContextVar[Callable[[str], ConfigSource] | None] = ContextVar("hybridplan_model_resolver", default=None)


def active_resolver() -> Callable[[str], ConfigSource] | None:
    """The resolver set by `resolving_with` in this context, or None (the CLI's local resolution)."""
    return _RESOLVER.get()


@contextmanager
def resolving_with(resolver: Callable[[str], ConfigSource]) -> Iterator[None]:
    """Every resolve_config in this context (and the threads it copies into) goes through `resolver`."""
    token = _RESOLVER.set(resolver)
    try:
        yield
    finally:
        _RESOLVER.reset(token)


def resolve_config(ref: str) -> ConfigSource:
    """Resolve a --model-path value the way a user means it: a local file or directory, a catalog id, the HF cache.

    Inside `resolving_with`, the context's resolver answers instead. `~` is never expanded here: a shell (or the CLI,
    for a command given as one string) does that.
    """
    hook = _RESOLVER.get()
    if hook is not None:
        return hook(ref)
    if not ref:
        raise BadInput("no model given (--model-path is empty)")
    if len(ref) > MAX_PATH_CHARS:
        raise BadInput(f"--model-path: too long ({len(ref):,} characters; the bound is PATH_MAX, {MAX_PATH_CHARS:,})")
    path = Path(ref)
    st = lookup(path)
    if st is not None:
        return read_dir(ref, path, str(path)) if stat.S_ISDIR(st.st_mode) else from_file(ref, path)
    entry = cat.lookup(ref)
    if entry is not None:
        return catalog_source(ref, entry.hf_id)
    cached = hf_cache_snapshot(ref)
    if cached is not None:
        return read_dir(ref, cached, f"hf-cache:{cached}")
    if ref.startswith("~"):
        raise BadInput(f"{ref}: no such file or directory (`~` is not expanded here; give the full path)")
    if ref.startswith((".", "/")) or os.sep in ref.strip("/").replace("/", "", 1):
        raise BadInput(f"{ref}: no such file or directory")
    raise BadInput(
        f"model {ref!r} not found: not a local path, not in the bundled catalog (`hybridplan models`), "
        "and not in the local Hugging Face cache"
    )


def parse_geometry(src: ConfigSource) -> ModelGeometry:
    """config dict -> ModelGeometry through the family registry."""
    from hybridplan.models.families import find_parser

    _check_schema(src)
    root = ConfigView(src.config, src.origin)
    text = text_config(src.config, src.origin)
    parser = find_parser(root, text)
    quant = quant_info(src.config, src.hf_quant_config)
    geo = parser(root, text, quant=quant, source=src.origin)
    if src.entry is not None and src.entry.note:
        geo = _with_note(geo, f"catalog: {src.entry.note}")
    return geo


def _check_schema(src: ConfigSource) -> None:
    """The config schema check (models.config_schema; pydantic, imported on first use). A bundled entry is package
    data the test suite checks (tests/test_import_graph.py), so an answer about one needs no pydantic."""
    if bundled_id(src) is None:
        from hybridplan.models.config_schema import check_config

        check_config(src.config, src.origin)


def _with_note(geo: ModelGeometry, note: str) -> ModelGeometry:
    from dataclasses import replace

    return replace(geo, notes=(note, *geo.notes))


def bundled_id(src: ConfigSource) -> str | None:
    """The catalog id of a bundled entry resolved by the local resolver (not a request's upload), else None: package
    data, so what is derived from it can be kept for the process."""
    return src.entry.hf_id if src.entry is not None and _RESOLVER.get() is None else None


@lru_cache(maxsize=256)
def catalog_source(ref: str, hf_id: str) -> ConfigSource:
    """A bundled entry's config, parsed once per process (package data does not change; callers never mutate it)."""
    return from_catalog(ref, cat.catalog()[hf_id])


@lru_cache(maxsize=256)
def _catalog_geometry(ref: str, hf_id: str) -> ModelGeometry:
    return parse_geometry(catalog_source(ref, hf_id))


def load_model(ref: str) -> ModelGeometry:
    """The target model's geometry from a --model-path value (a bundled entry's is parsed once)."""
    src = resolve_config(ref)
    hf_id = bundled_id(src)
    if hf_id is not None:
        return _catalog_geometry(src.ref, hf_id)
    return parse_geometry(src)


def _mapping(value: object) -> dict[str, Any]:
    """A config sub-object, or {} where it is absent or not an object."""
    return value if isinstance(value, dict) else {}


def _markov_rank(config: dict[str, Any], text: dict[str, Any], nested: dict[str, Any]) -> int:
    """dspark_config.py::parse_dspark_draft_config's markov_rank over one reading of the nested config."""
    if config.get("dspark_markov_rank") is not None:
        return int(config["dspark_markov_rank"])
    raw = nested.get("markov_rank", text.get("markov_rank", config.get("markov_rank", 0)))
    return int(raw) if raw is not None else 0


def parse_draft(src: ConfigSource) -> DraftGeometry:
    """A draft checkpoint's geometry as the engine reads it (num layers, KV heads, block sizes)."""
    from hybridplan.models.config_json import head_dim, model_dtype_field

    _check_schema(src)
    root = ConfigView(src.config, src.origin)
    text = text_config(src.config, src.origin)
    archs = src.config.get("architectures") or text.data.get("architectures") or ["?"]
    n_layers = text.int("num_hidden_layers")
    dflash = _mapping(src.config.get("dflash_config"))
    dspark = _mapping(src.config.get("dspark_config"))
    block = dflash.get("block_size", src.config.get("block_size"))
    merged = {**dflash, **dspark}
    if text.has("num_key_value_heads") or text.has("num_attention_heads"):
        hd = head_dim(text)
        kv = KVSpec(kind="mha", total_kv_heads=text.int("num_key_value_heads", text.int("num_attention_heads")),
                    head_dim=hd, v_head_dim=int(text.data.get("v_head_dim") or hd))
    else:
        kv = KVSpec(kind="none")
    nextn = text.data.get("num_nextn_predict_layers")
    notes = (f"catalog: {src.entry.note}",) if src.entry is not None and src.entry.note else ()
    return DraftGeometry(
        architecture=str(archs[0]), model_type=str(root.data.get("model_type", "")), num_hidden_layers=n_layers,
        num_attention_layers=n_layers, num_nextn_predict_layers=int(nextn) if isinstance(nextn, int) else None,
        kv=kv, config_dtype=model_dtype_field(text), block_size=int(block) if block is not None else None,
        dspark_block_size=src.config.get("dspark_block_size"), markov_rank=_markov_rank(src.config, text.data, merged),
        markov_rank_dspark_config_only=_markov_rank(src.config, text.data, dspark),
        source=src.origin, notes=notes,
    )


@lru_cache(maxsize=256)
def _catalog_draft(ref: str, hf_id: str) -> DraftGeometry:
    return parse_draft(catalog_source(ref, hf_id))


def load_draft(ref: str) -> DraftGeometry:
    """A draft's geometry from a --speculative-draft-model-path value (a bundled entry's is parsed once)."""
    src = resolve_config(ref)
    hf_id = bundled_id(src)
    if hf_id is not None:
        return _catalog_draft(src.ref, hf_id)
    return parse_draft(src)
