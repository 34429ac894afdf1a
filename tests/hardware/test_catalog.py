"""The GPU catalog: every id the planner is asked for, memory as the engine reads it, what each card can run."""

from __future__ import annotations

import pytest

from hybridplan.errors import BadInput
from hybridplan.hardware.catalog import GPU, catalog, custom, from_options, lookup, parse

REQUIRED = ("rtx5090", "rtx4090", "rtx3090", "rtx-pro-6000", "l40s", "a100-40gb", "a100-80gb", "h100-80gb", "h200",
            "b200", "b300", "gb200", "gb300", "dgx-spark", "mi300x", "mi325x", "mi355x")


def test_every_required_card_is_there_with_its_memory_source():
    ids = {g.id for g in catalog()}
    assert set(REQUIRED) <= ids
    for g in catalog():
        assert g.memory_source in ("observed", "assumed")
        # memory.total is a little under the nominal size (the driver keeps some), never far off
        assert 0.85 < g.memory_mib * (1 << 20) / (g.nominal_gb * 1e9) < 1.12, g.id


@pytest.mark.parametrize("name,gid", [("rtx6000", "rtx-pro-6000"), ("h100", "h100-80gb"), ("H200", "h200"),
                                      ("gb10", "dgx-spark"), ("A100", "a100-80gb")])
def test_aliases(name, gid):
    assert lookup(name).id == gid


@pytest.mark.parametrize("gid,mib", [("h100-80gb", 81559), ("h200", 143771), ("b200", 183359), ("rtx5090", 32607),
                                     ("rtx-pro-6000", 97887), ("gb200", 189471), ("b300", 275040), ("mi300x", 196592)])
def test_memory_total_as_nvidia_smi_reports_it(gid, mib):
    assert lookup(gid).memory_mib == mib


def test_fp4_needs_blackwell_tensor_cores():
    assert not lookup("h200").fp4_tensor_cores and not lookup("h100").fp4_tensor_cores
    assert all(lookup(g).fp4_tensor_cores for g in ("b200", "rtx5090", "rtx-pro-6000", "dgx-spark", "gb300"))
    ok, why = lookup("h200").supports_quant("NVFP4")
    assert not ok and "FP4 tensor cores" in why
    assert lookup("h200").supports_quant("fp8") == (True, "")
    assert not lookup("rtx3090").supports_quant("fp8")[0]
    assert lookup("mi355x").supports_quant("mxfp4")[0]


def test_platform_is_what_the_engine_detects():
    p = lookup("b200").platform()
    assert (p.device, p.sm, p.gpu_memory_mib) == ("cuda", 100, 183359)
    assert lookup("mi300x").platform().device == "hip"


def test_memory_override_and_custom_card():
    g = lookup("rtx5090", memory_gib=24)
    assert g.memory_mib == 24 * 1024 and g.memory_source == "input" and g.sm == 120
    c = custom(48.5)
    assert c.memory_mib == 49664 and c.supports_quant("nvfp4")[0]
    assert from_options(None, None) is None and from_options("h200", None).id == "h200"
    with pytest.raises(BadInput):
        lookup("h200", memory_gib=-1)


def test_unknown_gpu_is_bad_input():
    with pytest.raises(BadInput, match="unknown GPU 'tpu-v5'"):
        lookup("tpu-v5")


def test_records_are_validated():
    with pytest.raises(ValueError):
        GPU(id="x", name="x", vendor="intel", device="cuda", arch="?", memory_mib=1, memory_source="observed", nominal_gb=1)
    with pytest.raises(ValueError):
        GPU(id="x", name="x", vendor="nvidia", device="cuda", arch="?", sm=7, memory_mib=1, memory_source="observed",
            nominal_gb=1)


CARD = {"id": "x1", "name": "X", "vendor": "nvidia", "device": "cuda", "arch": "?", "sm": 90, "memory_mib": 81559,
        "memory_source": "observed", "nominal_gb": 80}


def test_a_card_is_its_file_entry():
    gpus, index = parse({"gpus": [{**CARD, "aliases": ["x-one"]}]})
    assert index["x-one"] is gpus[0] and gpus[0].nominal_gb == 80.0 and isinstance(gpus[0].nominal_gb, float)
    assert gpus[0].aliases == ("x-one",)


@pytest.mark.parametrize("data,message", [
    ([CARD], "gpus.yaml: must be a mapping with `gpus`"),
    ({"gpus": [{**CARD, "memory": 1}]}, "gpus.yaml: gpus.0.memory: not a field of a card"),
    ({"gpus": [{k: v for k, v in CARD.items() if k != "memory_mib"}]}, "gpus.yaml: gpus.0.memory_mib: missing"),
    ({"gpus": [{**CARD, "memory_mib": 0}]}, "gpus.yaml: gpus.0.memory_mib: must be a positive integer, got 0"),
    ({"gpus": [{**CARD, "vendor": "intel"}]}, "gpus.yaml: gpus.0.vendor: must be one of nvidia, amd, got 'intel'"),
    ({"gpus": [{**CARD, "id": "X 1"}]}, "gpus.yaml: gpus.0.id: must be lower-case"),
    ({"gpus": [{**CARD, "nominal_gb": "80"}]}, "gpus.yaml: gpus.0.nominal_gb: must be a positive number"),
    ({"gpus": [CARD, {**CARD, "id": "x2", "aliases": ["x1"]}]}, "gpus.yaml: id or alias 'x1' is used twice"),
    ({"gpus": [{**CARD, "id": "custom"}]}, "gpus.yaml: id or alias 'custom' is used twice or reserved"),
])
def test_a_malformed_catalog_names_the_entry_and_field(data, message):
    with pytest.raises(BadInput) as exc:
        parse(data)
    assert exc.value.message.startswith(message), exc.value.message
