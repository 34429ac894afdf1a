"""Cookbook pages: declarative deployment recipes (data), rendered into launch commands and validated against
the engine model.

Public API (what the CLI and the web page call):
  * `load_page(ref) -> Page`: a bundled page by id (`bundled_ids()`) or a page file; BadInput with file:line.
  * `cookbook.render.render(page, picks, *, docker, placeholders, delta, pin_ratio) -> Rendered`;
    `Rendered.as_dict()` is the `cookbook render --json` payload (selection, reseated, flags, env, command, badge,
    warnings, options, ratio...).
  * `resolve_selection(page, picks)`: where a set of picks lands and why picks moved.
  * `cookbook.matrix.matrix(page) -> dict`: every reachable selection rendered; `page_summary(page)`.
  * `check_paths(paths) -> Report` (exit_code 0/1/2), `check_text(text, origin)`.
  * `export_json(page)`, `export_markdown(page)`.

Every name is imported on first use: a submodule (record_evidence for a verdict's confidence) must not pay for the
schema, the renderer and the matrix. `render` and `matrix` are only their submodules (a lazy name that is also a
submodule would be shadowed by it once imported).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hybridplan.cookbook.export import export_json, export_markdown
    from hybridplan.cookbook.matrix import page_summary, selection_space
    from hybridplan.cookbook.pages import bundled_ids, load_page
    from hybridplan.cookbook.render import Delta, Rendered, resolve_selection
    from hybridplan.cookbook.schema import Page
    from hybridplan.cookbook.validate import Finding, Report, check_paths, check_text

_LAZY = {"export_json": "export", "export_markdown": "export", "page_summary": "matrix", "selection_space": "matrix",
         "bundled_ids": "pages", "load_page": "pages", "Delta": "render", "Rendered": "render",
         "resolve_selection": "render", "Page": "schema", "Finding": "validate", "Report": "validate",
         "check_paths": "validate", "check_text": "validate"}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)


__all__ = ["Delta", "Finding", "Page", "Rendered", "Report", "bundled_ids", "check_paths", "check_text",
           "export_json", "export_markdown", "load_page", "page_summary", "resolve_selection", "selection_space"]
