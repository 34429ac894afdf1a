"""Engine side of the vLLM conformance suite: drives vLLM's own KV cache planning on CPU, no GPU, no weights.

Executed by the oracle interpreter (the SGLang oracle venv's CPU torch with the vLLM release's Python files and a
few pure-Python dependencies on PYTHONPATH, see conformance/setup_vllm_oracle.sh), never imported by hybridplan:
`python vllm_oracle_driver.py < scenarios.jsonl > results.jsonl`. The first output line is a header naming the
release (or why there is none); then one JSON result per scenario. What crosses the process boundary is
vllm_oracle_schema.py's (loaded by path: the oracle interpreter has no hybridplan package): each scenario is checked
on the way in and each result on the way out. vLLM's modules are untyped; every value taken from them is `Any` here.

vLLM's own code does the work: CacheConfig (block-size default, validation), MambaModelConfig.verify_and_update_config
(prefix caching -> mamba_cache_mode, mamba_block_size), Platform._align_hybrid_block_size (attention block size
raised until its page covers the state page; the state page padded to it), the state-shape and dtype calculators,
MambaBase.get_kv_cache_spec, FullAttentionSpec, get_global_kv_cache_groups / get_kv_cache_configs (grouping,
unification, the null block, auto-fit) and get_kv_cache_capacity (the boot log's tokens and concurrency; 0.20.x
logs them from _report_kv_cache_config, whose line is read back).

Stand-ins, each the smallest those functions need: the compiled extensions and four import-only packages are stub
modules; the platform is vLLM's CudaPlatform (sm90) without probing a device; the model class the platform resolves
answers with the calculators' shapes for the scenario's geometry (its `get_mamba_state_*_from_config` are what the
real class forwards to); the attention backend is FLASH_ATTN's kernel block contract (MultipleOf(16), no
customize_spec change); the card (capability, CUDA runtime, memory, name) is the scenario's, so the release's own
_resolve_gdn_prefill_backend and get_batch_defaults decide on it. vLLM's own `vllm serve` parser reads the argv.

Kimi-Linear (family kda): the model class's get_mamba_state_*_from_config are compiled from the release's own
source and the KDA layer's spec comes from MambaBase.get_kv_cache_spec with the calculators' shape and the layer's
dtype call; its MLA layers are MLAAttentionSpec. The MLA backend is picked as CudaPlatform.get_valid_backends does:
the release's own _get_backend_priorities for the card, each candidate's supported_kv_cache_dtypes,
get_supported_kernel_block_sizes, supports_compute_capability, supports_block_size and is_sparse compiled from its
class source onto vLLM's AttentionBackend base (importing the backend modules allocates CUDA workspaces), with the
kernels a stock CUDA wheel builds taken as present (supports_combination is not run); the release's own
Platform.update_block_size_for_backend then sets the block size with it (preferred size, hybrid alignment, check).
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import json
import logging
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache
from types import ModuleType, SimpleNamespace
from typing import TYPE_CHECKING, Any, Literal, cast

if TYPE_CHECKING:
    from hybridplan.conformance import vllm_oracle_schema as schema
    from hybridplan.conformance.vllm_oracle_schema import (Card, GdnMixer, Header, KdaMixer, Mamba2Mixer, Plan,
                                                           Result, Scenario)


def _sibling(name: str) -> ModuleType:
    """A module beside this file, loaded by path (the oracle interpreter has no hybridplan package)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                     f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the schema's TypedDicts resolve their own module
    spec.loader.exec_module(module)
    return module


if not TYPE_CHECKING:
    schema = _sibling("vllm_oracle_schema")
oracle_driver: Any = _sibling("oracle_driver")  # the SGLang driver: its stub module classes

STUB_PACKAGES = ("xgrammar", "uvloop", "llguidance", "pynvml", "gguf")  # gguf: 0.20.x imports it at module level
STUB_MODULES = ("vllm._C", "vllm._C_stable_libtorch", "vllm._qutlass_C", "vllm._moe_C", "vllm._flashmla_C",
                "vllm.cumem_allocator")


class _StubModule(oracle_driver._StubModule):  # type: ignore[misc]  # the SGLang driver is untyped
    """The SGLang driver's stub module whose classes take any arguments (0.30.0's parser/harmony.py builds an
    xgrammar JSONSchemaFormat at import)."""

    def __getattr__(self, name: str) -> Any:
        if name[:1].isupper():
            cls = oracle_driver._StubMeta(name, (object,), {"__module__": self.__name__,
                                                            "__init__": lambda self, *a, **k: None})
            setattr(self, name, cls)
            return cls
        return super().__getattr__(name)


def _stub_finder() -> Any:
    """The SGLang driver's stub finder, matching vLLM's import-only packages and its compiled extension modules."""
    finder = oracle_driver._StubFinder(STUB_PACKAGES)

    def create_module(spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = _StubModule(spec.name)
        module.__path__ = []
        module.__version__ = "0.0.0"
        return module

    finder.create_module = create_module

    def find_spec(name: str, path: object, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if name.split(".")[0] in STUB_PACKAGES or name in STUB_MODULES:
            return importlib.machinery.ModuleSpec(name, finder, is_package=True)
        return None

    finder.find_spec = find_spec
    return finder


def prepare() -> Any:
    """Install the stubs and vLLM's CUDA platform (sm90); returns the vllm module."""
    sys.meta_path.insert(0, _stub_finder())
    import torch

    torch.cuda.is_available = lambda: True
    torch.cuda.get_device_capability = lambda *a, **k: (9, 0)
    import vllm
    import vllm.platforms as platforms
    from vllm.platforms.cuda import CudaPlatform

    platforms._current_platform = CudaPlatform()
    logging.disable(logging.WARNING)
    return vllm


def _backend() -> type:
    from vllm.v1.attention.backend import MultipleOf

    class FlashAttnContract:  # FLASH_ATTN on sm90: get_supported_kernel_block_sizes -> [MultipleOf(16)]
        @staticmethod
        def get_name() -> str:
            return "FLASH_ATTN"

        @staticmethod
        def customize_spec(spec: Any) -> Any:
            return spec

        @staticmethod
        def get_supported_kernel_block_sizes(kv_cache_spec: Any = None) -> list[Any]:
            return [MultipleOf(16)]

    return FlashAttnContract


def _shapes(sc: Scenario, tp: int, num_spec: int) -> Any:
    from vllm.model_executor.layers.mamba.mamba_utils import MambaStateShapeCalculator as C  # noqa: N817

    if sc["family"] == "kda":  # KimiGatedDeltaNetAttention.get_state_shape
        k = cast("KdaMixer", sc["mixer"])
        return C.kda_state_shape(tp, k["num_heads"], k["head_dim"], conv_kernel_size=k["conv_kernel"],
                                 num_spec=num_spec)
    if sc["family"] == "gdn":
        g = cast("GdnMixer", sc["mixer"])
        return C.gated_delta_net_state_shape(tp, g["num_k_heads"], g["num_v_heads"], g["head_k_dim"],
                                             g["head_v_dim"], g["conv_kernel"], num_spec)
    m = cast("Mamba2Mixer", sc["mixer"])
    return C.mamba2_state_shape(tp, m["intermediate_size"], m["n_groups"], m["num_heads"], m["head_dim"],
                                m["state_size"], m["conv_kernel"], num_spec)


def _dtypes(sc: Scenario, model_dtype: Any, cache: Any) -> Any:
    from vllm.model_executor.layers.mamba.mamba_utils import MambaStateDtypeCalculator as C  # noqa: N817

    if sc["family"] == "kda":  # KimiGatedDeltaNetAttention.get_state_dtype (no mamba_ssm_cache_dtype)
        return C.kda_state_dtype(model_dtype, cache.mamba_cache_dtype)
    if sc["family"] == "gdn":
        return C.gated_delta_net_state_dtype(model_dtype, cache.mamba_cache_dtype, cache.mamba_ssm_cache_dtype)
    return C.mamba2_state_dtype(model_dtype, cache.mamba_cache_dtype, cache.mamba_ssm_cache_dtype)


@lru_cache(maxsize=1)
def serve_parser() -> Any:
    """The release's `vllm serve` parser (make_arg_parser: entrypoints/common/cli_args.py since 0.33.0,
    entrypoints/launchers/cli_args.py in 0.29.0-0.32.0, entrypoints/openai/cli_args.py before)."""
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    for module in ("common", "launchers", "openai"):
        try:
            make_arg_parser = importlib.import_module(f"vllm.entrypoints.{module}.cli_args").make_arg_parser
        except ModuleNotFoundError:
            continue
        return make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))
    raise ModuleNotFoundError("no vllm.entrypoints.*.cli_args.make_arg_parser in this release")


def parsed(argv: list[str]) -> dict[str, Any]:
    """The explicit values vLLM's own `vllm serve` parser reads from argv (entrypoints/common/cli_args.py::
    make_arg_parser on utils/argparse_utils.py::FlexibleArgumentParser): every dest that differs from its default,
    the positional model_tag as `model`."""
    p = serve_parser()
    ns = p.parse_args(argv)
    return {("model" if k == "model_tag" else k): v for k, v in vars(ns).items() if v != p.get_default(k)}


def use_card(card: Card) -> None:
    """vLLM's CUDA platform as the scenario's card: capability, CUDA runtime, total memory, name."""
    from vllm.platforms.cuda import CudaPlatform
    from vllm.platforms.interface import DeviceCapability

    sm = card["sm"]
    CudaPlatform.get_device_capability = classmethod(lambda cls, device_id=0: DeviceCapability(sm // 10, sm % 10))
    CudaPlatform.get_cuda_runtime_major = classmethod(lambda cls: card["cuda"])
    CudaPlatform.get_device_total_memory = classmethod(lambda cls, device_id=0: card["memory"])
    CudaPlatform.get_device_name = classmethod(lambda cls, device_id=0: card["name"])


def checkpoint_alignment(sc: Scenario, mode: str) -> int | None:
    """The state layers' prefill checkpoint alignment in `mode`: GDN asks the release's own
    _resolve_gdn_prefill_backend (FlashInfer exports checkpoints every FLASHINFER_GDN_CHECKPOINT_ALIGNMENT tokens);
    MambaMixer2.get_kv_cache_spec always declares one checkpoint block at alignment 1. A layer whose release's
    get_kv_cache_spec declares no checkpoint block (Mamba2 before 0.32.0, GDN before 0.33.0) exports none."""
    if mode != "align":
        return None
    if sc["family"] == "kda":  # KimiGatedDeltaNetAttention keeps MambaBase.get_prefill_checkpoint_alignment (None)
        return None
    if sc["family"] != "gdn":
        return 1 if _declares_checkpoints("model_executor/layers/mamba/mamba_mixer2.py") else None
    if not _declares_checkpoints("model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py"):
        return None
    resolve_gdn_prefill_backend = _source_function(
        "model_executor/layers/mamba/gdn/qwen_gdn_linear_attn.py", "_resolve_gdn_prefill_backend")
    alignment = _source_constant("v1/attention/backends/gdn_attn.py", "FLASHINFER_GDN_CHECKPOINT_ALIGNMENT")
    g = cast("GdnMixer", sc["mixer"])
    cfg = SimpleNamespace(additional_config=None, model_config=SimpleNamespace(hf_text_config=SimpleNamespace(
        linear_key_head_dim=g["head_k_dim"], linear_value_head_dim=g["head_v_dim"])))
    _, backend = resolve_gdn_prefill_backend(cfg)
    return int(alignment) if backend == "flashinfer" else None


@lru_cache(maxsize=None)
def _mamba_spec_reads(name: str) -> bool:
    """Whether the release's MambaBase.get_kv_cache_spec reads `name` off the config."""
    cls = next(n for n in _source("model_executor/layers/mamba/abstract.py").body
               if isinstance(n, ast.ClassDef) and n.name == "MambaBase")
    spec = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "get_kv_cache_spec")
    return any(isinstance(n, ast.Attribute) and n.attr == name for n in ast.walk(spec))


@lru_cache(maxsize=None)
def _engine_args_pass(field: str) -> bool:
    """Whether the release's EngineArgs.create_engine_config hands `field` to CacheConfig as given."""
    return f"{field}=self.{field}" in ast.unparse(_source("engine/arg_utils.py"))


@lru_cache(maxsize=None)
def _declares_checkpoints(path: str) -> bool:
    """Whether a state layer module's get_kv_cache_spec declares a prefill checkpoint block in this release."""
    return _has_source(path) and any(isinstance(n, ast.FunctionDef) and n.name == "get_kv_cache_spec"
                                     and "num_prefill_checkpoint_blocks" in ast.dump(n) for n in ast.walk(_source(path)))


def _has_source(path: str) -> bool:
    """Whether the release ships the vLLM module at `path`."""
    import vllm

    return os.path.exists(os.path.join(os.path.dirname(vllm.__file__), path))


@lru_cache(maxsize=None)
def _supports_mamba_prefix_caching(architecture: str) -> bool:
    """Whether the release's model class for `architecture` implements SupportsMambaPrefixCaching (read from the
    class definition in its source: importing the model module pulls in its kernels). The registry names a module of
    model_executor/models/, or from 0.27.0 a package of vllm/models/ (Kimi-Linear: vllm.models.kimi_k3), whose
    files are searched for the class."""
    import glob

    import vllm
    from vllm.model_executor.models.registry import _VLLM_MODELS

    module, cls = _VLLM_MODELS[architecture]
    root = os.path.dirname(vllm.__file__)
    paths = [f"model_executor/models/{module}.py"] if "." not in module else sorted(
        os.path.relpath(f, root) for f in glob.glob(os.path.join(root, *module.split(".")[1:], "**", "*.py"),
                                                    recursive=True))
    node = next(n for p in paths for n in _source(p).body if isinstance(n, ast.ClassDef) and n.name == cls)
    return any(isinstance(b, ast.Name) and b.id == "SupportsMambaPrefixCaching" for b in node.bases)


@lru_cache(maxsize=None)
def _source(path: str) -> ast.Module:
    """A vLLM module's syntax tree, read from the release's files (cached: never mutated)."""
    import vllm

    with open(os.path.join(os.path.dirname(vllm.__file__), path)) as f:
        return ast.parse(f.read())


@lru_cache(maxsize=None)
def _source_function(path: str, name: str) -> Callable[..., Any]:
    """One function of a vLLM module, compiled from the release's own source without importing the module (its
    imports pull in the GPU kernels): the CUDA path it takes needs only the platform and typing names."""
    from vllm.platforms import current_platform

    fn = next(n for n in _source(path).body if isinstance(n, ast.FunctionDef) and n.name == name)
    namespace: dict[str, Any] = {
        "current_platform": current_platform, "Literal": Literal, "VllmConfig": object,
        "logger": logging.getLogger("vllm"), "xpu_gdn_kernel_available": lambda: False, "rocm_aiter_ops": None,
        "_aiter_flydsl_unsupported_reasons": lambda *a: ["not ROCm"]}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), path, "exec"), namespace)  # noqa: S102
    function: Callable[..., Any] = namespace[name]
    return function


def _source_constant(path: str, name: str) -> Any:
    """A module-level constant of a vLLM module, read from the release's source."""
    node = next(n for n in _source(path).body if isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == name for t in n.targets))
    return ast.literal_eval(node.value)


# where the CUDA platform's KimiLinearForCausalLM lives: model_executor/models/kimi_linear.py until 0.26.0, then
# models/kimi_k3/nvidia/model.py (vllm/models/kimi_k3/__init__.py imports it off ROCm, XPU and TPU)
_KIMI_LINEAR_SOURCES = ("model_executor/models/kimi_linear.py", "models/kimi_k3/nvidia/model.py")


def kda_model_class() -> Any:
    """KimiLinearForCausalLM's get_mamba_state_shape_from_config / get_mamba_state_dtype_from_config, compiled from
    the release's model source with the calculators they call (the module itself imports the GPU kernels)."""
    from vllm.model_executor.layers.mamba.mamba_utils import MambaStateDtypeCalculator, MambaStateShapeCalculator

    path = next(p for p in _KIMI_LINEAR_SOURCES if _has_source(p))
    cls = next(n for n in _source(path).body if isinstance(n, ast.ClassDef) and n.name == "KimiLinearForCausalLM")
    wanted = ("get_mamba_state_shape_from_config", "get_mamba_state_dtype_from_config")
    body: list[ast.stmt] = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    ns: dict[str, Any] = {"MambaStateDtypeCalculator": MambaStateDtypeCalculator,
                          "MambaStateShapeCalculator": MambaStateShapeCalculator, "MambaStateShapes": tuple}
    return _compile_class("KimiLinearForCausalLM", "object", body, path, ns)


def _compile_class(name: str, base: str, body: list[ast.stmt], path: str, ns: dict[str, Any]) -> Any:
    """`class name(base)` with `body` (statements of a release's own class; the cached tree is not mutated),
    compiled in `ns`."""
    import copy

    module = ast.parse(f"class {name}({base}):\n    pass\n")
    klass = module.body[0]
    assert isinstance(klass, ast.ClassDef)
    klass.body = [copy.deepcopy(n) for n in body] or klass.body
    exec(compile(module, path, "exec"), ns)  # noqa: S102
    return ns[name]


_BACKEND_MEMBERS = ("get_name", "get_supported_kernel_block_sizes", "supports_compute_capability",
                    "supports_block_size", "is_sparse")


def _backend_from_source(enum: Any) -> Any:
    """The backend class `enum` names, rebuilt on the release's AttentionBackend base from its own source: the
    members the selection and the block-size rules read (supported_kv_cache_dtypes and _BACKEND_MEMBERS)."""
    import copy
    from typing import ClassVar

    import torch
    from vllm.platforms.interface import DeviceCapability
    from vllm.v1.attention.backend import AttentionBackend, MultipleOf

    module, name = enum.get_path().rsplit(".", 1)
    path = module.removeprefix("vllm.").replace(".", "/") + ".py"
    cls = next(n for n in _source(path).body if isinstance(n, ast.ClassDef) and n.name == name)
    body: list[ast.stmt] = []
    for n in cls.body:
        if isinstance(n, ast.FunctionDef) and n.name in _BACKEND_MEMBERS:
            fn = copy.deepcopy(n)
            fn.decorator_list = [d for d in fn.decorator_list
                                 if isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")]
            body.append(fn)
        elif isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "supported_kv_cache_dtypes":
            body.append(n)
    ns: dict[str, Any] = {"MultipleOf": MultipleOf, "DeviceCapability": DeviceCapability, "ClassVar": ClassVar,
                          "torch": torch, "CacheDType": str, "_Base": AttentionBackend}
    return _compile_class(name, "_Base", body, path, ns)


def mla_backend(sc: Scenario, kv_cache_dtype: str, block_size: int | None) -> tuple[str, Any]:
    """(AttentionBackendEnum name, class) of CudaPlatform.get_valid_backends for a dense MLA layer on the scenario's
    card: the first backend of the release's _get_backend_priorities that supports the capability, the KV cache
    dtype and the user's block size."""
    import inspect

    from vllm.platforms.cuda import _get_backend_priorities
    from vllm.platforms.interface import DeviceCapability

    sm = sc["card"]["sm"]
    cap = DeviceCapability(sm // 10, sm % 10)
    a = sc["attn"]
    kwargs: dict[str, Any] = {"use_mla": True, "device_capability": cap, "num_heads": (a["num_heads"] or 0) // sc["tp"],
                              "kv_cache_dtype": kv_cache_dtype}
    if "head_size" in inspect.signature(_get_backend_priorities).parameters:
        kwargs["head_size"] = (a["kv_lora_rank"] or 0) + (a["qk_rope_head_dim"] or 0)
    for enum in _get_backend_priorities(**kwargs):
        b = _backend_from_source(enum)
        if (b.supports_compute_capability(cap) and b.supports_kv_cache_dtype(kv_cache_dtype)
                and b.supports_block_size(block_size) and not b.is_sparse()):
            return str(enum.name), b
    raise ValueError(f"No valid attention backend found for cuda with kv_cache_dtype={kv_cache_dtype}")


def mla_spec(cache: Any, head_size: int, dtype: Any) -> Any:
    """The MLA layer's get_kv_cache_spec: one latent head, with the keywords the release's layer passes beyond those
    (the KV quant mode from 0.26.0, max_tp_shards=1 from 0.32.0): model_executor/layers/attention/mla_attention.py::
    MLAAttention until 0.26.0, then models/kimi_k3/nvidia/mla.py::MultiHeadLatentAttention."""
    from vllm.v1.kv_cache_interface import MLAAttentionSpec, get_kv_quant_mode

    path = next(p for p in _MLA_LAYER_SOURCES if _has_source(p))
    passed = next(ast.dump(n) for n in ast.walk(_source(path))
                  if isinstance(n, ast.FunctionDef) and n.name == "get_kv_cache_spec")
    extra: dict[str, Any] = {}
    if "kv_quant_mode" in passed:
        extra["kv_quant_mode"] = get_kv_quant_mode(cache.cache_dtype)
    if "max_tp_shards" in passed:
        extra["max_tp_shards"] = 1
    return MLAAttentionSpec(block_size=cache.block_size, num_kv_heads=1, head_size=head_size, dtype=dtype,
                            cache_dtype_str=cache.cache_dtype, **extra)


_MLA_LAYER_SOURCES = ("models/kimi_k3/nvidia/mla.py", "model_executor/layers/attention/mla_attention.py")


def prefix_caching(values: dict[str, Any]) -> bool:
    """--enable-prefix-caching as given, else the release's default for a generative hybrid: engine/arg_utils.py::
    EngineArgs._set_default_chunked_prefill_and_prefix_caching_args on config/model.py::
    ModelConfig.is_prefix_caching_supported (attn_type 'hybrid', no pooler)."""
    from vllm.config.model import ModelConfig
    from vllm.engine.arg_utils import EngineArgs

    supported = ModelConfig.__dict__["is_prefix_caching_supported"]
    read = getattr(supported, "fget", None) or supported.func  # a property, or a cached_property
    model = SimpleNamespace(attn_type="hybrid", pooler_config=None, is_hybrid=True, runner_type="generate",
                            is_chunked_prefill_supported=True)
    model.is_prefix_caching_supported = read(model)
    args = SimpleNamespace(enable_chunked_prefill=values.get("enable_chunked_prefill"),
                           enable_prefix_caching=values.get("enable_prefix_caching"))
    EngineArgs._set_default_chunked_prefill_and_prefix_caching_args(args, model)
    return bool(args.enable_prefix_caching)


def batch_defaults(sc: Scenario, values: dict[str, Any]) -> tuple[int | None, int | None]:
    """(max_num_seqs, max_num_batched_tokens) from engine/arg_utils.py::
    EngineArgs._set_default_max_num_seqs_and_batched_tokens_args for `vllm serve` on the scenario's card."""
    from vllm.engine.arg_utils import EngineArgs
    from vllm.usage.usage_lib import UsageContext

    args = SimpleNamespace(pipeline_parallel_size=1, tensor_parallel_size=sc["tp"],
                           max_num_batched_tokens=values.get("max_num_batched_tokens"),
                           max_num_seqs=values.get("max_num_seqs"),
                           performance_mode=values.get("performance_mode", "balanced"),
                           enable_chunked_prefill=values.get("enable_chunked_prefill", True),
                           get_batch_defaults=EngineArgs.get_batch_defaults)
    EngineArgs._set_default_max_num_seqs_and_batched_tokens_args(
        args, UsageContext.OPENAI_API_SERVER,
        SimpleNamespace(max_model_len=sc["max_model_len"], is_multimodal_model=False),
        SimpleNamespace(use_batched_dp_moe=False))
    return args.max_num_seqs, args.max_num_batched_tokens


def run(sc: Scenario) -> Result:
    """The scenario through vLLM's parser, batch defaults and KV cache planning (a refusal as its error)."""
    values = parsed(sc["argv"])
    use_card(sc["card"])
    seqs, batched = batch_defaults(sc, values)
    try:
        return plan(sc, values, seqs, batched)
    except (ValueError, AssertionError, NotImplementedError) as exc:
        return {"id": sc["id"], "error": {"type": type(exc).__name__, "message": _message(exc)}, "parsed": values}


def plan(sc: Scenario, values: dict[str, Any], seqs: int | None, batched: int | None) -> Plan:
    """vLLM's cache config, platform alignment, layer specs, groups, KV cache config and logged capacity for the
    scenario, with the parsed values and the batch defaults (`seqs`, `batched`) it was run with."""
    import vllm.model_executor.layers.mamba.abstract as abstract
    import vllm.model_executor.models as models
    from vllm.config.cache import CacheConfig
    from vllm.config.model import ModelConfig
    from vllm.model_executor.models.config import MambaModelConfig
    from vllm.platforms.interface import Platform
    from vllm.utils.math_utils import cdiv
    from vllm.utils.torch_utils import STR_DTYPE_TO_TORCH_DTYPE
    from vllm.v1.kv_cache_interface import FullAttentionSpec, MambaSpec, get_kv_quant_mode

    c = sc["cache"]
    kda = sc["family"] == "kda"
    tp, num_spec = sc["tp"], sc["num_speculative_tokens"]
    model_dtype = STR_DTYPE_TO_TORCH_DTYPE[sc["model_dtype"]]
    # EngineArgs.create_engine_config hands --mamba-cache-mode to CacheConfig until 0.32.0 (0.33.0 deprecates it:
    # MambaModelConfig derives the mode)
    mode_flag = values.get("mamba_cache_mode")
    mode = {"mamba_cache_mode": mode_flag} if mode_flag and _engine_args_pass("mamba_cache_mode") else {}
    # the memory flags the refusals' wording reads (0.34.0's hint follows the utilization and the extensible KV cache)
    mode |= {k: values[k] for k in ("gpu_memory_utilization", "enable_extensible_kv_cache") if k in values}
    cache = CacheConfig(block_size=c["block_size"], cache_dtype=c["kv_cache_dtype"],
                        enable_prefix_caching=prefix_caching(values), mamba_block_size=c["mamba_block_size"],
                        mamba_cache_dtype=c["mamba_cache_dtype"], mamba_ssm_cache_dtype=c["mamba_ssm_cache_dtype"],
                        **mode)
    cache.kv_cache_layout = "LBNHC"  # FLASH_ATTN's preferred layout (its page sizes are uniform after alignment)
    shapes = _shapes(sc, tp, num_spec)
    a = sc["attn"]
    # ModelConfig.get_num_kv_heads / get_head_size: MLA keeps one latent head of kv_lora_rank + qk_rope_head_dim
    kv_heads = 1 if kda else max(1, a["total_kv_heads"] // tp)
    head_size = (a["kv_lora_rank"] or 0) + (a["qk_rope_head_dim"] or 0) if kda else a["head_dim"]
    mixer = cast("dict[str, Any]", sc["mixer"])
    model_config = SimpleNamespace(
        max_model_len=sc["max_model_len"], original_max_model_len=sc["original_max_model_len"],
        architecture=sc["architecture"], dtype=model_dtype, use_mla=kda, is_hybrid=True,
        supports_kv_cache_grouping=False, get_num_kv_heads=lambda pc: kv_heads,
        get_head_size=lambda: head_size,
        get_mamba_chunk_size=lambda: ModelConfig.get_mamba_chunk_size(SimpleNamespace(hf_text_config=SimpleNamespace(
            **({"chunk_size": mixer["chunk_size"]} if mixer.get("chunk_size") is not None else {})))),
        hf_config=SimpleNamespace(linear_attn_config={"num_heads": mixer.get("num_heads"),
                                                      "head_dim": mixer.get("head_dim"),
                                                      "short_conv_kernel_size": mixer["conv_kernel"]}),
        supports_mamba_prefix_caching=_supports_mamba_prefix_caching(sc["architecture"]))
    vllm_config = SimpleNamespace(
        model_config=model_config, cache_config=cache,
        scheduler_config=SimpleNamespace(enable_chunked_prefill=True, disable_hybrid_kv_cache_manager=False),
        parallel_config=SimpleNamespace(tensor_parallel_size=tp, decode_context_parallel_size=1,
                                        prefill_context_parallel_size=1, enable_elastic_ep=False),
        use_flashinfer_replayssm=False,  # VllmConfig's: FlashInfer ReplaySSM runs only under --use-replayssm
        attention_config=SimpleNamespace(hisparse_config=None),
        # MambaBase.get_kv_cache_spec reads num_speculative_tokens off the speculative config until 0.28.0 (0.28.0's
        # get_kv_cache_configs then asks it about multi-module MTP: one MTP layer here); later releases read
        # vllm_config.num_speculative_tokens
        speculative_config=SimpleNamespace(num_speculative_tokens=num_spec, use_multi_module_mtp=lambda: False)
        if num_spec and _mamba_spec_reads("speculative_config") else None,
        num_prefill_lookahead_tokens=0, num_speculative_tokens=num_spec, device_config=SimpleNamespace(device_type="cuda"),
        kv_transfer_config=None)
    from vllm.config.vllm import VllmConfig

    if hasattr(VllmConfig, "_resolve_extensible_kv_cache"):  # 0.34.0: on by default on CUDA
        VllmConfig._resolve_extensible_kv_cache(vllm_config)
    MambaModelConfig.verify_and_update_config(vllm_config)
    alignment = checkpoint_alignment(sc, str(cache.mamba_cache_mode))
    state_dtypes = _dtypes(sc, model_dtype, cache)

    class ModelClass:
        @staticmethod
        def get_mamba_state_shape_from_config(cfg: Any) -> Any:
            return shapes

        @staticmethod
        def get_mamba_state_dtype_from_config(cfg: Any) -> Any:
            return state_dtypes

    model_class = kda_model_class() if kda else ModelClass
    models.ModelRegistry.resolve_model_cls = lambda *a, **k: (model_class, sc["architecture"])
    abstract.get_mamba_prefill_checkpoint_alignment = lambda cfg: alignment
    backend_name, backend = mla_backend(sc, cache.cache_dtype, c["block_size"]) if kda else ("FLASH_ATTN", _backend())
    Platform._find_non_ssm_backends = classmethod(lambda cls, cfg: [backend])
    Platform._find_non_ssm_backend = classmethod(lambda cls, cfg: backend)  # 0.24.0's name
    if kda:  # the backend's preferred block size, then the hybrid alignment (and 0.33.0's check)
        Platform.update_block_size_for_backend(vllm_config)
    else:
        Platform._align_hybrid_block_size(vllm_config, backend)

    kv_dtype = model_dtype if cache.cache_dtype == "auto" else STR_DTYPE_TO_TORCH_DTYPE[cache.cache_dtype]
    attn = mla_spec(cache, head_size, kv_dtype) if kda else FullAttentionSpec(
        block_size=cache.block_size, num_kv_heads=kv_heads, head_size=head_size, dtype=kv_dtype,
        kv_quant_mode=get_kv_quant_mode(cache.cache_dtype))
    # MambaBase's own defaults (0.34.0's state_alignment: 16 bytes only under FlashInfer ReplaySSM)
    layer = SimpleNamespace(get_state_shape=lambda: shapes, get_state_dtype=lambda: state_dtypes,
                            mamba_type=_mamba_type(abstract, sc["family"]), is_kv_cache_tp_replicated=False,
                            state_alignment=getattr(abstract.MambaBase, "state_alignment", 1))
    mamba = abstract.MambaBase.get_kv_cache_spec(layer, vllm_config)
    if alignment is not None:  # the layer exports prefill checkpoints: MambaMixer2 at any token (alignment 1),
        # FlashInfer's GDN on the prefix-cache grid (get_kv_cache_spec)
        mamba = replace(mamba, num_prefill_checkpoint_blocks=1, prefill_checkpoint_alignment=1
                        if sc["family"] != "gdn" else abstract.get_mamba_prefill_checkpoint_grid(vllm_config))
    spec = {f"model.layers.{i}.{'attn' if kind == 'attention' else 'mixer'}": attn if kind == "attention" else mamba
            for i, kind in enumerate(sc["layers"])}
    logged: list[str] = []
    if not _has_source("v1/core/kv_cache_planning.py"):  # before 0.33.0: kv_cache_utils.py groups the specs itself
        from vllm.v1.core import kv_cache_utils

        if not hasattr(kv_cache_utils, "get_kv_cache_capacity"):  # 0.20.x: _report_kv_cache_config logs it
            kv_cache_utils.logger.info_once = lambda msg, *args, **kw: logged.append(msg % args)
        config = kv_cache_utils.get_kv_cache_configs(vllm_config, [spec], [sc["available_memory"]])[0]
    else:
        from vllm.v1.core.kv_cache_planning import get_global_kv_cache_groups, get_kv_cache_configs

        groups = get_global_kv_cache_groups(vllm_config, [spec])
        config = get_kv_cache_configs(vllm_config, [spec], [sc["available_memory"]], groups)[0]
    tokens, concurrency = _capacity(vllm_config, config, logged)
    per_group: list[Any] = []
    for g in config.kv_cache_groups:
        s = g.kv_cache_spec
        first = s.first_spec if hasattr(s, "first_spec") else s
        per_group.append({"kind": "mamba" if isinstance(first, MambaSpec) else "attention",
                          "layers": len(g.layer_names), "block_size": first.block_size,
                          "blocks_per_request": cdiv(s.max_memory_usage_bytes(vllm_config), s.page_size_bytes)})
    return {
        "id": sc["id"], "parsed": values, "attention_backend": backend_name, "block_size": cache.block_size,
        "mamba_block_size": cache.mamba_block_size,
        "mamba_cache_mode": cache.mamba_cache_mode, "mamba_page_size_padded": cache.mamba_page_size_padded,
        "attn_page_bytes": attn.page_size_bytes,
        "state_page_bytes": (mamba.real_page_size_bytes if hasattr(mamba, "real_page_size_bytes")
                             else MambaSpec(shapes=mamba.shapes, dtypes=mamba.dtypes, block_size=-1).page_size_bytes),
        "page_bytes": mamba.page_size_bytes, "num_blocks": config.num_blocks, "groups": per_group,
        "max_model_len": model_config.max_model_len, "kv_cache_tokens": tokens, "max_concurrency": repr(concurrency),
        "conv_shape": list(shapes[0]), "temporal_shape": list(shapes[1]),
        "state_dtypes": [str(d).removeprefix("torch.") for d in state_dtypes],
        "max_num_seqs": seqs, "max_num_batched_tokens": batched,
    }


def _mamba_type(abstract: Any, family: str) -> Any:
    """The state layer's mamba_type: MambaAttentionBackendEnum (0.24.0+) or its string (0.20.x's layer classes)."""
    enum = getattr(abstract, "MambaAttentionBackendEnum", None)
    if enum is None:
        return "gdn_attention" if family in ("gdn", "kda") else "mamba2"
    return enum.GDN_ATTN if family in ("gdn", "kda") else enum.MAMBA2


def _capacity(vllm_config: Any, config: Any, logged: list[str]) -> tuple[int, float]:
    """(the logged GPU KV cache size in tokens, max concurrency): v1/core/kv_cache_utils.py::get_kv_cache_capacity,
    or on 0.20.x the number _report_kv_cache_config logged (`logged`) and get_max_concurrency_for_kv_cache_config."""
    from vllm.v1.core import kv_cache_utils

    if hasattr(kv_cache_utils, "get_kv_cache_capacity"):
        tokens, concurrency = kv_cache_utils.get_kv_cache_capacity(vllm_config, config)
        return int(tokens), float(concurrency)
    size = next(line for line in logged if line.startswith("GPU KV cache size: "))
    tokens = int(size.removeprefix("GPU KV cache size: ").removesuffix(" tokens").replace(",", ""))
    return tokens, float(kv_cache_utils.get_max_concurrency_for_kv_cache_config(vllm_config, config))


def _emit(obj: Header | Result) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _message(exc: BaseException) -> str:
    """The exception's message; a bare `assert` has none, so the failing source line stands for it."""
    import traceback

    return str(exc) or (traceback.extract_tb(exc.__traceback__)[-1].line or "")


def _refusal(sid: str, exc: BaseException, message: str | None = None) -> Result:
    return {"id": sid, "error": {"type": type(exc).__name__, "message": _message(exc) if message is None else message}}


def answer(line: str) -> Result:
    """One input line's result, checked against the schema on the way in and on the way out."""
    try:
        raw = json.loads(line)
    except ValueError as exc:
        return _refusal("?", exc)
    sid = str(raw.get("id")) if isinstance(raw, dict) else "?"
    try:
        sc = schema.scenario(raw)
    except schema.SchemaError as exc:
        return _refusal(sid, exc)
    try:
        out = run(sc)
    except (ValueError, AssertionError, NotImplementedError) as exc:
        return _refusal(sid, exc)
    except SystemExit as exc:  # the parser refused the argv (argparse prints its message to stderr)
        return _refusal(sid, exc, "vllm serve: error")
    try:
        return schema.result(json.loads(json.dumps(out)))  # as hybridplan will read it
    except schema.SchemaError as exc:
        return _refusal(sid, exc)


def main() -> None:
    try:
        vllm = prepare()
        header: Header = {"header": True, "engine": "vllm", "version": str(vllm.__version__),
                          "python": sys.version.split()[0]}
    except Exception as exc:  # noqa: BLE001 - the header says why there is no engine
        _emit({"header": True, "engine": None, "error": f"{type(exc).__name__}: {exc}"})
        return
    _emit(schema.header(header))
    for line in sys.stdin:
        if line.strip():
            _emit(answer(line))


if __name__ == "__main__":
    main()
