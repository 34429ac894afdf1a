"""Stand-in modules for the packages an engine imports but never calls on the paths a driver runs (vision, kernels,
tokenizers, compiled extensions), so the engine's own code imports on a CPU-only oracle interpreter.

Runs inside the oracle interpreter (standard library only): each driver installs a StubFinder first.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Sequence
from typing import Any


class _StubMeta(type):
    """A stub class: any attribute is another stub class."""

    def __getattr__(cls, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _StubMeta(name, (object,), {})


def _takes_anything(self: object, *args: Any, **kwargs: Any) -> None:
    """A stub class's constructor."""


class StubModule(types.ModuleType):
    """Any attribute is another stub; a CamelCase one is a class (built with any arguments); calling it passes a
    decorated function through."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name[:1].isupper():  # a class that takes any arguments (vLLM 0.30.0 builds an xgrammar one at import)
            cls = _StubMeta(name, (object,), {"__module__": self.__name__, "__init__": _takes_anything})
            setattr(self, name, cls)
            return cls
        child = StubModule(f"{self.__name__}.{name}")
        child.__path__ = []
        return child

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return self


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers an import of `packages` (and their submodules) and of the exact `modules` with a StubModule.

    With `real_wins`, an installed package is imported as it is (and a real package's submodules stay real): a stub
    answers find_spec, so where an engine merely probes for a package the stub would change its choices."""

    def __init__(self, packages: Sequence[str], modules: Sequence[str] = (), *, real_wins: bool = True) -> None:
        self.packages = tuple(packages)
        self.modules = tuple(modules)
        self.real_wins = real_wins

    def find_spec(self, name: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        top = name.split(".")[0]
        if name in self.modules:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        if top not in self.packages:
            return None
        if self.real_wins and self._real(name, top):
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    @staticmethod
    def _real(name: str, top: str) -> bool:
        """Whether `name` is (part of) a package installed for real."""
        if name != top:
            return top in sys.modules and not isinstance(sys.modules[top], StubModule)
        try:
            return importlib.machinery.PathFinder.find_spec(name) is not None
        except (ImportError, ValueError):
            return False

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        mod = StubModule(spec.name)
        mod.__path__ = []
        mod.__version__ = "0.0.0"  # type: ignore[attr-defined]
        return mod

    def exec_module(self, module: types.ModuleType) -> None:
        pass
