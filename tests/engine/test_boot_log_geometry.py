"""Real boot logs as geometry checks: the logged state and KV sizes follow from K, T and the config alone."""

from __future__ import annotations

import json
import re

from hybridplan.engine.sglang.logs import state_allocation
from hybridplan.engine.sglang.sizing import kv_bytes_allocated, size_pools
from tests.conftest import FIXTURES, resolve_cmd

GIB = 1 << 30


def test_qwen35_9b_tp2_rtx4090_state_and_kv_sizes():
    log = (FIXTURES / "logs" / "qwen3.5-9b-tp2-rtx4090.log").read_text()
    meta = json.loads((FIXTURES / "logs" / "qwen3.5-9b-tp2-rtx4090.log.json").read_text())
    K, conv_gb, ssm_gb = re.search(r"max_mamba_cache_size: (\d+), conv_state size: ([\d.]+)GB, ssm_state size: ([\d.]+)GB",
                                   log).groups()
    T, k_gb = re.search(r"#tokens: (\d+), K size: ([\d.]+) GB", log).groups()
    command = meta["launch"]["command_verbatim"].split("2>&1")[0]
    # pin K to the logged value: the allocation then depends only on the geometry
    args, geo, draft = resolve_cmd(command + f" --max-mamba-cache-size {K}")
    assert args["tp_size"] == 2 and args["attn_tp_size"] == 2
    s = size_pools(9.4, args, geo, draft)
    alloc = state_allocation(s, args, geo)
    assert f"{alloc.conv_bytes / GIB:.2f}" == conv_gb
    assert f"{alloc.ssm_bytes / GIB:.2f}" == ssm_gb
    assert f"{kv_bytes_allocated(int(T), args, geo, s.cell.layers) / 2 / GIB:.2f}" == k_gb


def test_mi355x_refusal_reports_the_same_slot_size():
    log = (FIXTURES / "logs" / "qwen3.8-27b-fp8-mi355x-state-cache-failure.log").read_text()
    per_req_mb = re.search(r"mamba_cache_per_req=([\d.]+) MB", log).group(1)
    args, geo, _ = resolve_cmd("--model-path Qwen/Qwen3.8-27B-FP8 --mem-fraction-static 0.25")
    assert f"{geo.state_bytes_per_slot(1, args['mamba_ssm_dtype_resolved']) / (1 << 20):.2f}" == per_req_mb
