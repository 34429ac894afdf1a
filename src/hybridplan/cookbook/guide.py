"""What a docs page tells a user beside the command: the install steps for the page's build, the build warnings that
apply to a selection, the invocation examples and the accuracy commands (cookbook-semantics §2.5, §5.3, §7.6)."""

from __future__ import annotations

from typing import Any, Mapping

from hybridplan.cookbook.compose import family
from hybridplan.cookbook.conditions import evaluate
from hybridplan.cookbook.schema import Page
from hybridplan.cookbook.text import interpolate


def install(page: Page, image: str | None) -> dict[str, Any]:
    """pip from source at the pinned commit; docker: the selection's image and the commit it carries, and the image
    built at the pinned commit when the selection's image is not known to carry it."""
    ins = page.install
    carries = ins.image_commit(image)
    pinned = ins.commit
    on_pin = None if pinned is None or carries is None else _same_commit(carries, pinned)
    docker = {"image": image, "commit": carries, "carries_pin": on_pin,
              "build": [] if on_pin or pinned is None else list(ins.docker_build)}
    return {"commit": pinned, "pip": list(ins.pip), "docker": docker, "note": ins.note}


def _same_commit(a: str, b: str) -> bool:
    """Two commit ids name the same commit when one is a prefix of the other (short and full hashes)."""
    return a.startswith(b) or b.startswith(a)


def build_warnings(page: Page, sel: Mapping[str, str]) -> list[dict[str, Any]]:
    """The page's build warnings whose condition holds for the selection."""
    return [w.model_dump(mode="json", exclude_none=True, exclude={"when"}) for w in page.build_warnings
            if evaluate(w.when, sel)]


def examples(page: Page, sel: Mapping[str, str], flags: list[str], values: Mapping[str, str]) -> list[dict[str, Any]]:
    """Invocation examples for the selection: those whose condition holds and whose needed flags the command has."""
    have = {family(f) for f in flags}
    return [{"id": e.id, "title": e.title, "command": interpolate(e.command, values)} for e in page.examples
            if evaluate(e.when, sel) and all(n in have for n in e.needs)]


def accuracy(page: Page, values: Mapping[str, str]) -> list[dict[str, Any]]:
    """The page's accuracy commands (the Reproduce modal's evals) with the placeholders filled."""
    return [{"eval": name, "command": interpolate(tmpl, values)}
            for name, tmpl in page.benchmark_commands.accuracy.items()]
