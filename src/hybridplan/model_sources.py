"""Where a server may read model configs: the bundled catalog, the local Hugging Face cache, configs uploaded with
the request, and paths below directories the operator allowed (`hybridplan serve --allow-path DIR`).

The CLI resolves local paths freely; `hybridplan serve` resolves every model reference through a policy, checked
before any file is opened. A missing path and a path the policy refuses get the same answer, so the API is no
file-system oracle.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hybridplan.errors import BadInput
from hybridplan.limits import MAX_WEIGHT_FILES
from hybridplan.models import catalog as cat
from hybridplan.models.config_json import parse_config_text
from hybridplan.models.loader import (
    ConfigSource,
    from_catalog,
    from_file,
    hf_cache_dirs,
    hf_cache_snapshot,
    read_dir,
    resolving_with,
)

# huggingface_hub's repo-id rule (validate_repo_id): Org/Name of [A-Za-z0-9._-], no "--" or "..", no edge . or -
_HF_PART = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
HF_ID = re.compile(rf"^{_HF_PART}/{_HF_PART}$")


def is_hf_id(ref: str) -> bool:
    """Whether `ref` is a well-formed `Org/Name` Hub id (so it maps to one cache folder and nothing else)."""
    return bool(HF_ID.match(ref)) and "--" not in ref and ".." not in ref


@dataclass(frozen=True, kw_only=True)
class Upload:
    """A config.json sent with the request, under the request field that carried it."""

    field: str
    config: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class ModelSourcePolicy:
    """What a server resolves a model reference to: catalog ids always; Hub ids through the local HF cache when
    `allow_hf_cache`; paths only when they resolve (symlinks followed) below one of `allowed_dirs`."""

    allowed_dirs: tuple[Path, ...] = ()
    allow_hf_cache: bool = True

    @classmethod
    def of(cls, dirs: Iterable[str | Path] = (), *, allow_hf_cache: bool = True) -> "ModelSourcePolicy":
        """A policy from operator input: each directory must exist; it is kept as its real path."""
        real = []
        for d in dirs:
            path = Path(os.path.realpath(Path(d).expanduser()))
            if not path.is_dir():
                raise BadInput(f"--allow-path {d}: not a directory")
            real.append(path)
        return cls(allowed_dirs=tuple(real), allow_hf_cache=allow_hf_cache)

    def roots(self) -> tuple[Path, ...]:
        """Directories a path may resolve below: the allowed ones, and the HF cache when it is allowed."""
        cache = tuple(Path(os.path.realpath(d)) for d in hf_cache_dirs()) if self.allow_hf_cache else ()
        return self.allowed_dirs + cache

    def admits(self, path: Path) -> bool:
        """`path` (relative to the working directory, never `~`-expanded) resolves below an allowed root."""
        try:
            real = Path(os.path.realpath(path))
        except (ValueError, OSError):  # an embedded NUL, a name the OS refuses
            return False
        return any(real == root or real.is_relative_to(root) for root in self.roots())

    def _found(self, path: Path) -> bool:
        """An admitted path that exists (a name too long to stat counts as missing)."""
        try:
            return self.admits(path) and path.exists()
        except (ValueError, OSError):
            return False

    def resolve(self, ref: str, uploads: Mapping[str, Upload]) -> ConfigSource:
        """The config `ref` names under this policy, or one not-found answer for everything refused or missing."""
        if ref in uploads:
            up = uploads[ref]
            return ConfigSource(ref=ref, config=parse_config_text(json.dumps(up.config), origin=up.field),
                                hf_quant_config=None, origin=up.field, checkpoint_dir=None)
        entry = cat.lookup(ref)
        if entry is not None:
            return from_catalog(ref, entry)
        if self.allow_hf_cache and is_hf_id(ref):
            cached = hf_cache_snapshot(ref)
            if cached is not None:
                return self._local(ref, cached, f"hf-cache:{ref}")
        if ref and self.roots():
            path = Path(ref)
            if self._found(path):
                return self._local(ref, path, ref)
        raise BadInput(f"model {ref!r} not found: not in the bundled catalog (GET /api/models), not in this server's "
                       "Hugging Face cache, and not a path this server allows (hybridplan serve --allow-path DIR); "
                       "or send its config.json as `config`")

    def _local(self, ref: str, path: Path, origin: str) -> ConfigSource:
        """A file or checkpoint directory already admitted; the config files it opens must resolve inside too."""
        config = path if path.is_file() else path / "config.json"
        for f in (config, config.with_name("hf_quant_config.json")):
            if f.exists() and not self.admits(f):
                raise BadInput(f"{ref}: {f.name} resolves outside the directories this server allows")
        if path.is_dir():
            for f in _weight_files(path):  # read only when an answer needs the bytes; refused before any is opened
                if not self.admits(f):
                    raise BadInput(f"{ref}: {f.name} resolves outside the directories this server allows")
        if path.is_file():
            src = from_file(ref, path)
            return ConfigSource(ref=ref, config=src.config, hf_quant_config=src.hf_quant_config, origin=origin,
                                checkpoint_dir=src.checkpoint_dir)
        return read_dir(ref, path, origin)

    def resolver(self, uploads: Mapping[str, Upload] | None = None) -> Callable[[str], ConfigSource]:
        """The resolver `resolving_with` takes: this policy plus one request's uploaded configs."""
        table = dict(uploads or {})
        return lambda ref: self.resolve(ref, table)


def _weight_files(directory: Path) -> Iterator[Path]:
    """The safetensors shards and index a checkpoint directory holds (weights/headers.py reads these), at most
    MAX_WEIGHT_FILES + 1 of them: the weights reader refuses a directory with more."""
    found = 0
    with os.scandir(directory) as entries:
        for e in entries:
            if e.name.endswith((".safetensors", ".safetensors.index.json")):
                yield directory / e.name
                found += 1
                if found > MAX_WEIGHT_FILES:
                    return


@contextmanager
def model_sources(policy: ModelSourcePolicy, uploads: Mapping[str, Upload] | None = None) -> Iterator[None]:
    """Resolve every model reference in this context through `policy` (and the request's `uploads`)."""
    with resolving_with(policy.resolver(uploads)):
        yield
