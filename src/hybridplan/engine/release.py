"""What every modelled engine release offers (EngineRelease), and the one protocol every surface asks of an engine
(ServingEngine); engine.api hands them out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol

from hybridplan.engine.registry import FlagRegistry
from hybridplan.engine.requests import CompareLaunch, CompareLeg, CompareRequest, ExplainRequest, LaunchSettings, LogCheckRequest, PlanRequest, RatioRequest

if TYPE_CHECKING:  # the fleet's types are built only where a fleet is planned
    from hybridplan.engine.fleet_requests import FleetLaunch, FleetLayout, FleetRequest
    from hybridplan.evidence import EvidencePoint


class EngineRelease(Protocol):
    """What every modelled engine release offers, whichever way it lays out memory."""

    @property
    def name(self) -> str:
        """The engine: "sglang" or "vllm"."""
        ...

    @property
    def version(self) -> str:
        """The release, e.g. "0.5.23" or "0.33.0"."""
        ...

    @property
    def rules_package(self) -> str:
        """The Python package whose functions mirror this release (conformance reports name rules under it)."""
        ...

    def registry(self) -> FlagRegistry:
        """The release's flag registry (its argparse options, defaults and choices)."""
        ...


class ServingEngine(EngineRelease, Protocol):
    """One release of one engine, as every surface asks it. Each method answers with the JSON payload of its surface
    (what `--json` prints and the web returns); bad input raises BadInput, a launch the engine would refuse
    EngineRefusal (or comes back under `error` where the surface still has numbers to show)."""

    @property
    def display_name(self) -> str:
        """The engine's name as its project writes it ("SGLang", "vLLM")."""
        ...

    @property
    def layout(self) -> str:
        """How the engine holds a hybrid model's memory, which the text renderers follow: "state_and_kv_pools" (a
        state pool of slots and a KV pool of tokens, fixed at startup) or "paged_pool" (attention and state pages in
        one pool of blocks)."""
        ...

    def takes(self, surface: str) -> frozenset[str]:
        """The request fields the engine's `surface` ("explain", "plan", "logs") takes; the edges refuse others."""
        ...

    def launches(self, command: str | tuple[str, ...]) -> bool:
        """Whether the launch runs one of this engine's server programs (a bare flag list runs none)."""
        ...

    def model_refs(self, command: str | tuple[str, ...]) -> tuple[str | None, str | None]:
        """The model and draft references a launch names, as its parser reads them (the web keys uploads by them)."""
        ...

    def workload(self, command: str | tuple[str, ...]) -> tuple[int | None, int | None]:
        """What a launch asks of the engine, by its own parser and resolution: the context length it serves (the
        launch's flag, else the model's; None where the engine picks it at startup) and the requests it lets run at
        once where the launch caps them (None where it sets no cap). `guard --fix` plans for them."""
        ...

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The variables of a process environment the engine's rules read (the guard hands them to explain with the
        launch, as the engine will see them)."""
        ...

    def launch_evidence(self, command: str, gpu: str, *, kind: str, label: str, source: str,
                        outcome: Literal["served", "failed"], phase: str | None) -> EvidencePoint:
        """A measured launch of this release on the card (its catalog id; a public report, a page's record) as evidence for its
        verdicts: its facts read by the engine's own parser and resolution. BadInput or EngineRefusal when the
        engine refuses the command (no evidence then)."""
        ...

    def explain(self, req: ExplainRequest) -> dict[str, Any]:
        """What the engine allocates for the launch, and why; with a card, the memory timeline and the verdict."""
        ...

    def plan(self, req: PlanRequest) -> dict[str, Any]:
        """The fewest changes to the launch that serve the target, each with its reason, or why none does."""
        ...

    def writes(self, text: str) -> bool:
        """Whether `text` holds a line this engine's boot log writes (the surfaces name the engine that wrote a log
        handed to another one)."""
        ...

    def parse_log(self, text: str, name: str = "log") -> dict[str, Any]:
        """What a boot log of this engine states, and `missing`: the lines a check needs that it lacks (none when
        a failure says where it stopped). BadInput when it holds none of the engine's lines."""
        ...

    def check_log(self, req: LogCheckRequest, name: str = "log") -> dict[str, Any]:
        """Predicted against logged, with the rule behind each difference; `explained` only when something was
        compared and every difference is explained; `missing` as parse_log's. BadInput when the log holds none of
        the engine's lines."""
        ...

    def ratio(self, req: RatioRequest) -> dict[str, Any]:
        """The state/KV balance for a workload, where the engine has a knob for it."""
        ...

    def launch_settings(self, command: str | tuple[str, ...]) -> LaunchSettings:
        """What a launch of this engine states in the settings every engine shares (model, TP, context length, KV
        and state dtypes, speculative decoding, request cap, prefill chunk, prefix caching), by its own parser, and
        the flags it sets that no other engine has (what `compare` cannot carry over)."""
        ...

    def compare_launch(self, req: CompareRequest) -> CompareLaunch:
        """The launch `compare` runs on this engine: the user's own (`req.command` for this engine), else one carried
        over from the shared settings, with what it carried, added and could not carry."""
        ...

    def compare_leg(self, req: CompareRequest) -> CompareLeg:
        """This engine's side of `compare`."""
        ...

    def fleet_layouts(self, req: FleetRequest) -> list[FleetLayout]:
        """Every layout the engine can run the model in on the card (or why not), each role sized for sessions of
        L tokens by the engine model and the evidence-bound planner: what one server holds and what binds it."""
        ...

    def fleet_launch(self, req: FleetRequest, layout: FleetLayout, servers: Mapping[str, int]) -> FleetLaunch:
        """One of its layouts at a scale (`servers`: servers per role): the launch of every role and node, each fed
        back through the engine's verdict on the card."""
        ...
