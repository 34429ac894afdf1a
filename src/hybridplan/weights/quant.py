"""How a checkpoint stores each weight: the scheme per module, from the config's quantization section.

Byte counts per scheme follow the serialized layouts: FP8 block (1 B + an fp32 scale per 128x128 block),
FP8 per-tensor (1 B + fp32 scales), NVFP4 (packed 4-bit + an fp8 scale per 16 values + fp32 globals),
MXFP4 (packed 4-bit + an e8m0 scale per 32 values).
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Mapping

from hybridplan.errors import BadInput

SCHEMES = ("bf16", "fp32", "fp8_block", "fp8", "nvfp4", "w4a16_nvfp4", "mxfp4")
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
    """compressed-tensors config groups: 4-bit float groups (32: MXFP4, 16: NVFP4) or 8-bit float, by target."""
    scheme, experts_only = "bf16", False
    for group in (qc.get("config_groups") or {}).values():
        w = (group or {}).get("weights") or {}
        if w.get("num_bits") == 4:
            scheme = "mxfp4" if w.get("group_size") == 32 else "nvfp4"
        elif w.get("num_bits") == 8:
            scheme = "fp8" if w.get("strategy") != "block" else "fp8_block"
        targets = " ".join(str(t) for t in (group or {}).get("targets") or ())
        experts_only = experts_only or "expert" in targets
    return QuantPolicy(linear=scheme, experts_only=experts_only, exclude=tuple(qc.get("ignore") or ()),
                       label=f"compressed-tensors {scheme}" + (" (experts)" if experts_only else ""))


# `plan --quant` names -> the policy an estimate assumes when no checkpoint of that quantization is known
NAMED = {
    "bf16": QuantPolicy(),
    "fp8": QuantPolicy(linear="fp8_block", label="fp8 (block 128)"),
    "nvfp4": QuantPolicy(linear="nvfp4", lm_head="nvfp4", label="modelopt NVFP4 (NVFP4 lm_head)"),
    "nvfp4-bf16-head": QuantPolicy(linear="nvfp4", label="modelopt NVFP4 (bf16 lm_head)"),
}
