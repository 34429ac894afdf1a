"""How a checkpoint stores each weight: the scheme per module, from the config's quantization section.

Byte counts per scheme follow the serialized layouts: FP8 block (1 B + an fp32 scale per 128x128 block),
FP8 per-tensor (1 B + fp32 scales), NVFP4 (packed 4-bit + an fp8 scale per 16 values + fp32 globals),
MXFP4 (packed 4-bit + an e8m0 scale per 32 values), the integer weight-only formats of community checkpoints
(AutoRound, GPTQ, AWQ: 4- or 8-bit values packed in int32, an fp16 scale and a packed zero point per group of
`block` input values; compressed-tensors symmetric: no zero points).
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Mapping

from hybridplan.errors import BadInput

SCHEMES = ("bf16", "fp32", "fp8_block", "fp8", "nvfp4", "w4a16_nvfp4", "mxfp4", "int4", "int4_sym", "int8", "int8_sym")
# a quantizable module: a Linear weight inside the language model (attention, linear attention, MLP, experts)
QUANTIZABLE = ("linear", "expert")


def scheme_bytes(scheme: str, rows: int, cols: int, block: int = 128) -> int:
    """Serialized bytes of one (rows x cols) weight and its scales."""
    n = rows * cols
    if scheme == "bf16":
        return 2 * n
    if scheme == "fp32":
        return 4 * n
    if scheme == "fp8_block":
        return n + math.ceil(rows / block) * math.ceil(cols / block) * 4
    if scheme == "fp8":
        return n + 8  # weight_scale + input_scale
    if scheme == "nvfp4":
        return n // 2 + n // 16 + 8  # fp8 block scales, weight_scale_2, input_scale
    if scheme == "w4a16_nvfp4":
        return n // 2 + n // 16 + 4
    if scheme == "mxfp4":
        return n // 2 + n // 32
    if scheme in ("int4", "int4_sym", "int8", "int8_sym"):
        bits = 4 if scheme.startswith("int4") else 8
        groups = rows * math.ceil(cols / block)
        zeros = 0 if scheme.endswith("_sym") else math.ceil(groups * bits / 32) * 4  # qzeros, packed like the values
        return math.ceil(n * bits / 32) * 4 + 2 * groups + zeros  # qweight int32 + fp16 scales (+ qzeros)
    raise ValueError(f"unknown weight scheme {scheme!r}")


@dataclass(frozen=True, kw_only=True)
class QuantPolicy:
    """Which scheme each module uses. `linear` covers quantizable LM linears; routers, norms, embeddings, vision stay bf16."""

    linear: str = "bf16"
    lm_head: str = "bf16"
    experts_only: bool = False  # the quantized scheme applies to routed experts only
    per_name: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    exclude: tuple[str, ...] = ()
    block: int = 128
    label: str = "bf16"

    def scheme(self, name: str, kind: str) -> str:
        """The scheme of one module (`kind`: linear | expert | lm_head | router | embed | param | vision)."""
        if name in self.per_name:
            return self.per_name[name]
        if kind == "expert" and name.rsplit(".", 1)[0] in self.per_name:  # ModelOpt lists a layer's experts as one
            return self.per_name[name.rsplit(".", 1)[0]]
        if self.per_name and kind in QUANTIZABLE:
            return "bf16"  # a per-layer list names every quantized module
        if any(_matches(name, pat) for pat in self.exclude):
            return "bf16"
        if kind == "lm_head":
            return self.lm_head
        if kind == "expert" or (kind == "linear" and not self.experts_only):
            return self.linear
        return "bf16"


def policy_key(policy: QuantPolicy) -> tuple[Any, ...]:
    """A hashable key of a policy's content (its per-name map is a read-only mapping)."""
    return (policy.linear, policy.lm_head, policy.experts_only, tuple(sorted(policy.per_name.items())),
            policy.exclude, policy.block, policy.label)


def _matches(name: str, pattern: str) -> bool:
    """ModelOpt / compressed-tensors exclusion patterns: globs, regexes prefixed `re:`, or module prefixes."""
    if pattern.startswith("re:"):
        import re

        return re.match(pattern[3:], name) is not None
    return fnmatch.fnmatch(name, pattern) or name == pattern or name.startswith(pattern + ".")


_ALGO_SCHEME = {"FP8": "fp8", "NVFP4": "nvfp4", "W4A16_NVFP4": "w4a16_nvfp4", "W4A8_NVFP4_FP8": "nvfp4",
                "FP8_PB_WO": "fp8_block", "MXFP4": "mxfp4"}


def policy_from_config(config: dict[str, Any], hf_quant_config: dict[str, Any] | None) -> QuantPolicy:
    """The checkpoint's storage policy, read the way configs/model_config.py::_parse_quant_hf_config finds it."""
    qc = config.get("quantization_config")
    if not isinstance(qc, dict) and isinstance(config.get("text_config"), dict):
        qc = config["text_config"].get("quantization_config")
    if not isinstance(qc, dict) and isinstance(hf_quant_config, dict):
        qc = {"quant_method": "modelopt", **hf_quant_config.get("quantization", hf_quant_config)}
    if not isinstance(qc, dict):
        return QuantPolicy()
    method = str(qc.get("quant_method") or "modelopt").lower()
    if method == "fp8":
        block = (qc.get("weight_block_size") or [128, 128])[0]
        return QuantPolicy(linear="fp8_block" if qc.get("weight_block_size") else "fp8", block=int(block),
                           exclude=tuple(qc.get("modules_to_not_convert") or qc.get("ignored_layers") or ()),
                           label=f"fp8 (block {block})" if qc.get("weight_block_size") else "fp8")
    if method == "modelopt":
        return _modelopt(qc)
    if method == "compressed-tensors":
        return _compressed_tensors(qc)
    if method in ("mxfp4", "quark"):
        return QuantPolicy(linear="mxfp4", experts_only=True, exclude=tuple(qc.get("ignore") or ()), label=method)
    if method in _INT_METHODS:
        return _integer(method, qc)
    raise BadInput(f"quantization {method!r}: no weight estimate for this method; give the checkpoint "
                   "(a local directory with safetensors) or --weights-gib")


def with_lm_head(policy: QuantPolicy, scheme: str) -> QuantPolicy:
    """The same policy with the lm_head stored as `scheme` (an export that differs from its sibling only there)."""
    if scheme not in SCHEMES:
        raise BadInput(f"lm_head scheme {scheme!r}: expected one of {', '.join(SCHEMES)}")
    per_name = dict(policy.per_name)
    if per_name:
        per_name["lm_head"] = scheme
    return replace(policy, per_name=MappingProxyType(per_name), lm_head=scheme, label=f"{policy.label}, {scheme} lm_head")


def _modelopt(qc: dict[str, Any]) -> QuantPolicy:
    algo = str(qc.get("quant_algo") or "").upper()
    exclude = tuple(qc.get("exclude_modules") or qc.get("ignore") or ())
    layers = qc.get("quantized_layers")
    if isinstance(layers, dict) and layers:
        per_name = {name: _ALGO_SCHEME.get(str(v.get("quant_algo", "")).upper(), "bf16")
                    for name, v in layers.items() if isinstance(v, dict)}
        return QuantPolicy(per_name=MappingProxyType(per_name), exclude=exclude, label=f"modelopt {algo or 'mixed'}")
    scheme = _ALGO_SCHEME.get(algo)
    if scheme is None:
        raise BadInput(f"ModelOpt quant_algo {algo!r}: no weight estimate for it; give the checkpoint or --weights-gib")
    # ModelOpt keeps lm_head unquantized unless the export says otherwise; an explicit exclude list decides
    listed = "exclude_modules" in qc or "ignore" in qc
    head_excluded = any(_matches("lm_head", p) for p in exclude) if listed else True
    return QuantPolicy(linear=scheme, lm_head="bf16" if head_excluded else scheme, exclude=exclude,
                       label=f"modelopt {algo}" + ("" if head_excluded else f" ({algo} lm_head)"))


def _compressed_tensors(qc: dict[str, Any]) -> QuantPolicy:
    """compressed-tensors config groups: 4-bit float groups (32: MXFP4, 16: NVFP4), integer groups (W4A16 / W8A16
    pack-quantized, group_size values a scale), or 8-bit float, by target."""
    scheme, experts_only, block = "bf16", False, 128
    for group in (qc.get("config_groups") or {}).values():
        w = (group or {}).get("weights") or {}
        if w.get("type") == "int" and w.get("num_bits") in (4, 8):
            scheme = f"int{w['num_bits']}" + ("_sym" if w.get("symmetric", True) else "")
            block = int(w.get("group_size") or 128)
        elif w.get("num_bits") == 4:
            scheme = "mxfp4" if w.get("group_size") == 32 else "nvfp4"
        elif w.get("num_bits") == 8:
            scheme = "fp8" if w.get("strategy") != "block" else "fp8_block"
        targets = " ".join(str(t) for t in (group or {}).get("targets") or ())
        experts_only = experts_only or "expert" in targets
    return QuantPolicy(linear=scheme, experts_only=experts_only, exclude=tuple(qc.get("ignore") or ()), block=block,
                       label=f"compressed-tensors {scheme}" + (f" g{block}" if scheme.startswith("int") else "")
                       + (" (experts)" if experts_only else ""))


# quantization_config.quant_method of the integer weight-only formats, and sglang's --quantization names for them
_INT_METHODS = ("auto-round", "autoround", "gptq", "gptq_marlin", "awq", "awq_marlin")


def _integer(method: str, qc: dict[str, Any]) -> QuantPolicy:
    """AutoRound / GPTQ / AWQ: `bits` (w_bit) values per weight in groups of `group_size` (q_group_size); the modules
    the export left unquantized: modules_to_not_convert, AutoRound's extra_config entries at 16 bits or more, GPTQ's
    negative `dynamic` rules; lm_head unless the export says it quantized it (lm_head / quant_lm_head)."""
    bits = _int(qc, ("bits", "w_bit"), 4)
    group = _int(qc, ("group_size", "q_group_size"), 128)
    if bits not in (4, 8):
        raise BadInput(f"quantization_config.bits: {bits}-bit {method} has no weight estimate (4 or 8); give the "
                       "checkpoint or --weights-gib")
    group = group if group > 0 else 1 << 20  # -1: one group per row (per-channel scales)
    keep = [str(m) for m in qc.get("modules_to_not_convert") or ()]
    extra = qc.get("extra_config") or {}
    keep += [str(name) for name, cfg in (extra.items() if isinstance(extra, dict) else ())
             if isinstance(cfg, dict) and _int(cfg, ("bits",), bits) >= 16]
    dynamic = qc.get("dynamic") or {}
    keep += ["re:" + str(k)[2:] for k in (dynamic if isinstance(dynamic, dict) else ()) if str(k).startswith("-:")]
    scheme = f"int{bits}"  # the GPTQ / AWQ / AutoRound packings store qzeros even for a symmetric export
    head = scheme if qc.get("lm_head") or qc.get("quant_lm_head") else "bf16"
    name = {"autoround": "auto-round", "gptq_marlin": "gptq", "awq_marlin": "awq"}.get(method, method)
    return QuantPolicy(linear=scheme, lm_head=head, exclude=tuple(keep), block=group,
                       label=f"{name} INT{bits} (group {group if group < 1 << 20 else 'per-channel'})")


def _int(cfg: dict[str, Any], keys: tuple[str, ...], default: int) -> int:
    """The first of `keys` that is set, as an int; BadInput naming the field when it is not a whole number."""
    for key in keys:
        value = cfg.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
            raise BadInput(f"quantization_config.{key}: expected a whole number, got {value!r}")
        return int(value)
    return default


# sglang's --quantization names of the integer weight-only formats -> the quantization_config a community export of
# that method carries by default, for a config at hand that declares none (the unquantized model's config standing in
# for its export). Sources: intel/auto-round's defaults (bits 4, group_size 128, sym; lm_head and the vision tower
# kept in 16 bits), AutoGPTQ's BaseQuantizeConfig (4-bit, group 128, the layout GPTQModel exports), AutoAWQ's
# quant_config (w_bit 4, q_group_size 128, zero_point), llm-compressor's W4A16 preset scheme (int4 symmetric, group
# 128, lm_head ignored). The community Qwen3.8-27B INT4 exports the launch reports run are of these shapes
# (data/sglang_launch_reports.yaml).
METHOD_DEFAULTS: Mapping[str, Mapping[str, Any]] = MappingProxyType({
    "auto-round": {"quant_method": "auto-round", "bits": 4, "group_size": 128, "sym": True},
    "gptq": {"quant_method": "gptq", "bits": 4, "group_size": 128},
    "gptq_marlin": {"quant_method": "gptq", "bits": 4, "group_size": 128},
    "awq": {"quant_method": "awq", "w_bit": 4, "q_group_size": 128, "zero_point": True},
    "awq_marlin": {"quant_method": "awq", "w_bit": 4, "q_group_size": 128, "zero_point": True},
    "compressed-tensors": {"quant_method": "compressed-tensors", "ignore": ["lm_head"], "config_groups": {"group_0": {
        "targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "symmetric": True, "group_size": 128}}}},
})


def declares_quantization(config: dict[str, Any], hf_quant_config: dict[str, Any] | None) -> bool:
    """Whether a checkpoint's config (or its ModelOpt sidecar) states how its weights are stored."""
    text = config.get("text_config")
    return (isinstance(config.get("quantization_config"), dict) or isinstance(hf_quant_config, dict)
            or (isinstance(text, dict) and isinstance(text.get("quantization_config"), dict)))


# `--quantization` methods an engine applies to an unquantized checkpoint as it loads it: fp8 quantizes every
# quantizable linear and routed expert to FP8 with one scale per tensor (vLLM's Fp8LinearMethod / Fp8MoEMethod and
# sglang's w8a8 fp8 path with no checkpoint scales), the embeddings, lm_head, routers and norms staying in bf16
ONLINE: Mapping[str, QuantPolicy] = MappingProxyType({
    "fp8": QuantPolicy(linear="fp8", label="fp8 online (per-tensor, the weights quantized as they load)"),
})


def method_policy(method: str | None, config: dict[str, Any],
                  hf_quant_config: dict[str, Any] | None) -> QuantPolicy | None:
    """The storage a `--quantization` method implies when the config at hand declares none: the weights quantized as
    they load (ONLINE), or the method's community export layout (METHOD_DEFAULTS) on this geometry. None when the
    config states its own, or the method is neither (the engine then reads the weights as the config says)."""
    if method is None or declares_quantization(config, hf_quant_config):
        return None
    if method in ONLINE:
        return ONLINE[method]
    if method not in METHOD_DEFAULTS:
        return None
    policy = policy_from_config({"quantization_config": dict(METHOD_DEFAULTS[method])}, None)
    return replace(policy, label=f"{policy.label}: --quantization {method} on a config without quantization_config, "
                                 "sized as that method's default export of this geometry")


# `plan --quant` names -> the policy an estimate assumes when no checkpoint of that quantization is known
NAMED = {
    "bf16": QuantPolicy(),
    "fp8": QuantPolicy(linear="fp8_block", label="fp8 (block 128)"),
    "nvfp4": QuantPolicy(linear="nvfp4", lm_head="nvfp4", label="modelopt NVFP4 (NVFP4 lm_head)"),
    "nvfp4-bf16-head": QuantPolicy(linear="nvfp4", label="modelopt NVFP4 (bf16 lm_head)"),
}
