"""Does the evidence back a selection's badge? The verdict's confidence for its Deploy command on its card, from the
measured launches the caller hands in (the same source `explain --gpu` and the web's Memory picture read), so the
badge and the confidence shown beside it cannot disagree unsaid.

A "Verified" badge claims the command was measured: the evidence backs it when the confidence is "measured" (a
launch of this command on this card under the page's release: a record, or a cell's measurement covering the
selection). Otherwise the answer says so, with the confidence it does have. "In progress" and "Not verified" claim
no measurement, so any confidence backs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hybridplan.cookbook import engine_view
from hybridplan.errors import HybridPlanError

if TYPE_CHECKING:
    from hybridplan.cookbook.schema import Page
    from hybridplan.evidence import EvidenceSource

CLAIMS_MEASURED = ("verified",)


def badge_evidence(page: Page, hw_id: str, flags: tuple[str, ...], env: tuple[str, ...], badge: str,
                   evidence: EvidenceSource) -> dict[str, Any] | None:
    """{"level", "note", "basis", "backs_badge", "says"} for a rendered command (placeholders filled) on the card of
    its hardware choice; None when that choice names no catalog card to size it on."""
    from hybridplan.engine.api import for_loaded, for_version, predict
    from hybridplan.hardware.catalog import lookup

    gpu = next(h.gpu for h in page.hardware if h.id == hw_id)
    if gpu is None:
        return None
    card = lookup(gpu)
    loaded = engine_view.resolve(engine_view.sized_command(flags, env, {}), page.engine_version, card.platform())
    claims = badge in CLAIMS_MEASURED
    if isinstance(loaded, HybridPlanError):
        return _answer(None, "", [], claims, f"the engine model cannot size this command on {card.name} "
                                           f"({loaded.message}), so no measured launch can back it")
    try:
        tl, _ = for_loaded(loaded, gpu=card)
    except HybridPlanError as exc:
        return _answer(None, "", [], claims, f"the engine model cannot lay this command out on {card.name} "
                                           f"({exc.message})")
    conf = predict(loaded, tl, request_tokens=1, gpu=card, evidence=evidence(for_version(loaded.version).name, card, loaded.version)).confidence
    assert conf is not None  # a catalog card always gets one
    return _answer(conf.level, conf.note, list(conf.basis), claims,
                   f"no measured launch of this command on {card.name} under sglang {loaded.version}: the "
                   f"evidence is {conf.level} ({conf.note})")


def _answer(level: str | None, note: str, basis: list[str], claims: bool, why: str) -> dict[str, Any]:
    backs = not claims or level == "measured"
    return {"level": level, "note": note, "basis": basis, "backs_badge": backs,
            "says": None if backs else f"Verified by the page, but {why}."}
