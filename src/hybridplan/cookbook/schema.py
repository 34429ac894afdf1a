"""The cookbook page format (one YAML file per page), validated by pydantic at load.

Vocabulary (after the SGLang docs' Deploy engine, see reference/cookbook-semantics.md §2):
  * hardware: the implicit first match dimension `hw`;
  * match dimensions pick a measured *cell* (`cell.match[dim] == selection[dim]` for hw and every match dim);
  * overlay dimensions never affect the lookup; the picked option layers flags/env onto the matched cell;
  * a cell is a flat flag/env list pinned on one build, with its verification status and measurement records.
Anything that depends on the selection is a `Condition` (data) or a list of `Item`s (strings, or
`{when, then, else}` branches), never code.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from itertools import product
from typing import Annotated, Any, Literal, Mapping, Optional, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, PrivateAttr, Tag, field_validator, model_validator

from hybridplan.cookbook.conditions import Condition, Selection, evaluate
from hybridplan.limits import MAX_CONTEXT, MAX_LIST, MAX_PAGE_COMBOS, MAX_PARALLEL, MAX_POOL_TOKENS, MAX_REQUESTS
from hybridplan.cookbook.records import Record

ID = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")]
PLACEHOLDER = re.compile(r"\{\{([A-Z0-9_]+)\}\}")
STATUSES = ("verified", "in-progress", "unverified")
Status = Literal["verified", "in-progress", "unverified"]


class Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, allow_inf_nan=False)


class Branch(Model):
    """`{when: <condition>, then: [...], else: [...]}`: items that apply only for some selections."""

    when: Condition
    then: list["Item"] = Field(default_factory=list)
    else_: list["Item"] = Field(default_factory=list, alias="else")


Item = Annotated[
    Union[Annotated[str, Tag("str")], Annotated[Branch, Tag("branch")]],
    Discriminator(lambda v: "str" if isinstance(v, str) else "branch" if isinstance(v, (dict, Branch)) else None,
                  custom_error_type="item",
                  custom_error_message="an item is a string or a mapping {when, then, else}"),
]
Branch.model_rebuild()


def expand(items: list[Item], sel: Selection) -> list[str]:
    """The strings a list of items contributes for one selection, in order."""
    out: list[str] = []
    for it in items:
        if isinstance(it, str):
            out.append(it)
        else:
            out.extend(expand(it.then if evaluate(it.when, sel) else it.else_, sel))
    return out


def every_string(items: list[Item]) -> list[tuple[tuple[Any, ...], str]]:
    """Every string in every branch, with its location below the list (for static checks)."""
    out: list[tuple[tuple[Any, ...], str]] = []
    for i, it in enumerate(items):
        if isinstance(it, str):
            out.append(((i,), it))
        else:
            out += [((i, "then") + loc, s) for loc, s in every_string(it.then)]
            out += [((i, "else") + loc, s) for loc, s in every_string(it.else_)]
    return out


class DisableRule(Model):
    """`{when, reason}`: the option is greyed out while `when` holds; the reason is its tooltip."""

    when: Condition
    reason: str = Field(min_length=1)


class Option(Model):
    """One choice in a row. Overlay options contribute flags/env/strip/hints; match options only select cells."""

    id: ID
    label: str
    subtitle: Optional[str] = None
    show_when: Condition = True
    disabled: list[DisableRule] = Field(default_factory=list)
    flags: list[Item] = Field(default_factory=list)
    env: list[Item] = Field(default_factory=list)
    strip: list[Item] = Field(default_factory=list)
    hints: list[Item] = Field(default_factory=list)
    nnodes: Optional[int] = Field(default=None, ge=1, le=MAX_PARALLEL)

    @field_validator("disabled", mode="before")
    @classmethod
    def _one_rule(cls, v: Any) -> Any:
        return [v] if isinstance(v, dict) else v

    def disabled_reason(self, sel: Selection) -> str | None:
        """The first disable rule that holds (its reason), else None."""
        for rule in self.disabled:
            if evaluate(rule.when, sel):
                return rule.reason
        return None


class Dimension(Model):
    """A selector row. `strip` (row level) applies with whichever option of the row is picked."""

    id: ID
    title: str
    options: list[Option] = Field(min_length=1)
    default: Optional[str] = None
    show_when: Condition = True
    strip: list[Item] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique(self) -> Dimension:
        ids = [o.id for o in self.options]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"duplicate option ids in {self.id}: {', '.join(dup)}")
        if self.default is not None and self.default not in ids:
            raise ValueError(f"default {self.default!r} is not an option of {self.id} ({', '.join(ids)})")
        return self

    def option(self, oid: str) -> Option | None:
        return next((o for o in self.options if o.id == oid), None)

    @property
    def default_id(self) -> str:
        return self.default or self.options[0].id


class StatusRule(Model):
    when: Condition
    status: Status


class Workload(Model):
    isl: int = Field(ge=1, le=MAX_CONTEXT)
    osl: int = Field(ge=0, le=MAX_CONTEXT)
    concurrency: list[Annotated[int, Field(ge=1, le=MAX_REQUESTS)]] = Field(default_factory=lambda: [1],
                                                                         max_length=MAX_LIST)
    dataset: str = "random"
    num_prompts: Optional[int] = Field(default=None, ge=1, le=MAX_REQUESTS)

    @field_validator("concurrency", mode="before")
    @classmethod
    def _listify(cls, v: Any) -> Any:
        return [v] if isinstance(v, int) else v


class Measurement(Model):
    """One measured run behind a pin: what ran, on which build, and what the engine reported."""

    date: Optional[str] = None
    build: Optional[str] = None
    image: Optional[str] = None
    protocol: str
    workload: Optional[Workload] = None
    covers: Condition = True  # the overlay selections this record covers
    outcome: Literal["serves", "boot-failure", "runtime-oom", "degraded"] = "serves"
    max_total_num_tokens: Optional[int] = Field(default=None, ge=0, le=MAX_POOL_TOKENS)
    max_mamba_cache_size: Optional[int] = Field(default=None, ge=0, le=MAX_REQUESTS)
    max_running_requests: Optional[int] = Field(default=None, ge=0, le=MAX_REQUESTS)
    ttft_ms: Optional[float] = Field(default=None, ge=0)
    tpot_ms: Optional[float] = Field(default=None, ge=0)
    tokens_per_sec_per_gpu: Optional[float] = Field(default=None, ge=0)
    accept_length: Optional[float] = Field(default=None, ge=0)
    source: Optional[str] = None  # where the record was published (PR, issue, log)
    note: Optional[str] = None


class Verification(Model):
    """The badge baseline, selection-dependent overrides (first match wins), and what the pins were measured on."""

    status: Status = "unverified"
    rules: list[StatusRule] = Field(default_factory=list)
    build: Optional[str] = None  # engine commit or release the pins were measured on
    image: Optional[str] = None
    measurements: list[Measurement] = Field(default_factory=list)

    def status_for(self, sel: Selection) -> str:
        for rule in self.rules:
            if evaluate(rule.when, sel):
                return rule.status
        return self.status


class KnownRefusal(Model):
    """A finding about the docs' own pin that hybridplan records instead of correcting: while `when` holds, the
    engine model refuses this cell's command for `reason` (a renamed flag, a checkpoint or card hybridplan does not
    have), as `source` shows. `cookbook check` reports such findings as info, naming the reason."""

    when: Condition = True
    reason: str = Field(min_length=1)
    source: str = Field(min_length=1)


class Cell(Model):
    """A measured (or modelled) launch recipe for one match tuple. `match` values may be lists (one cell each)."""

    match: dict[str, Union[str, list[str]]]
    flags: list[str] = Field(default_factory=list)
    env: list[str] = Field(default_factory=list)
    warn: Optional[str] = None
    redirect: bool = False
    nnodes: int = Field(default=1, ge=1, le=MAX_PARALLEL)
    verification: Verification = Field(default_factory=Verification)
    note: Optional[str] = None
    known_refused: list[KnownRefusal] = Field(default_factory=list)


class Hardware(Model):
    """A hardware choice: presentation and docker details; memory and arch come from the GPU catalog (`gpu`)."""

    id: ID
    label: str
    group: str = "nvidia"
    gpu: Optional[str] = None  # hybridplan.hardware catalog id
    vendor: Literal["nvidia", "amd", "other"] = "nvidia"
    multi_node_docker_flags: list[str] = Field(default_factory=list)


class Placeholder(Model):
    target: Literal["command", "curl"] = "command"
    label: str = ""
    default: str


class NamedRule(Model):
    """A first-match-wins lookup row (model names, docker images): no `when` means always."""

    when: Condition = True
    value: str


class NoCellRule(Model):
    """Why a match combination has no cell. `unsupported`: the hardware or engine cannot run it at all
    (the validator does not probe it); otherwise it is merely unmeasured."""

    when: Condition
    reason: str
    unsupported: bool = False


class PageWorkload(Model):
    """The calculator's workload: average request length (input + output tokens) and target concurrency."""

    request_length: int = Field(ge=1, le=MAX_CONTEXT)
    concurrency: int = Field(ge=1, le=MAX_REQUESTS)


class ImageBuild(Model):
    """A docker image and the engine commit it was built from (with where that is said)."""

    image: str = Field(min_length=1)
    commit: str = Field(pattern=r"^[0-9a-f]{7,40}$")
    source: str = Field(min_length=1)


class Install(Model):
    """The page's build: pip from source at `commit`, or docker: an image known to carry the commit, else
    `docker_build` (the image built at that commit)."""

    commit: Optional[str] = None
    pip: list[str] = Field(default_factory=list)
    docker_build: list[str] = Field(default_factory=list)
    images: list[ImageBuild] = Field(default_factory=list, max_length=MAX_LIST)
    note: Optional[str] = None

    def image_commit(self, image: str | None) -> str | None:
        """The commit an image is recorded to carry, or None."""
        return next((b.commit for b in self.images if b.image == image), None)


class BuildWarning(Model):
    """What a build must contain for some selections (`requires`: a PR or commit), and how a boot fails without it."""

    when: Condition = True
    text: str = Field(min_length=1)
    requires: Optional[str] = None
    symptom: Optional[str] = None  # the engine's own error text without the fix
    source: str = Field(min_length=1)


class Example(Model):
    """An invocation example (a request template with {{MODEL_NAME}} and curl placeholders): shown when `when`
    holds and the rendered command carries every flag family in `needs` (e.g. --tool-call-parser)."""

    id: ID
    title: str = Field(min_length=1)
    command: str = Field(min_length=1)
    when: Condition = True
    needs: list[Annotated[str, Field(pattern=r"^--[a-z0-9-]+$")]] = Field(default_factory=list)


class BenchmarkCommands(Model):
    """Templates to reproduce a measurement: `speed` takes {{DATASET}} {{ISL}} {{OSL}} {{NUM_PROMPTS}}
    {{MAX_CONCURRENCY}} from the measurement's workload; `num_prompts_by_concurrency` overrides max(2c, 200)."""

    speed: Optional[str] = None
    accuracy: dict[str, str] = Field(default_factory=dict)
    num_prompts_by_concurrency: dict[Annotated[int, Field(ge=1, le=MAX_REQUESTS)],
                                     Annotated[int, Field(ge=1, le=MAX_REQUESTS)]] = Field(default_factory=dict)

    def num_prompts(self, w: "Workload", c: int) -> int:
        """The docs' priority: the measurement's own count, the page's table, else max(2c, 200)."""
        return w.num_prompts or self.num_prompts_by_concurrency.get(c) or max(2 * c, 200)


@dataclass(frozen=True)
class _CellIndex:
    """A page's match dims (hw first), the dims above each, and every (dim, value, values above) a cell has."""

    dims: tuple[str, ...]
    above: Mapping[str, tuple[str, ...]]
    prefixes: frozenset[tuple[Any, ...]]


@dataclass(frozen=True)
class CellRef:
    """One concrete cell: its position in the page's `cells` list and its single-valued match tuple."""

    index: int
    match: Mapping[str, str]
    cell: Cell


class DocsText(Model):
    """A stretch of a docs config module kept verbatim by `cookbook import` (from just after the previous comma, so
    its leading comments ride with it). `of` names the page field it was read into: the export writes the text back
    while that field still has `digest` (unchanged since the import) and writes the field out afresh otherwise;
    without `of` it is carried as is (hybridplan does not model it). A container kept part by part (the cells array,
    each cell) is `text` (through its opening bracket) + its `items` joined by commas + `close`; `absent` holds the
    digests of the page fields a cell did not write, so a field the page gains is added and no other."""

    key: Optional[str] = None
    text: str
    of: Optional[str] = None
    digest: Optional[str] = None
    items: list["DocsText"] = Field(default_factory=list)
    close: str = ""
    absent: dict[str, str] = Field(default_factory=dict)

    def whole(self) -> str:
        """The kept text as the module had it."""
        return self.text + ",".join(i.whole() for i in self.items) + self.close if self.items else self.text


class DocsModule(Model):
    """The imported docs config module's layout, so `export --format sglang-jsx` writes the module back as it was:
    the text through `export const config = {` (`head`), its top-level properties in order, and what follows the
    last one (`close`: a trailing comma, comments, `};`). `carried` lists what hybridplan does not model (kept
    verbatim, functions as their source, evaluated only in the Node sandbox); `absent` the digests of page fields
    the module did not have."""

    path: str
    carried: list[str] = Field(default_factory=list)
    absent: dict[str, str] = Field(default_factory=dict)
    head: str
    props: list[DocsText] = Field(max_length=MAX_LIST)
    close: str


class Page(Model):
    """One cookbook page: the selection space, the cells, and everything the command text needs."""

    id: ID
    model: str  # display name
    description: str = ""
    source: str = ""  # where the page's data comes from (docs commit, engine model)
    engine_version: str = "0.5.23"  # absent from a page file: the release its install.commit is (cookbook.builds)
    _version_note: str = PrivateAttr(default="")  # why that release, where the page file does not say it
    supported_hardware: list[str] = Field(min_length=1)
    hardware: list[Hardware] = Field(default_factory=list)
    match_dims: list[Dimension] = Field(default_factory=list)
    overlay_dims: list[Dimension] = Field(default_factory=list)
    cells: list[Cell] = Field(min_length=1)
    model_names: list[NamedRule] = Field(min_length=1)
    docker_images: list[NamedRule] = Field(default_factory=lambda: [NamedRule(value="lmsysorg/sglang:latest")])
    placeholders: dict[str, Placeholder] = Field(default_factory=dict)
    no_cell: list[NoCellRule] = Field(default_factory=list)
    multi_node_hints: dict[str, list[str]] = Field(default_factory=dict)
    workload: Optional[PageWorkload] = None
    program: str = "python -m sglang.launch_server"
    docker_mounts: list[str] = Field(default_factory=list)
    curl: Optional[str] = None
    benchmark_commands: BenchmarkCommands = Field(default_factory=BenchmarkCommands)
    install: Install = Field(default_factory=Install)
    build_warnings: list[BuildWarning] = Field(default_factory=list, max_length=MAX_LIST)
    examples: list[Example] = Field(default_factory=list, max_length=MAX_LIST)
    records: list[Record] = Field(default_factory=list, max_length=256)  # measured launches (cookbook.records)
    docs: Optional[DocsModule] = None  # the docs module this page was imported from, for a faithful export
    _lookup: tuple[CellRef, ...] = PrivateAttr(default=())
    _index: _CellIndex = PrivateAttr(default_factory=lambda: _CellIndex((), {}, frozenset()))

    def model_post_init(self, __context: Any) -> None:
        refs: list[CellRef] = []
        for i, cell in enumerate(self.cells):
            keys = list(cell.match)
            values = [v if isinstance(v, list) else [v] for v in cell.match.values()]
            for combo in product(*values):
                refs.append(CellRef(index=i, match=dict(zip(keys, combo)), cell=cell))
        self._lookup = tuple(refs)
        dims = ("hw", *(d.id for d in self.match_dims))
        self._index = _CellIndex(dims=dims, above={d: dims[:k] for k, d in enumerate(dims)}, prefixes=frozenset(
            (d, ref.match.get(d), tuple(ref.match.get(h) for h in dims[:k])) for ref in refs for k, d in enumerate(dims)))

    def has_cell_with(self, dim: str, option: str, sel: Mapping[str, str]) -> bool:
        """Whether some cell matches `option` on `dim` and agrees with `sel` on every dim above it (isEnabled's cell
        scan, one set probe)."""
        ix: _CellIndex = self.__pydantic_private__["_index"]  # type: ignore[index]  # a slot read: `self._index` goes through pydantic's __getattr__
        return (dim, option, tuple(sel.get(h) for h in ix.above[dim])) in ix.prefixes

    @property
    def lookup(self) -> tuple[CellRef, ...]:
        """Every concrete cell in declaration order (list-valued matches expanded); the first match wins."""
        lookup: tuple[CellRef, ...] = self.__pydantic_private__["_lookup"]  # type: ignore[index]  # a slot read (hot: every snap and find_cell)
        return lookup

    @field_validator("cells")
    @classmethod
    def _bounded_cells(cls, cells: list[Cell]) -> list[Cell]:
        """List-valued matches expand to one concrete cell per combination; bound them before expanding."""
        total = sum(math.prod(len(v) if isinstance(v, list) else 1 for v in c.match.values()) for c in cells)
        if total > MAX_PAGE_COMBOS:
            raise ValueError(f"the cells' list-valued matches expand to {total:,} concrete cells, over the bound of "
                             f"{MAX_PAGE_COMBOS:,}")
        return cells

    @model_validator(mode="after")
    def _dims(self) -> Page:
        ids = ["hw"] + [d.id for d in self.match_dims] + [d.id for d in self.overlay_dims]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"dimension ids must be unique (hw is implicit): {', '.join(dup)}")
        combos = len(self.supported_hardware) * math.prod(len(d.options) for d in self.match_dims + self.overlay_dims)
        if combos > MAX_PAGE_COMBOS:
            raise ValueError(f"hardware x dimension options make {combos:,} selections, over the bound of "
                             f"{MAX_PAGE_COMBOS:,}")
        for key in self.placeholders:
            if not re.fullmatch(r"[A-Z0-9_]+", key):
                raise ValueError(f"placeholder {key!r}: names are UPPER_SNAKE_CASE")
        ex = [e.id for e in self.examples]
        dup = sorted({i for i in ex if ex.count(i) > 1})
        if dup:
            raise ValueError(f"duplicate example ids: {', '.join(dup)}")
        return self

    @property
    def dims(self) -> list[str]:
        """Match dimensions in priority order, hw first (a lower one adapts to a higher one)."""
        return list(self.__pydantic_private__["_index"].dims)  # type: ignore[index]

    def dimension(self, dim: str) -> Dimension | None:
        return next((d for d in self.match_dims + self.overlay_dims if d.id == dim), None)

    def is_overlay(self, dim: str) -> bool:
        return any(d.id == dim for d in self.overlay_dims)

    @property
    def engine_version_note(self) -> str:
        """Where the modelled release came from when the page file has no engine_version ("" when it has)."""
        return self._version_note
