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

from hybridplan.cookbook.export import export_json, export_markdown
from hybridplan.cookbook.matrix import matrix, page_summary, selection_space
from hybridplan.cookbook.pages import bundled_ids, load_page
from hybridplan.cookbook.render import Delta, Rendered, render, resolve_selection
from hybridplan.cookbook.schema import Page
from hybridplan.cookbook.validate import Finding, Report, check_paths, check_text

__all__ = ["Delta", "Finding", "Page", "Rendered", "Report", "bundled_ids", "check_paths", "check_text",
           "export_json", "export_markdown", "load_page", "matrix", "page_summary", "render", "resolve_selection",
           "selection_space"]
