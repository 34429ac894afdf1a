"""The public boot-log data set loads, cites every number, and its numbers agree with each other."""

from __future__ import annotations

import pytest
import yaml

from hybridplan.errors import BadInput
from hybridplan.hardware.catalog import catalog
from hybridplan.calibration.public_logs import PHASES, load, parse

LOGS = load()
CARD_IDS = {g.id for g in catalog()}
MIN_RECORDS = 28  # the issue-10 target is 25; raise this as records are added


def test_enough_records_on_enough_cards():
    assert len(LOGS.records) >= MIN_RECORDS
    assert len({r.gpu for r in LOGS.records}) >= 6


def test_every_record_has_a_link_and_a_catalog_card():
    for r in LOGS.records:
        assert r.url.startswith(("https://", "shared/data/logs/")), r.id
        assert r.gpu in CARD_IDS, r.id


def test_ids_are_unique():
    ids = [r.id for r in LOGS.records]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("r", LOGS.records, ids=lambda r: r.id)
def test_values_are_consistent(r):
    v = r.values
    if v.load_begin_avail_gib is not None and v.load_end_avail_gib is not None and v.weights_gib is not None:
        assert abs((v.load_begin_avail_gib - v.load_end_avail_gib) - v.weights_gib) <= 0.1
    if v.torch_total_gib is not None and v.load_begin_avail_gib is not None:
        assert v.torch_total_gib >= v.load_begin_avail_gib
    if v.load_end_avail_gib is not None and v.pool_end_avail_gib is not None:
        assert v.pool_end_avail_gib < v.load_end_avail_gib
    if v.max_total_num_tokens is not None and v.kv_tokens is not None:
        assert v.max_total_num_tokens <= v.kv_tokens
    for c in v.captures:
        if c.avail_gib is not None and v.pool_end_avail_gib is not None:
            assert c.avail_gib <= v.pool_end_avail_gib
    if v.mem_fraction_static is not None:
        assert 0 < v.mem_fraction_static < 1
    assert v.failure is None or v.failure in PHASES
    if r.tp is not None and r.gpu_count is not None:
        assert r.tp <= r.gpu_count


def test_card_facts_cite_records_on_that_card():
    by_id = {r.id: r for r in LOGS.records}
    for fact in LOGS.card_facts:
        for src in fact.torch_total_gib:
            for rid in src.records:
                assert by_id[rid].gpu == fact.gpu
                if by_id[rid].values.torch_total_gib is not None:
                    assert by_id[rid].values.torch_total_gib == src.value


def test_catalog_memory_total_exceeds_torch_total():
    """nvidia-smi memory.total (MiB) is at least what torch reports as the card's total."""
    mib = {g.id: g.memory_mib for g in catalog()}
    for r in LOGS.records:
        if r.values.torch_total_gib is not None:
            assert mib[r.gpu] / 1024 >= r.values.torch_total_gib - 0.01, r.id


def _raw():
    from importlib import resources

    return yaml.safe_load((resources.files("hybridplan") / "data" / "boot_logs.yaml").read_text())


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda d: d["records"][0].update(gpu="gtx-9999"), "gpu"),
        (lambda d: d["records"][0]["values"].update(weight_gib=1.0), "weight_gib"),
        (lambda d: d["records"][0]["values"].update(failure="boot"), "failure"),
        (lambda d: d["records"][1].update(id=d["records"][0]["id"]), "used twice"),
        (lambda d: d["records"][0].update(url="ftp://x"), "url"),
        (lambda d: d["records"][0]["values"].update(kv_tokens=1.5), "kv_tokens"),
    ],
)
def test_bad_data_names_the_field(mutate, field):
    data = _raw()
    mutate(data)
    with pytest.raises(BadInput, match=field):
        parse(data)

