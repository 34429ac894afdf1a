"""render(page, selection) -> Rendered: the Deploy panel's command for one selection, and everything shown with it.

Steps (cookbook-semantics §3): defaults + the user's picks, snap unpicked match dims to a cell, reseat hidden or
disabled picks, find the cell; give it a slot for the calculator's ratio (if it sizes nothing itself), compose the
overlays, fill the slot with the ratio computed on that composed *base* command, inject the multi-node trio, then
write the pip or docker text. Optional Playground-style deltas give the *effective* command, whose own ratio is
computed on the effective flags and env (the env rides with the flags it belongs to, §7.5).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Mapping

from hybridplan.cookbook import compose as C
from hybridplan.cookbook import engine_view, guide, selection as S, text as T
from hybridplan.cookbook.conditions import evaluate
from hybridplan.cookbook.schema import Cell, Hardware, Page, PageWorkload

if TYPE_CHECKING:
    from hybridplan.cookbook.ratio import RatioResult
    from hybridplan.evidence import EvidenceSource
    from hybridplan.hardware.platform import Platform

BADGE_LABELS = {"verified": "Verified", "in-progress": "Final Verification In Progress",
                "unverified": "Not Verified"}
NO_COMMAND = "# No command available for the current selection."


@dataclass(frozen=True)
class Delta:
    """Playground-style changes on top of the Deploy command: flags replace their family in place (new families go
    before --host), `strip` removes families, env entries replace their key."""

    flags: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    strip: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rendered:
    """One selection's output. `as_dict()` is exactly the `cookbook render --json` payload."""

    page: str
    selection: dict[str, str]
    reseated: tuple[S.Reseat, ...]
    cell: dict[str, Any] | None  # {"index", "match"} of the matched cell
    flags: tuple[str, ...]  # one flag with its value each, command order, placeholders filled
    env: tuple[str, ...]
    hints: tuple[str, ...]
    command: str
    mode: str  # pip | docker
    badge: str  # verified | in-progress | unverified
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    options: dict[str, list[S.OptionState]]
    model_name: str
    docker_image: str | None
    nnodes: int
    redirect: bool
    ratio: dict[str, Any]  # {"cell", "base", "effective"}: RatioResult dicts or None; "pinned": where the ratio came from
    verification: dict[str, Any] | None
    curl: str | None
    effective: dict[str, Any] | None = None  # {"flags", "env", "command"} when deltas were given
    benchmarks: tuple[dict[str, Any], ...] = ()  # {"concurrency", "command"}: reproduce the measurements behind this badge
    engine_version: str = ""
    install: dict[str, Any] | None = None  # guide.install: pip at the pinned commit, the docker image and its commit
    build_warnings: tuple[dict[str, Any], ...] = ()  # what the build needs for this selection (guide.build_warnings)
    examples: tuple[dict[str, Any], ...] = ()  # invocation examples {"id", "title", "command"}
    accuracy: tuple[dict[str, Any], ...] = ()  # {"eval", "command"}: the page's accuracy runs
    calculator: dict[str, Any] | None = None  # {"request_length", "concurrency", "base", "effective"}: `ratio --json` each
    badge_evidence: dict[str, Any] | None = None  # cookbook.badge: does the evidence back the badge (with a source)

    @property
    def badge_label(self) -> str:
        return BADGE_LABELS[self.badge]

    def as_dict(self) -> dict[str, Any]:
        return {
            "page": self.page, "engine_version": self.engine_version, "selection": dict(self.selection),
            "reseated": [r.as_dict() for r in self.reseated], "cell": self.cell, "flags": list(self.flags),
            "env": list(self.env), "hints": list(self.hints), "command": self.command, "mode": self.mode,
            "badge": self.badge, "badge_label": self.badge_label, "warnings": list(self.warnings),
            "notes": list(self.notes), "options": {d: [o.as_dict() for o in v] for d, v in self.options.items()},
            "model_name": self.model_name, "docker_image": self.docker_image, "nnodes": self.nnodes,
            "redirect": self.redirect, "ratio": self.ratio, "verification": self.verification, "curl": self.curl,
            "effective": self.effective, "benchmarks": list(self.benchmarks), "install": self.install,
            "build_warnings": list(self.build_warnings), "examples": list(self.examples),
            "accuracy": list(self.accuracy), "calculator": self.calculator, "badge_evidence": self.badge_evidence,
        }


@dataclass(frozen=True, kw_only=True)
class _Shared:
    """What every Rendered of one selection carries, whichever cell (or none) it lands on."""

    page: str
    selection: dict[str, str]
    reseated: tuple[S.Reseat, ...]
    options: dict[str, list[S.OptionState]]
    model_name: str
    docker_image: str | None
    mode: str
    engine_version: str
    curl: str | None
    install: dict[str, Any] | None
    benchmarks: tuple[dict[str, Any], ...] = ()
    build_warnings: tuple[dict[str, Any], ...] = ()
    accuracy: tuple[dict[str, Any], ...] = ()

    def rendered(self, *, cell: dict[str, Any] | None, command: str, badge: str, verification: dict[str, Any] | None,
                 ratio: dict[str, Any], flags: tuple[str, ...] = (), env: tuple[str, ...] = (),
                 hints: tuple[str, ...] = (), warnings: tuple[str, ...] = (), notes: tuple[str, ...] = (),
                 nnodes: int = 1, redirect: bool = False, effective: dict[str, Any] | None = None,
                 calculator: dict[str, Any] | None = None, examples: tuple[dict[str, Any], ...] = ()) -> Rendered:
        return Rendered(
            page=self.page, selection=self.selection, reseated=self.reseated, cell=cell, flags=flags, env=env,
            hints=hints, command=command, mode=self.mode, badge=badge, warnings=warnings, notes=notes,
            options=self.options, model_name=self.model_name, docker_image=self.docker_image, nnodes=nnodes,
            redirect=redirect, ratio=ratio, verification=verification, curl=self.curl, effective=effective,
            benchmarks=self.benchmarks, engine_version=self.engine_version, install=self.install,
            build_warnings=self.build_warnings, examples=examples, accuracy=self.accuracy, calculator=calculator)


def resolve_selection(page: Page, picks: Mapping[str, str] | None) -> tuple[dict[str, str], list[S.Reseat]]:
    """The selection a set of picks lands on: defaults under the picks, unpicked match dims snapped to a cell that
    agrees with the picked ones, then hidden/disabled picks reseated (with the reason for each move)."""
    picks = dict(picks or {})
    sel = {**S.default_selection(page), **picks}
    sel = S.snap(page, sel, fixed={d for d in page.dims if d in picks})
    return S.reseat(page, sel)


def _hardware(page: Page, hw_id: str) -> Hardware:
    return next(h for h in page.hardware if h.id == hw_id)


def _platform(hw: Hardware) -> Platform | None:
    """The engine Platform of a hardware choice (from the GPU catalog), or None when it names no GPU."""
    if hw.gpu is None:
        return None
    from hybridplan.hardware.catalog import lookup

    return lookup(hw.gpu).platform()


def _calculator(page: Page, workload: PageWorkload, flags: list[str], env: list[str],
                values: Mapping[str, str]) -> RatioResult:
    """The balanced ratio for a composed command at the page's workload."""
    from hybridplan.cookbook.ratio import balanced

    cmd = engine_view.launch_command(flags, env, values)
    return balanced(cmd, workload.request_length, workload.concurrency, page.engine_version)


def _calculator_view(page: Page, workload: PageWorkload, flags: list[str], env: list[str],
                     values: Mapping[str, str]) -> dict[str, Any]:
    """One side of the calculator panel: the command it reads (with its own env) and the `ratio --json` object for
    it at the page's workload (or `{"error"}`)."""
    r = _calculator(page, workload, flags, env, values)
    flags_, env_ = [T.interpolate(f, values) for f in flags], [T.interpolate(e, values) for e in env]
    return {"command": " ".join([*env_, page.program, *flags_]), "flags": flags_, "env": env_,
            "ratio": dict(r.detail) if r.detail else {"error": r.error}}


@dataclass(frozen=True)
class Composed:
    """A cell under a selection's overlay picks: the base command (no calculator ratio), the command with the
    state pool sized (calculator ratio in its slot), and the ratio info (`cell`, `base`, `effective`, `pinned`)."""

    picks: C.Picks
    base_flags: list[str]
    env: list[str]
    flags: list[str]
    ratio: dict[str, Any]


def compose_cell(page: Page, sel: Mapping[str, str], cell: Cell, values: Mapping[str, str], *,
                 pin_ratio: bool = True) -> Composed:
    """Give the cell a ratio slot, compose the overlays, then fill the slot with the calculator's ratio computed on
    the composed base command with the env that belongs to it (cellWithRatio, §3.5; base env keyed on base flags)."""
    picks = C.overlay_picks(page, sel)
    slotted = C.overlay_compose(C.with_ratio_slot(cell.flags), picks.flags, picks.strip)
    base_flags = C.without_slot(slotted)
    env = C.merge_env(cell.env, picks.env)
    ratio: dict[str, Any] = {"cell": None, "base": None, "effective": None, "pinned": _pinned_by(cell.flags, picks.flags)}
    base_r = None
    if pin_ratio and page.workload is not None:
        cell_r = _calculator(page, page.workload, list(cell.flags), list(cell.env), values)
        base_r = _calculator(page, page.workload, base_flags, env, values)
        ratio.update(cell=cell_r.as_dict(), base=base_r.as_dict(), effective=base_r.as_dict())
    flags = C.fill_ratio_slot(slotted, base_r.text if base_r else None)
    if ratio["pinned"] is None and any(C.family(f) == C.RATIO for f in flags):
        ratio["pinned"] = "calculator"
    return Composed(picks=picks, base_flags=base_flags, env=env, flags=flags, ratio=ratio)


def _text(page: Page, *, flags: list[str], env: list[str], hints: list[str], hw: Hardware, image: str | None,
          docker: bool, nnodes: int, values: Mapping[str, str]) -> str:
    body = (T.docker_text(program=page.program, flags=flags, env=env, image=image or "", hw=hw,
                          multi_node=nnodes > 1, hf_token="HF_TOKEN" in page.placeholders, mounts=page.docker_mounts)
            if docker else T.pip_text(page.program, flags, env))
    text = T.interpolate("\n".join(T.hint_lines(hints) + [body]), values)
    return "\n".join(T.multi_node_header(nnodes) + [text]) if nnodes > 1 else text


def render(page: Page, picks: Mapping[str, str] | None = None, *, docker: bool = False,
           placeholders: Mapping[str, str] | None = None, delta: Delta | None = None,
           pin_ratio: bool = True, evidence: EvidenceSource | None = None) -> Rendered:
    """The command and its badge, warnings, greyed options and ratio for a selection.

    `picks` maps dim ids (`hw`, match and overlay dims) to option ids; missing dims take the page defaults.
    `placeholders` overrides placeholder values (the docs' Env modal). `delta` adds Playground-style changes and
    yields `effective`. `pin_ratio=False` leaves the calculator out (the raw recipe). With `evidence` (the measured
    launches, planner.evidence.EvidenceSource), `badge_evidence` says whether they back the badge.
    """
    sel, moves = resolve_selection(page, picks)
    out = render_landed(page, sel, moves, docker=docker, placeholders=placeholders, delta=delta, pin_ratio=pin_ratio)
    if evidence is None or out.cell is None or out.redirect:
        return out
    from hybridplan.cookbook.badge import badge_evidence

    return replace(out, badge_evidence=badge_evidence(page, sel["hw"], out.flags, out.env, out.badge, evidence))


def render_landed(page: Page, sel: dict[str, str], moves: list[S.Reseat], *, docker: bool = False,
                  placeholders: Mapping[str, str] | None = None, delta: Delta | None = None,
                  pin_ratio: bool = True, panel: bool = True) -> Rendered:
    """render() from a resolve_selection result already at hand (the matrix resolved every pick combination).

    `panel=False` leaves out what only the Deploy panel shows (calculator view, examples, benchmark and accuracy
    commands, install, build warnings, curl): the matrix and the checker read none of them."""
    ref = S.find_cell(page, sel)
    options = S.option_states(page, sel)
    model_name = T.first_match(page.model_names, sel) or ""
    image = T.first_match(page.docker_images, sel)
    values = T.placeholder_values(page, model_name, placeholders)
    hw = _hardware(page, sel["hw"])
    shared = _Shared(page=page.id, selection=sel, reseated=tuple(moves), options=options, model_name=model_name,
                     docker_image=image, mode="docker" if docker else "pip", engine_version=page.engine_version,
                     curl=T.interpolate(page.curl, values) if page.curl and panel else None,
                     install=guide.install(page, image) if panel else None)
    if ref is None:
        return shared.rendered(cell=None, command=NO_COMMAND, badge="unverified", verification=None,
                               ratio={"cell": None, "base": None, "effective": None, "pinned": None})
    cell = ref.cell
    status = cell.verification.status_for(sel)
    measured = [m for m in cell.verification.measurements if evaluate(m.covers, sel)]
    verification = {"status": status, "build": cell.verification.build, "image": cell.verification.image,
                    "measurements": [m.model_dump(mode="json", exclude_none=True, exclude={"covers"})
                                     for m in measured]}
    if panel:
        shared = replace(shared, benchmarks=tuple(T.benchmark_lines(page, measured, values)),
                         build_warnings=tuple(guide.build_warnings(page, sel)),
                         accuracy=tuple(guide.accuracy(page, values)))
    cell_info = {"index": ref.index, "match": dict(ref.match)}
    if cell.redirect:
        return shared.rendered(cell=cell_info, command="", badge=status, warnings=(cell.warn,) if cell.warn else (),
                               nnodes=cell.nnodes, redirect=True, verification=verification,
                               ratio={"cell": None, "base": None, "effective": None, "pinned": None})
    comp = compose_cell(page, sel, cell, values, pin_ratio=pin_ratio)
    picks_, base_flags, base_env, ratio = comp.picks, comp.base_flags, comp.env, comp.ratio
    nnodes = C.nnodes_for(page, sel, cell.nnodes)
    flags = C.inject_multi_node(comp.flags, nnodes)
    hints = list(picks_.hints) + (page.multi_node_hints.get(sel["hw"], []) if nnodes > 1 else [])
    platform = _platform(hw)
    loaded = engine_view.resolve(engine_view.launch_command(base_flags, base_env, values), page.engine_version,
                                 platform)
    warnings, notes = engine_view.spec_banners(flags, loaded)
    warnings = ([cell.warn] if cell.warn else []) + warnings
    notes = ([cell.note] if cell.note else []) + notes + [n for n in (page.engine_version_note,) if n]
    if isinstance(loaded, Exception):
        warnings.append(f"the engine model (sglang {page.engine_version}) rejects this command: {loaded.message}")
    effective = None
    calculator: dict[str, Any] | None = None
    workload = page.workload if pin_ratio else None
    if workload is not None and panel:
        calculator = {"request_length": workload.request_length, "concurrency": workload.concurrency,
                      "base": _calculator_view(page, workload, base_flags, base_env, values), "effective": None}
    if delta is not None:
        eff_flags = C.apply_delta(base_flags, delta.flags, delta.strip)
        eff_env = C.merge_env(base_env, delta.env)
        if calculator is not None and workload is not None:
            calculator["effective"] = _calculator_view(page, workload, eff_flags, eff_env, values)
        eff_r = _calculator(page, workload, eff_flags, eff_env, values) if workload is not None else None
        ratio["effective"] = eff_r.as_dict() if eff_r else None
        if eff_r and eff_r.text is not None and not any(C.family(f) in (C.RATIO, C.EXPLICIT_SIZE) for f in eff_flags):
            eff_flags = C.apply_delta(eff_flags, (f"{C.RATIO} {eff_r.text}",))
        eff_flags = C.inject_multi_node(eff_flags, nnodes)
        effective = {"flags": [T.interpolate(f, values) for f in eff_flags],
                     "env": [T.interpolate(e, values) for e in eff_env],
                     "command": _text(page, flags=eff_flags, env=eff_env, hints=hints, hw=hw, image=image,
                                      docker=docker, nnodes=nnodes, values=values)}
    command = _text(page, flags=flags, env=base_env, hints=hints, hw=hw, image=image, docker=docker, nnodes=nnodes,
                    values=values)
    return shared.rendered(cell=cell_info, flags=tuple(T.interpolate(f, values) for f in flags),
                           env=tuple(T.interpolate(e, values) for e in base_env), hints=tuple(hints), command=command,
                           badge=status, warnings=tuple(warnings), notes=tuple(notes), nnodes=nnodes,
                           verification=verification, ratio=ratio, effective=effective, calculator=calculator,
                           examples=tuple(guide.examples(page, sel, flags, values)) if panel else ())


def _pinned_by(cell_flags: list[str], overlay_flags: tuple[str, ...]) -> str | None:
    """Who sizes the state pool before the calculator is asked: the cell itself, or an overlay pick."""
    sizes = (C.RATIO, C.EXPLICIT_SIZE)
    if any(C.family(f) in sizes for f in cell_flags):
        return "cell"
    if any(C.family(f) in sizes for f in overlay_flags):
        return "overlay"
    return None
