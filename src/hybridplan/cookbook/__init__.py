"""Cookbook pages: declarative deployment recipes (data), rendered into launch commands and validated against
the engine model.

Public API (what the CLI and the web page call):
  * `load_page(ref) -> Page`: a bundled page by id (`bundled_ids()`) or a page file; BadInput with file:line.
  * `render(page, picks, *, docker, placeholders, delta, pin_ratio) -> Rendered`; `Rendered.as_dict()` is the
    `cookbook render --json` payload (selection, reseated, flags, env, command, badge, warnings, options, ratio...).
  * `resolve_selection(page, picks)`: where a set of picks lands and why picks moved.
  * `matrix(page) -> dict`: every reachable selection rendered; `page_summary(page)`.
  * `check_paths(paths) -> Report` (exit_code 0/1/2), `check_text(text, origin)`.
  * `export_json(page)`, `export_markdown(page)`.
"""

from importlib import import_module

from hybridplan.cookbook.matrix import matrix, page_summary, selection_space
from hybridplan.cookbook.pages import bundled_ids, load_page
from hybridplan.cookbook.render import Delta, Rendered, render, resolve_selection
from hybridplan.cookbook.schema import Page

# imported on first use: rendering a page (`cookbook render/matrix`, the web) needs neither the checker nor the
# exporters. Names that are also submodules (matrix, render) stay eager: a submodule import would shadow them.
_LAZY = {"export_json": "export", "export_markdown": "export", "Finding": "validate", "Report": "validate",
         "check_paths": "validate", "check_text": "validate"}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)

__all__ = ["Delta", "Finding", "Page", "Rendered", "Report", "bundled_ids", "check_paths", "check_text",
           "export_json", "export_markdown", "load_page", "matrix", "page_summary", "render", "resolve_selection",
           "selection_space"]
