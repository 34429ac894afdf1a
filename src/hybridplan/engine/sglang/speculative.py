"""Speculative-decoding resolution of sglang 0.5.23 (arg_groups/speculative_hook.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hybridplan.engine.sglang import archs

if TYPE_CHECKING:
    from hybridplan.engine.sglang.resolver import Resolver

HOOK = "arg_groups/speculative_hook.py"
MRR_RESET = ("Max running requests is reset to 48 for speculative decoding. You can override this by "
             "explicitly setting --max-running-requests.")
DEFAULT_DSPARK_GAMMA = 7  # speculative/dspark_components/dspark_config.py::DEFAULT_DSPARK_GAMMA


def _default_mrr(r: Resolver, handler: str) -> None:
    if r["max_running_requests"] is None:
        r.set(f"{HOOK}::{handler}", max_running_requests=48)
        r.notes.append(MRR_RESET)


def _force_one(r: Resolver, algo: str, name: str) -> None:
    """DFLASH / DSPARK force steps and topk to 1 (warning when the user set something else)."""
    handler = f"{HOOK}::_handle_{algo.lower()}"
    if r[name] is None:
        r.set(handler, **{name: 1})
    elif int(r[name]) != 1:
        r.notes.append(f"{'DSpark' if algo == 'DSPARK' else algo} only supports {name} == 1; "
                       f"overriding {name}={r[name]} to 1.")
        r.set(handler, **{name: 1})


def resolve_speculative(r: Resolver) -> None:
    """handle_speculative_decoding: upper-case, resolve the NEXTN alias, dispatch to the algorithm's handler."""
    algo = r["speculative_algorithm"]
    if algo is None:
        return
    name = str(algo).upper()
    name = archs.SPEC_ALIASES.get(name, name)
    if name not in archs.SPEC_ALGORITHMS:
        raise r.refuse(f"Unknown speculative algorithm name: {str(algo).upper()}",
                       "speculative/spec_info.py::SpeculativeAlgorithm.from_string")
    if name != algo:
        r.set(f"{HOOK}::_resolve_speculative_algorithm_alias", speculative_algorithm=name)
    if r["speculative_adaptive"]:
        r.notes.append("--speculative-adaptive: the state pool allocates for the largest candidate; "
                       "the reservation is priced at the resolved D")
    handler = {
        "DFLASH": _dflash, "DSPARK": _dspark, "UNO": _uno, "NGRAM": _ngram,
        "EAGLE": _eagle, "EAGLE3": _eagle, "STANDALONE": _eagle, "FROZEN_KV_MTP": _eagle,
    }[name]
    handler(r, name)


def _eagle(r: Resolver, name: str) -> None:
    """_handle_eagle_family: mrr 48, auto (steps, topk, D), D = steps + 1 when topk == 1."""
    rule = f"{HOOK}::_handle_eagle_family"
    if name == "STANDALONE" and r["attn_dp_size"] > 1:
        raise r.refuse("Currently standalone speculative decoding does not support dp attention.", rule)
    _default_mrr(r, "_handle_eagle_family")
    if r["disable_overlap_schedule"]:
        r.notes.append("Non-overlap (synchronous) spec v2 is used for eagle/eagle3/standalone speculative decoding.")
    if r["speculative_draft_model_path"] is None and r.geo.architecture in archs.EAGLE_DRAFT_IS_MODEL:
        r.set(rule, speculative_draft_model_path=r["model_path"])
    if not r["speculative_adaptive"] and r["speculative_num_steps"] is None:
        if r["speculative_eagle_topk"] is not None or r["speculative_num_draft_tokens"] is not None:
            raise r.refuse("assert speculative_eagle_topk is None and speculative_num_draft_tokens is None "
                           "(set --speculative-num-steps together with them)", rule, "AssertionError")
        if name == "STANDALONE":
            steps, topk, draft = archs.EAGLE_AUTO_DEFAULT
        else:
            steps, topk, draft = archs.EAGLE_AUTO_PARAMS.get(r.geo.architecture, archs.EAGLE_AUTO_DEFAULT)
        r.set(f"{rule}.auto_params", speculative_num_steps=steps, speculative_eagle_topk=topk,
              speculative_num_draft_tokens=draft)
    elif r["speculative_adaptive"]:
        if r["speculative_eagle_topk"] is None:
            r.set(f"{HOOK}::_init_adaptive_speculative_params", speculative_eagle_topk=1)
        if r["speculative_num_steps"] is None:
            raise r.refuse("--speculative-adaptive without --speculative-num-steps needs the adaptive config's "
                           "candidate steps, which hybridplan does not read; set --speculative-num-steps",
                           f"{HOOK}::_init_adaptive_speculative_params")
        r.set(f"{HOOK}::_init_adaptive_speculative_params", speculative_num_draft_tokens=r["speculative_num_steps"] + 1)
    if r["speculative_eagle_topk"] is None:
        raise r.refuse("'>' not supported between instances of 'NoneType' and 'int' "
                       "(--speculative-num-steps without --speculative-eagle-topk)", rule, "TypeError")
    if r["speculative_eagle_topk"] == 1 and r["speculative_num_draft_tokens"] != r["speculative_num_steps"] + 1:
        r.notes.append("speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1")
        r.set(rule, speculative_num_draft_tokens=r["speculative_num_steps"] + 1)
    if r["speculative_eagle_topk"] > 1 and r["attention_backend"] == "trtllm_mha":
        raise r.refuse("trtllm_mha backend only supports topk = 1 for speculative decoding.", rule)


def _dflash(r: Resolver, name: str) -> None:
    """_handle_dflash: needs a draft path, pp 1; D from the block-size flag, the draft config, else 16."""
    rule = f"{HOOK}::_handle_dflash"
    if r.platform.device not in ("cuda", "npu", "xpu"):
        raise r.refuse(f"DFLASH speculative decoding is not supported on device {r.platform.device!r}.", rule)
    npu_spared = r.sw.dflash_attn_dp_npu_exempt and r.platform.device == "npu"
    if r["attn_dp_size"] > 1 and not npu_spared:
        if not r.sw.dflash_with_attn_dp:  # before 0.5.23: refused outright
            raise r.refuse("Currently DFLASH speculative decoding does not support dp attention"
                           + (" on non-NPU devices." if r.sw.dflash_attn_dp_npu_exempt else "."), rule)
        if not r["enable_dp_lm_head"]:
            raise r.refuse("DFLASH with dp attention requires --enable-dp-lm-head.", rule)
    if r["pp_size"] != 1:
        raise r.refuse("Currently DFLASH speculative decoding only supports pp_size == 1.", rule)
    if r["speculative_draft_model_path"] is None:
        raise r.refuse("DFLASH speculative decoding requires setting --speculative-draft-model-path.", rule)
    _force_one(r, "DFLASH", "speculative_num_steps")
    _force_one(r, "DFLASH", "speculative_eagle_topk")
    block = r["speculative_dflash_block_size"]
    if block is not None:
        if int(block) <= 0:
            raise r.refuse(f"DFLASH requires --speculative-dflash-block-size to be positive, got {block}.", rule)
        d = r["speculative_num_draft_tokens"]
        if d is not None and int(d) != int(block):
            raise r.refuse("Both --speculative-num-draft-tokens and --speculative-dflash-block-size are set but they "
                           f"differ. For DFLASH they must match. speculative_num_draft_tokens={d}, "
                           f"speculative_dflash_block_size={block}.", rule)
        r.set(rule, speculative_num_draft_tokens=int(block))
    if r["speculative_num_draft_tokens"] is None:
        inferred = r.draft.block_size if r.draft is not None else None
        if inferred is None:
            inferred = 16
            r.notes.append("speculative_num_draft_tokens is not set; defaulting to 16 for DFLASH.")
            r.set(rule, speculative_num_draft_tokens=inferred)
        else:
            r.set(f"{rule} (draft config block_size)", speculative_num_draft_tokens=inferred)
    _default_mrr(r, "_handle_dflash")


def _dspark(r: Resolver, name: str) -> None:
    """_handle_dspark: D = gamma + 1, gamma from the flag, else the draft checkpoint, else 7."""
    rule = f"{HOOK}::_handle_dspark"
    # cfg.device is server_args.device, which get_device() resolves to "cuda" on ROCm too (utils/common.py)
    if r.platform.device not in ("cuda", "hip", "npu", "xpu"):
        raise r.refuse("DSpark speculative decoding only supports CUDA, NPU or XPU device.", rule)
    if r["attn_dp_size"] > 1 and not r["enable_dp_lm_head"]:
        raise r.refuse("DSpark with dp attention requires --enable-dp-lm-head.", rule)
    if r["pp_size"] != 1 and not r.sw.dspark_pp_on_pd_prefill:  # before 0.5.21: no PP at all
        raise r.refuse("Currently DSpark speculative decoding only supports pp_size == 1.", rule)
    if r["pp_size"] != 1 and r["disaggregation_mode"] != "prefill":
        raise r.refuse("DSpark pipeline parallelism requires PD prefill; decode and non-disaggregated serving require "
                       "pp_size == 1.", rule)
    if r["speculative_draft_model_path"] is None:
        if r.draft is None:
            raise r.refuse("DSpark dense speculative decoding requires setting --speculative-draft-model-path.", rule)
        r.set(f"{rule} (the target checkpoint's dspark/ subfolder)", speculative_draft_model_path=r.draft.source)
    _force_one(r, "DSPARK", "speculative_num_steps")
    _force_one(r, "DSPARK", "speculative_eagle_topk")
    gamma = None
    gamma_source = ""
    if r["speculative_dspark_block_size"] is not None:
        if int(r["speculative_dspark_block_size"]) <= 0:
            raise r.refuse("DSpark requires --speculative-dspark-block-size to be positive, "
                           f"got {r['speculative_dspark_block_size']}.", rule)
        gamma, gamma_source = int(r["speculative_dspark_block_size"]), "--speculative-dspark-block-size"
    else:
        if r.draft is not None and r.draft.dspark_gamma is not None:
            gamma, gamma_source = int(r.draft.dspark_gamma), "draft config block size"
        if gamma is None and r["speculative_num_draft_tokens"] is None:
            gamma, gamma_source = DEFAULT_DSPARK_GAMMA, "DEFAULT_DSPARK_GAMMA"
            r.notes.append(f"DSpark gamma is not set; defaulting to {gamma}.")
    if gamma is not None:
        window = gamma + 1
        d = r["speculative_num_draft_tokens"]
        if d is not None and int(d) != window:
            raise r.refuse(f"DSpark speculative_num_draft_tokens must equal gamma + 1 (= {window} for gamma={gamma}), "
                           f"but got speculative_num_draft_tokens={d}.", rule)
        r.set(f"{rule} (gamma={gamma} from {gamma_source}, D = gamma + 1)", speculative_num_draft_tokens=window)
    if r["speculative_num_draft_tokens"] is None:
        raise r.refuse("DSpark could not resolve speculative_num_draft_tokens; set --speculative-dspark-block-size "
                       "(= gamma).", rule)
    if int(r["speculative_num_draft_tokens"]) < 2:
        raise r.refuse("DSpark speculative_num_draft_tokens must be >= 2 (= gamma + 1), "
                       f"got {r['speculative_num_draft_tokens']}.", rule)
    _default_mrr(r, "_handle_dspark")


def _ngram(r: Resolver, name: str) -> None:
    """_handle_ngram: topk = max BFS breadth (10), D = 12, steps = D // topk; no DP attention."""
    rule = f"{HOOK}::_handle_ngram"
    if r.platform.device not in ("cuda", "cpu", "xpu"):
        raise r.refuse("Ngram speculative decoding only supports CUDA, CPU, or XPU devices.", rule)
    _default_mrr(r, "_handle_ngram")
    r.set(rule, speculative_eagle_topk=r["speculative_ngram_max_bfs_breadth"])
    if r["speculative_num_draft_tokens"] is None:
        r.set(rule, speculative_num_draft_tokens=12)
        r.notes.append("speculative_num_draft_tokens is set to 12 by default for ngram speculative decoding.")
    if r["speculative_num_steps"] is None:
        r.set(rule, speculative_num_steps=r["speculative_num_draft_tokens"] // r["speculative_eagle_topk"])
    if r["speculative_eagle_topk"] > 1 and r["page_size"] > 1 and r["attention_backend"] != "flashinfer":
        raise r.refuse(f"speculative_eagle_topk({r['speculative_eagle_topk']}) > 1 with page_size({r['page_size']}) > 1 "
                       "is unstable and produces incorrect results for paged attention backends. This combination is "
                       "only supported for the 'flashinfer' backend.", rule)
    if r["attn_dp_size"] > 1:
        raise r.refuse("Currently ngram speculative decoding does not support dp attention.", rule)


def _uno(r: Resolver, name: str) -> None:
    """_handle_uno: CUDA, TP = PP = 1, its own LoRA, an explicit D; no max-running-requests default."""
    rule = f"{HOOK}::_handle_uno"
    if r.platform.device != "cuda":
        raise r.refuse("UNO only supports CUDA.", rule)
    if r["speculative_draft_model_path"] is not None:
        raise r.refuse("UNO reuses the target model and does not accept --speculative-draft-model-path.", rule)
    if r["uno_lora_path"] is None:
        raise r.refuse("UNO requires --uno-lora-path.", rule)
    d = r["speculative_num_draft_tokens"]
    if d is None or int(d) < 1:
        raise r.refuse("UNO requires --speculative-num-draft-tokens to be a positive integer denoting the linear width "
                       "or tree verify width Q.", rule)
    if r["tp_size"] != 1 or r["pp_size"] != 1:
        raise r.refuse("UNO requires TP=PP=1.", rule)
    if r["attn_dp_size"] > 1 or r["attn_cp_size"] > 1:
        raise r.refuse("UNO does not support DP attention or context parallelism.", rule)
    if r["speculative_num_steps"] is None:
        r.set(rule, speculative_num_steps=1)
    if r["speculative_eagle_topk"] is None:
        r.set(rule, speculative_eagle_topk=1)
