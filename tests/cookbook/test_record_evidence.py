"""The bundled pages' records as a verdict's evidence: the light index (plain YAML, no page model) that decides which
pages a card's verdict loads must find every record the page model has, or a verdict would lose measured evidence."""

from __future__ import annotations

from hybridplan.cookbook.pages import bundled_ids, load_page
from hybridplan.cookbook.record_evidence import _points, _recorded, page_evidence
from hybridplan.hardware.catalog import catalog, lookup
from hybridplan.evidence import same_class


def test_the_index_names_every_card_a_page_records_on():
    model = {(pid, h.gpu) for pid in bundled_ids() for h in load_page(pid).hardware
             for r in load_page(pid).records if r.hw == h.id and h.gpu is not None}
    assert ("qwen3.8-27b", "rtx5090") in model
    assert model <= set(_recorded())


def test_every_card_gets_the_records_of_every_page_that_transfer_to_it():
    """What the index selects equals reading every page through the model and keeping the card's class, in order."""
    every = [p for pid in bundled_ids() for p in _points(pid)]
    for gpu in catalog():
        assert page_evidence(gpu, "0.5.23") == tuple(p for p in every if p.gpu == gpu.id or same_class(gpu, p.gpu))


def test_the_rtx5090_dflash_pin_is_measured_and_an_h200_has_no_page_records():
    five = page_evidence(lookup("rtx5090"), "0.5.23")
    pin = next(p for p in five if p.label == "qwen3.8-27b:dflash-fp32-ht-pin")
    assert (pin.outcome, pin.mem_fraction_static, pin.max_running_requests, pin.version) == ("served", 0.895, 1,
                                                                                          "1cf2b8c")
    assert page_evidence(lookup("h200"), "0.5.23") == ()
