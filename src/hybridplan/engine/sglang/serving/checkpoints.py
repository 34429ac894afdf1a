"""Which checkpoint a (model, quantization, speculative algorithm) target means, from the bundled catalog."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hybridplan.errors import BadInput

QUANT_SUFFIX = {"fp8": "FP8", "nvfp4": "NVFP4", "nvfp4-bf16-head": "NVFP4-BF16-LMHead", "bf16": ""}
# community INT4 exports, launched as `--model-path <export> --quantization <method>`: sized as the method's default
# export of the bf16 geometry (weights.quant.METHOD_DEFAULTS, the layouts data/sglang_launch_reports.yaml's launches ran)
COMMUNITY_INT4 = ("auto-round", "gptq", "awq", "compressed-tensors")
QUANT_CHOICES = (*QUANT_SUFFIX, *COMMUNITY_INT4)
_QUANT_TAIL = re.compile(r"-(FP8|NVFP4(-BF16-LMHead)?|BF16|MXFP4)$", re.IGNORECASE)
SPEC_NAMES = {"none": None, "eagle": "EAGLE", "mtp": "EAGLE", "nextn": "EAGLE", "eagle3": "EAGLE3",
              "dspark": "DSPARK", "dflash": "DFLASH", "ngram": "NGRAM"}
# path-less MTP as the docs cookbook launches it (steps 3, topk 1, 4 draft tokens)
MTP_FLAGS = ("--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")
DRAFT_TAG = {"DSPARK": "dspark", "DFLASH": "dflash"}


@dataclass(frozen=True, kw_only=True)
class Checkpoint:
    """The --model-path to launch and how it was found."""

    ref: str
    quant: str | None
    note: str
    alternatives: tuple[str, ...] = ()
    estimated_quant: str | None = None  # set when no such checkpoint is known: weights follow this named policy
    flags: tuple[str, ...] = ()  # launch flags the checkpoint needs (`--quantization <method>` for an INT4 export)

    @property
    def estimated(self) -> bool:
        """Whether the weights follow a named layout rather than a checkpoint known by its own bytes or config."""
        return bool(self.estimated_quant or self.flags)

    def describe(self) -> str:
        """The checkpoint as a change names it."""
        return f"a community {self.quant} INT4 export ({' '.join(self.flags)})" if self.flags else \
            f"the {self.quant} checkpoint {self.ref}"


def _ids() -> list[str]:
    from hybridplan.models.catalog import catalog

    return sorted(catalog())


def base_name(ref: str) -> tuple[str, str]:
    """(org, name without a quantization suffix) of an `Org/Name` id or a path."""
    org, _, name = ref.rpartition("/")
    return org, _QUANT_TAIL.sub("", name)


def checkpoint_for(model: str, quant: str | None) -> Checkpoint:
    """The catalog checkpoint of `model` in `quant` (same organisation first), else the model with an estimate."""
    if quant is None:
        return Checkpoint(ref=model, quant=None, note="the given model")
    if quant not in QUANT_CHOICES:
        raise BadInput(f"unknown --quant {quant!r}; choose from {', '.join(QUANT_CHOICES)}")
    if quant in COMMUNITY_INT4:
        bf16 = checkpoint_for(model, "bf16").ref
        return Checkpoint(ref=bf16, quant=quant, flags=("--quantization", quant), note=(
            f"a community {quant} INT4 export of {bf16}, sized as that method's default layout (4-bit, group 128) "
            "on its geometry: put your export's path in --model-path"))
    org, name = base_name(model)
    suffix = QUANT_SUFFIX[quant]
    wanted = f"{name}-{suffix}".lower() if suffix else name.lower()
    found = [i for i in _ids() if i.rpartition("/")[2].lower() == wanted]
    found.sort(key=lambda i: (i.rpartition("/")[0] != org, i))
    if found:
        return Checkpoint(ref=found[0], quant=quant, note=f"catalog checkpoint for {quant}", alternatives=tuple(found[1:]))
    return Checkpoint(ref=model, quant=quant, estimated_quant=quant, note=(
        f"no {quant} checkpoint of {name} in the catalog: weights are estimated as a {quant} export of {model}; "
        "put your checkpoint's path in --model-path"))


def draft_for(model: str, algorithm: str) -> str:
    """A catalog draft checkpoint for DSPARK / DFLASH named after the model (`<Name>-DSpark`, `<Name>-DFlash*`)."""
    _, name = base_name(model)
    tag = DRAFT_TAG[algorithm]
    found = [i for i in _ids() if i.rpartition("/")[2].lower().startswith(f"{name}-{tag}".lower())]
    if not found:
        raise BadInput(f"no {algorithm} draft for {name} in the catalog; give one with --draft")
    return sorted(found)[-1]


def spec_flags(spec: str | None, model: str, draft: str | None) -> tuple[str, ...]:
    """Launch flags for a speculative choice (`none`, `mtp`/`eagle`/`nextn`, `dspark`, `dflash`, ...)."""
    key = (spec or "none").lower()
    if key not in SPEC_NAMES:
        raise BadInput(f"unknown --spec {spec!r}; choose from {', '.join(SPEC_NAMES)}")
    algo = SPEC_NAMES[key]
    if algo is None:
        return ()
    flags: tuple[str, ...] = ("--speculative-algorithm", algo)
    if algo in DRAFT_TAG:
        flags += ("--speculative-draft-model-path", draft or draft_for(model, algo))
    elif algo == "EAGLE" and draft is None:
        flags += MTP_FLAGS
    elif draft is not None:
        flags += ("--speculative-draft-model-path", draft)
    return flags
