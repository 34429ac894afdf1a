"""hybridplan: an engine-faithful model of how SGLang and vLLM lay out GPU memory for hybrid (state + KV) models.

The public Python API is what `__all__` lists (semantic versioning, `__version__`): the calls `explain`, `plan`,
`compare`, `check_log` and `preflight`, their typed results and the errors they raise. Every module under
`hybridplan` is private and may change in any release. The names load on first use, so `import hybridplan` stays
cheap (tests/test_import_graph.py).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from hybridplan.version import __version__ as __version__

# each public name -> the module that defines it
_PUBLIC = {
    "explain": "hybridplan.api.calls",
    "plan": "hybridplan.api.calls",
    "compare": "hybridplan.api.calls",
    "check_log": "hybridplan.api.calls",
    # "fleet": "hybridplan.api.calls",  (joins the calls once `hybridplan fleet` lands)
    "preflight": "hybridplan.api.preflight",
    "Explanation": "hybridplan.api.results",
    "Plan": "hybridplan.api.results",
    "Comparison": "hybridplan.api.results",
    "LogCheck": "hybridplan.api.results",
    "Verdict": "hybridplan.api.results",
    "Preflight": "hybridplan.api.preflight",
    "HybridPlanError": "hybridplan.errors",
    "BadInput": "hybridplan.errors",
    "EngineRefusal": "hybridplan.errors",
}

__all__ = ["__version__", *_PUBLIC]

if TYPE_CHECKING:
    from hybridplan.api.calls import check_log as check_log, compare as compare, explain as explain, plan as plan
    from hybridplan.api.preflight import Preflight as Preflight, preflight as preflight
    from hybridplan.api.results import (Comparison as Comparison, Explanation as Explanation, LogCheck as LogCheck,
                                        Plan as Plan, Verdict as Verdict)
    from hybridplan.errors import BadInput as BadInput, EngineRefusal as EngineRefusal
    from hybridplan.errors import HybridPlanError as HybridPlanError


def __getattr__(name: str) -> Any:
    """A public name, imported from its module when first asked for."""
    if name in _PUBLIC:
        return getattr(import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
