"""Write src/hybridplan/engine/sglang/flag_history.json: how each sglang release's `serve` flags differ from the next.

Maintainer script (needs conformance/setup_oracle.sh and conformance/setup_releases.sh): every release's own
ServerArgs.add_cli_args is run in the oracle venv with that release first on sys.path, each flag recorded exactly
as scripts/gen_flag_registry.py records it; then, for each release a -> b, the records b added, the ones a had
that b removed, and the ones whose parsing changed (kind, nargs, type, choices, default, const, deprecated,
required, fallback; help text is ignored). The newest release must equal the committed
engine/sglang/flags.json, so the history can be applied backwards from it.
Usage: python scripts/gen_flag_history.py [--venv .oracle-venv] [--out src/hybridplan/engine/sglang/flag_history.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "src/hybridplan/engine/sglang/flags.json"
PARSE_KEYS = ("kind", "nargs", "type", "choices", "default", "default_repr", "const", "deprecated", "required",
              "fallback")

# Runs inside the oracle interpreter: the release's parser, recorded by gen_flag_registry.record.
CHILD = r"""
import importlib.abc, importlib.machinery, json, os, sys, types
for k in [k for k in os.environ if k.startswith(("SGLANG_", "SGL_"))]:
    del os.environ[k]
STUBS = ("torchvision", "sentencepiece", "gguf", "sgl_kernel", "flashinfer", "tvm_ffi")

class StubMeta(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return StubMeta(name, (object,), {})

class Stub(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return StubMeta(name, (object,), {}) if name[:1].isupper() else Stub(f"{self.__name__}.{name}")
    def __call__(self, *a, **k):
        return a[0] if len(a) == 1 and callable(a[0]) and not k else self

class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        top = name.split(".")[0]
        if top in STUBS and importlib.machinery.PathFinder.find_spec(top) is None:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None
    def create_module(self, spec):
        m = Stub(spec.name); m.__path__ = []; m.__version__ = "0.0.0"; return m
    def exec_module(self, module):
        pass

sys.meta_path.insert(0, Finder())
sys.path.insert(0, sys.argv[1])
import gen_flag_registry as g
try:
    fallbacks = g.field_fallbacks()
except ImportError:  # releases before arg_groups/fields (0.5.18, 0.5.19) declare no fallbacks
    fallbacks = {}
g.field_fallbacks = lambda: fallbacks
import sglang
data = g.registry(g.build_parser())
data["version"] = sglang.__version__
json.dump(data, sys.stdout)
"""


def releases(venv: Path) -> list[str]:
    lines = (ROOT / "conformance/releases.txt").read_text().splitlines()
    return [ln.split()[0] for ln in lines if ln.strip() and not ln.startswith("#")]


def dump(venv: Path, version: str) -> dict:
    """The release's flag registry, from its own parser."""
    paths = (venv / "releases" / version / "sys_path.txt").read_text().split()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    proc = subprocess.run([str(venv / "bin/python"), "-c", CHILD, str(ROOT / "scripts")], env=env,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"sglang {version}: {proc.stderr.strip().splitlines()[-1:]}")
    data = json.loads(proc.stdout)
    if data["version"] != version:
        raise SystemExit(f"releases/{version} imports sglang {data['version']}")
    return data


def _key(flag: dict) -> tuple:
    return flag["dest"], tuple(flag["options"])


def delta(old: dict, new: dict) -> dict:
    """What release `new` changed from `old`: records added, removed (old's), changed (old's record)."""
    a = {_key(f): f for f in old["flags"] if f["options"]}
    b = {_key(f): f for f in new["flags"] if f["options"]}
    changed = [a[k] for k in sorted(a.keys() & b.keys()) if any(a[k].get(p) != b[k].get(p) for p in PARSE_KEYS)]
    return {"from": old["version"], "to": new["version"],
            "added": [b[k] for k in sorted(b.keys() - a.keys())],
            "removed": [a[k] for k in sorted(a.keys() - b.keys())],
            "changed": changed}


def render(out: dict) -> str:
    """JSON with one flag record a line, so a regenerated history diffs by flag."""
    head = {k: v for k, v in out.items() if k != "releases"}
    lines = [json.dumps(head, ensure_ascii=False)[:-1] + ', "releases": [']
    for i, d in enumerate(out["releases"]):
        lines.append(f' {{"from": "{d["from"]}", "to": "{d["to"]}",')
        for j, part in enumerate(("added", "removed", "changed")):
            recs = [json.dumps(f, ensure_ascii=False) for f in d[part]]
            body = (",\n   ".join(recs))
            end = "]," if j < 2 else "]"
            lines.append(f'  "{part}": [' + ("\n   " + body + "\n  " if recs else "") + end)
        lines.append(" }" + ("," if i < len(out["releases"]) - 1 else ""))
    lines.append("]}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--venv", default=str(ROOT / ".oracle-venv"))
    cli.add_argument("--out", default=str(ROOT / "src/hybridplan/engine/sglang/flag_history.json"))
    args = cli.parse_args(argv)
    venv = Path(args.venv)
    versions = releases(venv)
    regs = [dump(venv, v) for v in versions]
    base = json.loads(BASE.read_text())
    newest = {_key(f): f for f in regs[-1]["flags"]}
    committed = {_key(f): f for f in base["flags"]}
    if newest.keys() != committed.keys() or any(newest[k][p] != committed[k].get(p) for k in newest
                                                 for p in PARSE_KEYS if p in newest[k]):
        raise SystemExit(f"sglang {versions[-1]}'s parser differs from {BASE.relative_to(ROOT)}: regenerate it first")
    out = {"engine": "sglang", "base": base["version"], "generator": "scripts/gen_flag_history.py",
           "allow_abbrev": {r["version"]: r["allow_abbrev"] for r in regs},
           "releases": [delta(a, b) for a, b in zip(regs, regs[1:])]}
    Path(args.out).write_text(render(out))
    sizes = ", ".join(f"{d['to']}: +{len(d['added'])} -{len(d['removed'])} ~{len(d['changed'])}" for d in out["releases"])
    print(f"wrote {args.out} ({sizes})", file=sys.stderr)


if __name__ == "__main__":
    main()
