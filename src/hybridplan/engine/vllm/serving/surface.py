"""vLLM behind the one protocol the surfaces ask (engine.api.ServingEngine): explain, plan, logs and compare answer
in vLLM's terms (one paged pool of attention and state pages), from its serving modules."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from hybridplan.engine.registry import FlagRegistry
from hybridplan.engine.requests import CompareLaunch, CompareLeg, CompareRequest, ExplainRequest, LaunchSettings, LogCheckRequest, PlanRequest, RatioRequest
from hybridplan.engine.vllm.engine import NAME, for_version
from hybridplan.errors import BadInput

if TYPE_CHECKING:  # the fleet's types are built only where a fleet is planned
    from hybridplan.engine.fleet_requests import FleetLaunch, FleetLayout, FleetRequest
    from hybridplan.evidence import EvidencePoint
from hybridplan.limits import MAX_UTIL_PROPOSED

LAYOUT = "paged_pool"  # attention KV and recurrent state pages in one pool of blocks
EXPLAIN_OPTIONS = frozenset({"command", "gpu", "gpu_memory_gib", "kv_memory_gib", "others_gib"})
PLAN_OPTIONS = frozenset({"request_length", "concurrency", "command", "gpu", "gpu_memory_gib", "kv_memory_gib",
                          "max_util"})
LOG_OPTIONS = frozenset({"log", "command", "engine_version", "gpu", "log_version"})  # log_version: refused by name


def text_of(command: str | tuple[str, ...]) -> str:
    """The launch as one string (the shell's tokens joined back), as vLLM's parser takes it."""
    return command if isinstance(command, str) else (command[0] if len(command) == 1 else shlex.join(command))


@dataclass(frozen=True)
class VllmServing:
    """One vLLM release as the surfaces see it (`asked`: the version string it models, a dev or rc build say, whose
    note the resolved launch carries)."""

    version: str
    asked: str | None = None

    @property
    def _release(self) -> str:
        """What the engine's own lookup is given: the version asked for, so its note comes along."""
        return self.asked or self.version

    @property
    def name(self) -> str:
        return NAME

    @property
    def display_name(self) -> str:
        return "vLLM"

    @property
    def layout(self) -> str:
        return LAYOUT

    @property
    def rules_package(self) -> str:
        return for_version(self._release).rules_package

    def registry(self) -> FlagRegistry:
        return for_version(self._release).registry()

    def takes(self, surface: str) -> frozenset[str]:
        return {"explain": EXPLAIN_OPTIONS, "plan": PLAN_OPTIONS, "logs": LOG_OPTIONS}.get(surface, frozenset())

    def launches(self, command: str | tuple[str, ...]) -> bool:
        from hybridplan.engine.program import match_program, program_words
        from hybridplan.engine.vllm.command import PROGRAMS

        return match_program(program_words(command), PROGRAMS) is not None

    def model_refs(self, command: str | tuple[str, ...]) -> tuple[str | None, str | None]:
        model = for_version(self._release).parse_command(text_of(command)).values.get("model")
        return (str(model) if model else None), None

    def workload(self, command: str | tuple[str, ...]) -> tuple[int | None, int | None]:
        """--max-model-len (else the model's, as resolved; None for `auto`, which vLLM fits at startup) and
        --max-num-seqs where the launch sets it."""
        from hybridplan.engine.vllm.serving.launch import card, resolve_on
        from hybridplan.models.loader import load_model

        engine = for_version(self._release)
        cmd = engine.parse_command(text_of(command))
        model = cmd.values.get("model")
        if not model:
            raise BadInput("the vLLM command names no model (`vllm serve MODEL` or --model)")
        args = resolve_on(engine, cmd, load_model(str(model)), card(None))
        seqs = cmd.values.get("max_num_seqs")
        return None if args.auto_fit else args.max_model_len, None if seqs is None else int(seqs)

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """None: vLLM's rules here read no environment variable."""
        return {}

    def launch_evidence(self, command: str, gpu: str, *, kind: str, label: str, source: str,
                        outcome: Literal["served", "failed"], phase: str | None) -> EvidencePoint:
        from hybridplan.engine.vllm.serving.evidence import launch_point

        return launch_point(self._release, command, gpu, kind=kind, label=label, source=source, outcome=outcome,
                            phase=phase)

    def explain(self, req: ExplainRequest) -> dict[str, Any]:
        from hybridplan.engine.vllm.serving.explain import explain_vllm

        if not req.command:
            raise BadInput("no launch command given; put it after `--`, e.g. "
                           "`hybridplan explain --engine vllm --kv-memory-gib 40 -- vllm serve Qwen/Qwen3.5-27B`")
        return explain_vllm(text_of(req.command), version=self._release, kv_memory_gib=req.kv_memory_gib, gpu=req.gpu,
                            others_gib=req.others_gib, gpu_memory_gib=req.gpu_memory_gib, evidence=req.evidence)

    def plan(self, req: PlanRequest) -> dict[str, Any]:
        from hybridplan.engine.vllm.serving.launch import VllmTarget, card
        from hybridplan.engine.vllm.serving.plan import plan_vllm

        if not req.command:
            raise BadInput("command: the vLLM launch to plan (vllm serve MODEL ...) is required with `engine: vllm`"
                           " (on the command line: after `--`)")
        target = VllmTarget(command=text_of(req.command), kv_memory_gib=req.kv_memory_gib,
                            card=card(req.gpu, memory_gib=req.gpu_memory_gib), request_length=req.request_length,
                            concurrency=req.concurrency,
                            max_util=MAX_UTIL_PROPOSED if req.max_util is None else req.max_util)
        return plan_vllm(target, self._release, req.gpu, req.gpu_memory_gib, req.evidence)

    def writes(self, text: str) -> bool:
        from hybridplan.engine.vllm.serving.logcheck import OWN_LINES

        return any(line in text for line in OWN_LINES)

    def parse_log(self, text: str, name: str = "log") -> dict[str, Any]:
        from dataclasses import asdict

        from hybridplan.engine.logtext import check_bounds
        from hybridplan.engine.vllm.serving.logcheck import missing, read_log

        check_bounds(text, name)
        log, mem, failed = read_log(text, name)
        return {"capacity": asdict(log), "memory": asdict(mem), "failure": None if failed is None else failed.as_dict(),
                "missing": missing(log, mem, failed is not None)}

    def check_log(self, req: LogCheckRequest, name: str = "log") -> dict[str, Any]:
        from hybridplan.engine.logtext import check_bounds
        from hybridplan.engine.vllm.serving.logcheck import check_vllm_log

        check_bounds(req.log, name)
        if req.log_version is not None:
            raise BadInput("log_version: an sglang build; vLLM's log states its release (use engine_version)")
        launch = text_of(req.command) if req.command else None
        return check_vllm_log(req.log, launch, gpu=req.gpu, version=req.engine_version, name=name)

    def ratio(self, req: RatioRequest) -> dict[str, Any]:
        raise BadInput("ratio: vLLM has no state-pool ratio (its state pages come out of the one paged pool); "
                       "`plan --engine vllm` sizes a launch for a workload")

    def launch_settings(self, command: str | tuple[str, ...]) -> LaunchSettings:
        from hybridplan.engine.vllm.serving.compare import settings

        return settings(self, text_of(command))

    def compare_launch(self, req: CompareRequest) -> CompareLaunch:
        """The launch `compare` runs: the user's own where it is this engine's, else the shared settings carried
        over (the model at the length, TP and KV dtype, the rest at the release's defaults)."""
        from hybridplan.engine.vllm.serving.compare import compare_launch

        return compare_launch(self, req)

    def compare_leg(self, req: CompareRequest) -> CompareLeg:
        from hybridplan.engine.vllm.serving.compare import leg

        return leg(self, req)


    def fleet_layouts(self, req: FleetRequest) -> list[FleetLayout]:
        from hybridplan.engine.vllm.serving.fleet import layouts

        return layouts(req, self.version)

    def fleet_launch(self, req: FleetRequest, layout: FleetLayout, servers: Mapping[str, int]) -> FleetLaunch:
        from hybridplan.engine.vllm.serving.fleet_launch import launch

        return launch(req, layout, servers, self.version)

def serving(version: str | None = None) -> VllmServing:
    """The release modelling `version` (the default when None; a dev, rc or unmodelled build by the newest modelled
    release not newer than it, engine/vllm/versions.py)."""
    return VllmServing(for_version(version).version, asked=version)
