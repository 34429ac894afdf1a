"""Engine side of the conformance suite: drives sglang's own code on CPU with stand-in runtime contexts.

Executed by the *oracle* interpreter (a venv with sglang and CPU torch), never imported by hybridplan:
`python launch.py sglang < scenarios.jsonl > results.jsonl`. One JSON scenario per input line, one JSON
result per output line; the first output line is a header naming the engine version (or why there is none).

Stand-ins, each the smallest the engine's code needs to run off a GPU:
- import-only modules the sized code never calls (vision, kernels, tokenizers) are empty stub modules;
- torch.cuda answers as one sm90 GPU of the scenario's `gpu_mib` MiB (default ORACLE_GPU_MIB), so platform
  detection and the memory defaults take their CUDA paths; nvidia-smi is never asked (the engine's own fallback
  to torch.cuda.mem_get_info answers, as on a machine without it), so a real GPU cannot leak in;
- the memory profile (free memory `available_gib`) is the scenario's, and the PP MIN collective is a
  MIN over the stages computed in-process.
Everything else (argument resolution, ModelConfig, mambaish_config, the pool configurators) is the engine's.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import sys
import types
from typing import TYPE_CHECKING, Any

# relative: the oracle interpreter imports this package as launch.py's private package (it has no hybridplan)
from ..stubs import StubFinder

if TYPE_CHECKING:  # the typed boundary with hybridplan (hybridplan reads the answers through it)
    from .schema import Header, OracleError, Result, ScenarioPayload

# Import-only dependencies: imported at module level by sglang/transformers, never called on the sizing paths.
STUB_PACKAGES = ("torchvision", "tvm_ffi", "sentencepiece", "gguf", "sgl_kernel")
# Per release, import-only packages its modules import unconditionally (stubbed only there: a stub answers
# find_spec, so where the engine merely probes for a package the stub would change its choices).
RELEASE_STUBS: dict[str, tuple[str, ...]] = {v: ("flashinfer",) for v in ("0.5.18", "0.5.19", "0.5.20", "0.5.21", "0.5.22")}
GPU_MIB = int(os.environ.get("ORACLE_GPU_MIB", "143771"))  # the stand-in GPU of a scenario that names none
_GPU = {"mib": GPU_MIB}  # the stand-in GPU of the scenario being run

RESOLVED_FIELDS = (
    "mamba_radix_cache_strategy", "disable_overlap_schedule", "disable_radix_cache", "speculative_algorithm",
    "speculative_num_draft_tokens", "speculative_num_steps", "speculative_eagle_topk", "max_running_requests",
    "page_size", "mamba_ssm_dtype", "kv_cache_dtype", "context_length", "chunked_prefill_size",
    "max_mamba_cache_size", "mamba_full_memory_ratio", "mem_fraction_static",
)
BRANCH_BY_SOURCE = {
    "mamba_pool.per_dp_shard": "max_mamba_cache_size",
    "mamba_pool.from_max_running_requests": "max_running_requests",
    "mamba_pool.memory_budget_spec": "ratio",
    "mamba_pool.memory_budget": "ratio",
}


def _fake_cuda(torch) -> None:
    """torch.cuda as one sm90 GPU with _GPU["mib"] MiB, all of it free."""

    def props(*a, **k):
        return types.SimpleNamespace(name="NVIDIA H200", major=9, minor=0, total_memory=_GPU["mib"] << 20,
                                     multi_processor_count=132)

    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 1
    torch.cuda.get_device_capability = lambda *a, **k: (9, 0)
    torch.cuda.get_device_name = lambda *a, **k: "NVIDIA H200"
    torch.cuda.get_device_properties = props
    torch.cuda.mem_get_info = lambda *a, **k: (_GPU["mib"] << 20, _GPU["mib"] << 20)
    torch.cuda.current_device = lambda: 0
    torch.cuda.set_device = lambda *a, **k: None
    torch.version.cuda = torch.version.cuda or "12.9"


def _dtype_name(dtype) -> str | None:
    return None if dtype is None else str(dtype).replace("torch.", "")


def _plain(value):
    """JSON-safe: enums and dtypes by name."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    name = getattr(value, "value", None)
    if isinstance(name, (str, int)):
        return name
    return str(value).replace("torch.", "")


def _error(stage: str, exc: BaseException) -> OracleError:
    if os.environ.get("ORACLE_TRACEBACK"):
        import traceback

        traceback.print_exception(exc, file=sys.stderr)
    if isinstance(exc, SystemExit):
        return {"stage": stage, "type": "SystemExit", "message": "argparse error"}
    return {"stage": stage, "type": type(exc).__name__, "message": str(exc)}


class Engine:
    """The engine's modules, imported once (the names below are set from __init__'s imports)."""

    resolution_result: Any
    mambaish_config: Any
    LoadConfig: Any
    AttentionArch: Any
    ModelConfig: Any
    get_pp_indices: Any
    kvc_mod: Any
    kv_cache_dtype: Any
    is_post_capture_kv_active: Any
    ModelLayerInfo: Any
    resolve_spec_aux_hidden_state_config: Any
    create_memory_pool_configurator: Any
    rc: Any
    prepare_server_args: Any
    SpeculativeAlgorithm: Any

    def __init__(self):
        import torch

        _fake_cuda(torch)
        logging.disable(logging.CRITICAL)
        import sglang
        from sglang.srt.utils import common

        # utils/common.py::get_nvgpu_memory_capacity without nvidia-smi: its own torch.cuda fallback
        common.get_nvgpu_memory_capacity = lambda: common._cuda_mem_fallback("oracle: stand-in GPU")
        try:
            from sglang.srt.arg_groups.overrides import resolution_result
        except ImportError:  # 0.5.18: server_args.py::__post_init__ ends in overrides.py::materialize_declarations,
            # which writes every resolved value onto its field (there is no resolution_result or resolve_once)
            def resolution_result(server_args, field, default=None):
                return getattr(server_args, field, default)
        from sglang.srt.configs.hybrid_arch import mambaish_config
        from sglang.srt.configs.load_config import LoadConfig
        from sglang.srt.configs.model_config import AttentionArch, ModelConfig
        from sglang.srt.distributed.utils import get_pp_indices
        from sglang.srt.mem_cache import kv_cache_configurator as kvc_mod
        from sglang.srt.mem_cache import kv_cache_dtype
        from sglang.srt.model_executor.model_runner_components.kv_pool_runtime import is_post_capture_kv_active
        from sglang.srt.model_executor.model_runner_components.layer_setup import ModelLayerInfo
        from sglang.srt.model_executor.model_runner_components.spec_aux_hidden_state import (
            resolve_spec_aux_hidden_state_config,
        )
        from sglang.srt.model_executor.pool_configurator import create_memory_pool_configurator
        from sglang.srt import runtime_context as rc
        from sglang.srt.server_args import prepare_server_args
        from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

        if hasattr(kvc_mod, "get_world_group"):  # before 0.5.21 the configurator asks for the WORLD group itself
            kvc_mod.get_world_group = lambda: types.SimpleNamespace(world_size=1, cpu_group=None)
        self.torch = torch
        self.version = getattr(sglang, "__version__", "unknown")
        self.__dict__.update({k: v for k, v in locals().items() if k != "self"})

    # ------------------------------------------------------------------------------------------ one scenario

    def run(self, sc: ScenarioPayload) -> Result:
        out: Result = {"id": sc["id"]}
        try:
            server_args = self.prepare_server_args(list(sc["argv"]))
        except SystemExit as exc:  # argparse exits
            out["error"] = _error("parse", exc)
            return out
        except Exception as exc:  # 0.5.18 resolves inside server_args.py::__post_init__
            out["error"] = _error("resolve", exc)
            return out
        try:
            if hasattr(server_args, "resolve_once"):  # 0.5.19 on: resolution is a step of its own
                server_args.resolve_once()
        except Exception as exc:
            out["error"] = _error("resolve", exc)
            return out
        self.rc.publish(server_args, role="scheduler")
        # no process groups are built: the WORLD group is a handle nothing is sent over
        if hasattr(self.rc.get_parallel(), "override_permanently"):  # 0.5.20 on; older releases hold no world group
            self.rc.get_parallel().override_permanently(world_group=types.SimpleNamespace(cpu_group=None))
        out["resolved"] = {f: _plain(self.resolution_result(server_args, f, None)) for f in RESOLVED_FIELDS}
        par = self.rc.get_parallel()
        self._stamp_widths(par, server_args)
        out["resolved"].update(attn_tp_size=par.attn_tp_size, attn_dp_size=par.attn_dp_size, pp_size=par.pp_size)
        try:
            model_config = self.ModelConfig.from_server_args(server_args)
            out["geometry"] = self.geometry(model_config, sc)
        except Exception as exc:
            out["error"] = _error("model", exc)
            return out
        try:
            kvcs = self.configurators(server_args, model_config)
            out["kv"] = self.kv(kvcs)
        except Exception as exc:
            out["error"] = _error("kv", exc)
            return out
        available, pre_load = sc.get("available_gib"), sc.get("pre_load_gib")
        if available is not None:
            try:
                out["sizing"] = self.size(kvcs, available, pre_load)
            except Exception as exc:
                out["error"] = _error("sizing", exc)
                out["sizing"] = {"S": self._safe_ratio(kvcs[0])}
                return out
        try:
            self.req_pool_guards(kvcs[0])
        except Exception as exc:
            out["error"] = _error("pool", exc)
        return out

    def _stamp_widths(self, par, server_args) -> None:
        """0.5.18 and 0.5.19 answer the parallel widths only once the process groups are built: stamp (0.5.19) or
        force (0.5.18) what initialize_model_parallel would, from the engine's own arithmetic (the last scenario's
        values cleared first)."""
        sa = server_args
        if getattr(self, "stamped", False):
            par.clear_derived_widths()
        if getattr(self, "forced", False):
            par._overrides = {}
        try:
            par.attn_tp_size
            return
        except (RuntimeError, AssertionError):
            pass
        if not hasattr(par, "stamp_derived_widths"):  # 0.5.18: every width is read off the built groups
            self._override_widths_0_5_18(par, sa)
            self.forced = True
            return
        dcp = getattr(sa, "dcp_size", 1) or 1
        par.stamp_derived_widths(**self.rc.derive_parallel_widths(
            tp_size=sa.tp_size, attn_cp_size=getattr(sa, "attn_cp_size", 1) or 1,
            attn_dp_size=sa.dp_size if sa.enable_dp_attention else 1, moe_ep_size=sa.ep_size,
            moe_dp_size=getattr(sa, "moe_dp_size", 1) or 1, dcp_size=dcp, dcp_enabled=dcp > 1))
        self.stamped = True

    def _override_widths_0_5_18(self, par, sa) -> None:
        """0.5.18 reads the widths off parallel_state's groups (runtime_context.py::ParallelContext): force what
        initialize_model_parallel and layers/dp_attention.py::initialize_dp_attention would set, from the
        engine's own compute_dp_attention_world_info, on rank 0 of each group."""
        from sglang.srt.layers.dp_attention import compute_dp_attention_world_info

        cp = getattr(sa, "attn_cp_size", 1) or 1
        attn_tp_rank, attn_tp, attn_dp_rank, attn_dp = compute_dp_attention_world_info(
            sa.enable_dp_attention, 0, sa.tp_size, sa.dp_size, cp)
        moe_dp = getattr(sa, "moe_dp_size", 1) or 1
        par._overrides = dict(
            world_size=sa.tp_size * sa.pp_size, world_rank=0, tp_size=sa.tp_size, tp_rank=0, pp_size=sa.pp_size,
            pp_rank=0, attn_tp_size=attn_tp, attn_tp_rank=attn_tp_rank, attn_dp_size=attn_dp,
            attn_dp_rank=attn_dp_rank, attn_cp_size=cp, attn_cp_rank=0, moe_ep_size=sa.ep_size, moe_ep_rank=0,
            moe_dp_size=moe_dp, moe_dp_rank=0, moe_tp_size=sa.tp_size // sa.ep_size // moe_dp, moe_tp_rank=0,
            dcp_enabled=False, dcp_size=1, dcp_rank=0, attn_dcp_size=1, attn_dcp_rank=0,
            world_group=types.SimpleNamespace(cpu_group=None, world_size=sa.tp_size * sa.pp_size))

    def req_pool_guards(self, kvc) -> None:
        """The checks _build_hybrid_req_pool makes before allocating (the pool itself is a no-op stand-in)."""
        real = self.kvc_mod.HybridReqToTokenPool
        self.kvc_mod.HybridReqToTokenPool = lambda **kwargs: None
        try:
            kvc._build_hybrid_req_pool(max_num_reqs=1, extra_max_context_len=0)
        finally:
            self.kvc_mod.HybridReqToTokenPool = real

    def geometry(self, model_config, sc: ScenarioPayload) -> dict:
        """ModelConfig fields and mambaish_config(...).mamba2_cache_params."""
        mamba = self.mambaish_config(model_config)
        params = mamba.mamba2_cache_params
        return {
            "conv": [list(c) for c in params.shape.conv],
            "temporal": list(params.shape.temporal),
            "linear_layer_ids": list(params.layers),
            "full_attention_layer_ids": list(mamba.full_attention_layer_ids),
            "mamba_cache_per_req": int(params.mamba_cache_per_req),
            "replayssm_ring_bytes_per_req": int(params.replayssm_ring_bytes_per_req(record_len=sc.get("record_len", 8))),
            "conv_dtype": _dtype_name(params.dtype.conv),
            "ssm_dtype": _dtype_name(params.dtype.temporal),
            "context_len": int(model_config.context_len),
            "dtype": _dtype_name(model_config.dtype),
            "num_nextn_predict_layers": model_config.num_nextn_predict_layers,
            "is_multimodal": bool(model_config.is_multimodal),
            "quantization": model_config.quantization,
        }

    def _model_standin(self, model_config):
        """The loaded model as configure_kv_cache_dtype reads it: only its quant_config (kv_cache_quant_algo).

        The engine's own get_quant_config builds it; where a bundled checkpoint's quant files are trimmed so
        the method's from_config cannot run, it runs on the sidecar with the missing group_size filled in.
        """
        if model_config.quantization is None:
            return None
        from sglang.srt.model_loader.weight_utils import get_quant_config

        try:
            quant = get_quant_config(model_config, self.LoadConfig(), {}, None)
        except ValueError:
            quant = self._trimmed_modelopt_config(model_config)
        return types.SimpleNamespace(quant_config=quant)

    def _trimmed_modelopt_config(self, model_config):
        """ModelOpt's from_config on a bundled hf_quant_config.json that was trimmed of its group_size."""
        from sglang.srt.layers.quantization import get_quantization_config

        with open(os.path.join(model_config.model_path, "hf_quant_config.json")) as f:
            raw = json.load(f)
        raw.setdefault("quantization", {}).setdefault("group_size", 16)
        return get_quantization_config(model_config.quantization).from_config(raw)

    def configurators(self, server_args, model_config) -> list:
        """One KVCacheConfigurator per PP stage, built as ModelRunner.init_kv_cache_configurator does."""
        spec = self.rc.get_spec()
        algo = self.SpeculativeAlgorithm.from_string(spec.speculative_algorithm)
        aux = self.resolve_spec_aux_hidden_state_config(
            server_args=server_args, model_config=model_config, spec_algorithm=algo, is_draft_worker=False)
        model = self._model_standin(model_config)
        resolved, kv_dtype = self.kv_cache_dtype.configure_kv_cache_dtype(
            server_args_kv_cache_dtype=self.rc.get_model().kv_cache_dtype, model=model, model_dtype=model_config.dtype,
            is_draft_worker=False, is_dflash=algo.is_dflash_family(),
            speculative_draft_attention_backend=spec.speculative_draft_attention_backend,
            speculative_draft_kv_cache_dtype=spec.speculative_draft_kv_cache_dtype)
        par = self.rc.get_parallel()
        pp = par.pp_size
        post_capture = _call_with(self.is_post_capture_kv_active, server_args=server_args, is_draft_worker=False,
                                                       spec_algorithm=algo, token_to_kv_pool_allocator=None)
        out = []
        for rank in range(pp):
            start, end = self.get_pp_indices(model_config.num_hidden_layers, rank, pp)
            layer_info = self.ModelLayerInfo(start_layer=start, end_layer=end, num_effective_layers=end - start)
            out.append(_call_with(
                self.kvc_mod.KVCacheConfigurator, device="cuda", gpu_id=0, attn_dp_size=par.attn_dp_size, pp_size=pp,
                pp_group=None, ps=types.SimpleNamespace(attn_dp_size=par.attn_dp_size, pp_size=pp, pp_group=None),
                model=model,
                model_config=model_config, server_args=server_args, kv_cache_dtype=kv_dtype,
                kv_cache_dtype_str=resolved if resolved is not None else self.rc.get_model().kv_cache_dtype,
                model_dtype=model_config.dtype, page_size=self.rc.get_schedule().page_size,
                sliding_window_size=model_config.sliding_window_size, spec_algorithm=algo, is_draft_worker=False,
                post_capture_kv_active=post_capture, spec_aux_config=aux, is_hybrid_swa=model_config.is_hybrid_swa,
                is_hybrid_swa_compress=model_config.is_hybrid_swa_compress,
                use_mla_backend=model_config.attention_arch == self.AttentionArch.MLA, layer_info=layer_info,
                forward_stream=None, req_to_token_pool=None, token_to_kv_pool_allocator=None, memory_pool_config=None))
        return out

    def kv(self, kvcs: list) -> dict:
        """Per stage: the target cell (_compute_cell_size) and the cell with the draft KV folded in (__init__)."""
        targets, totals = [], []
        for kvc in kvcs:
            pc = self.create_memory_pool_configurator(kvc)
            mamba = self.mambaish_config(kvc.model_config)
            layers = [i for i in mamba.full_attention_layer_ids
                      if kvc.layer_info.start_layer <= i < kvc.layer_info.end_layer]
            targets.append(int(pc._compute_cell_size(kvc, len(layers))))
            totals.append(int(pc._cell_size))
        k0 = kvcs[0]
        return {"kv_torch_dtype": _dtype_name(k0.kv_cache_dtype), "target_cells": targets, "cells": totals,
                "post_capture_kv_active": bool(k0.post_capture_kv_active)}

    def _safe_ratio(self, kvc):
        try:
            return kvc._calculate_mamba_ratio()
        except Exception:
            return None

    def size(self, kvcs: list, available_gib: float, pre_load_gib: float | None) -> dict:
        """_resolve_memory_pool_config with the profile stood in: budget, K, T, max running requests."""
        kvc = kvcs[0]
        self.kvc_mod.get_available_gpu_memory = lambda *a, **k: available_gib
        S = kvc._calculate_mamba_ratio()
        log_before = len(self.rc.get_context().overrides_log())
        available_bytes = kvc._profile_available_bytes(pre_load_gib)
        sources = [s for s, _ in self.rc.get_context().overrides_log()[log_before:]]
        branch = next((BRANCH_BY_SOURCE[s] for s in sources if s in BRANCH_BY_SOURCE), None)
        K = self.rc.get_schedule().max_mamba_cache_size
        page = self.rc.get_schedule().page_size
        if len(kvcs) > 1:  # the PP MIN all-reduce of _apply_token_constraints, over this process's stages
            user = self.rc.get_schedule().max_total_tokens
            caps = []
            for k in kvcs:
                t = self.create_memory_pool_configurator(k).calculate_pool_sizes(available_bytes, page).max_total_num_tokens
                caps.append(min(t, user) if user is not None else t)
            floor = min(caps)

            def all_reduce(tensor, *a, **k):
                tensor.fill_(min(int(tensor.item()), floor))

            self.torch.distributed.all_reduce = all_reduce
        config = kvc.config_from_budget(available_bytes)
        mrr = kvc.resolve_max_num_reqs(config.max_total_num_tokens)
        return {"S": S, "K": K, "branch": branch, "kv_budget_bytes": int(available_bytes),
                "max_total_num_tokens": int(config.max_total_num_tokens), "max_running_requests": int(mrr)}


def _call_with(fn, **kwargs):
    """fn with the keyword arguments its release's signature takes (older releases take fewer)."""
    import inspect

    params = inspect.signature(fn).parameters
    return fn(**{k: v for k, v in kwargs.items() if k in params})


def _reset_env(base: dict, env: dict) -> None:
    """The process env as it started plus this scenario's variables (resolution exports some flags to the env)."""
    os.environ.clear()
    os.environ.update(base)
    os.environ.update(env)


def main() -> int:
    from importlib.metadata import PackageNotFoundError, version

    try:
        release = version("sglang")
    except PackageNotFoundError:
        release = None
    sys.meta_path.insert(0, StubFinder(STUB_PACKAGES + (RELEASE_STUBS.get(release, ()) if release else ())))
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # engine prints go to stderr; stdout carries only JSON lines
    try:
        engine = Engine()
        # the configurator's gc.collect() before it reads free memory (kv_cache_configurator.py::
        # _profile_available_bytes) walks every imported module's objects: frozen, it costs ~0 instead of ~0.2 s a
        # scenario; the stand-in GPU's numbers do not depend on it
        gc.freeze()
    except Exception as exc:  # no usable engine in this interpreter
        failed: Header = {"header": True, "engine": None, "error": f"{type(exc).__name__}: {exc}"}
        real_stdout.write(json.dumps(failed) + "\n")
        return 2
    header: Header = {"header": True, "engine": "sglang", "version": engine.version, "gpu_mib": GPU_MIB,
                      "python": sys.version.split()[0]}
    real_stdout.write(json.dumps(header) + "\n")
    real_stdout.flush()
    base_env = dict(os.environ)
    for line in sys.stdin:
        if not line.strip():
            continue
        sc: ScenarioPayload = json.loads(line)
        _reset_env(base_env, sc.get("env", {}))
        _GPU["mib"] = int(sc.get("gpu_mib") or GPU_MIB)
        try:
            result = engine.run(sc)
        except Exception as exc:  # the driver itself failed on this scenario
            result = {"id": sc["id"], "error": _error("driver", exc)}
        real_stdout.write(json.dumps(result, default=str) + "\n")
        real_stdout.flush()
    gc.unfreeze()  # so shutdown frees the engine's objects as usual
    return 0


if __name__ == "__main__":
    sys.exit(main())
