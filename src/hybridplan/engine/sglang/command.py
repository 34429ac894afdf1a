"""A launch command as the user typed it: leading env assignments, the program, and the flag tokens."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from hybridplan.errors import BadInput
from hybridplan.limits import MAX_COMMAND_CHARS

_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# The launchers the engine ships: `python -m sglang.launch_server`, `sglang serve`, `python -m sglang.cli.serve ...`
_PROGRAMS = (
    ("python", "-m", "sglang.launch_server"),
    ("python3", "-m", "sglang.launch_server"),
    ("sglang", "serve"),
    ("python", "-m", "sglang.serve"),
    ("python3", "-m", "sglang.serve"),
)
_SHELL_TAIL = {"|", "||", "&&", ";", ">", ">>", "2>&1", "&", "2>"}


@dataclass(frozen=True, kw_only=True)
class LaunchCommand:
    """The user's command split into env, program and argv (flags exactly as typed, in order)."""

    env: tuple[tuple[str, str], ...] = ()
    program: tuple[str, ...] = ("python", "-m", "sglang.launch_server")
    argv: tuple[str, ...] = ()
    positional_model: bool = False  # `sglang serve <model>` form
    dropped: tuple[str, ...] = field(default=())  # shell tail that is not part of the server command

    @property
    def env_dict(self) -> dict[str, str]:
        return dict(self.env)

    def with_env(self, **extra: str) -> "LaunchCommand":
        """The same command with env assignments added or replaced (an overlay)."""
        merged = dict(self.env)
        merged.update(extra)
        return LaunchCommand(env=tuple(merged.items()), program=self.program, argv=self.argv,
                             positional_model=self.positional_model)

    def with_argv(self, argv: list[str] | tuple[str, ...]) -> "LaunchCommand":
        return LaunchCommand(env=self.env, program=self.program, argv=tuple(argv), positional_model=False)

    def text(self) -> str:
        """The command as one shell line (env, program, flags), quoted where needed; a model typed positionally
        (`sglang serve MODEL`) stays positional while it leads the flags."""
        argv = self.argv[1:] if self.positional_model and self.argv[:1] == ("--model-path",) else self.argv
        parts = [f"{k}={shlex.quote(v)}" for k, v in self.env]
        parts += list(self.program)
        parts += [shlex.quote(a) for a in argv]
        return " ".join(parts)


def _strip_program(tokens: list[str]) -> tuple[tuple[str, ...], list[str], bool]:
    """Split off a recognised launcher; a bare flag list is taken as `python -m sglang.launch_server` flags."""
    if not tokens or tokens[0].startswith("-"):
        return ("python", "-m", "sglang.launch_server"), tokens, False
    head = tokens[0].rsplit("/", 1)[-1]
    normalized = [head] + tokens[1:]
    for prog in _PROGRAMS:
        n = len(prog)
        if tuple(normalized[:n]) == prog or (prog[0].startswith("python") and head.startswith("python")
                                              and tuple(normalized[1:n]) == prog[1:]):
            rest = tokens[n:]
            positional = False
            if prog[:2] == ("sglang", "serve") and rest and not rest[0].startswith("-"):
                rest = ["--model-path", rest[0], *rest[1:]]  # cli/serve.py::_normalize_positional_model_path
                positional = True
            return tuple(tokens[:n]), rest, positional
    raise BadInput(
        f"not an SGLang server command: {' '.join(tokens[:3])!r} "
        "(expected `python -m sglang.launch_server ...`, `sglang serve ...` or bare `--flags`)"
    )


def parse_command(text_or_tokens: str | list[str] | tuple[str, ...]) -> LaunchCommand:
    """Parse the command text (or already-split tokens) the way a shell would run it."""
    size = len(text_or_tokens) if isinstance(text_or_tokens, str) else sum(len(t) + 1 for t in text_or_tokens)
    if size > MAX_COMMAND_CHARS:
        raise BadInput(f"launch command: {size:,} characters, over the {MAX_COMMAND_CHARS:,}-character bound "
                       "(ARG_MAX: no shell could run it)")
    if isinstance(text_or_tokens, str):
        joined = re.sub(r"\\\r?\n", " ", text_or_tokens)
        try:
            tokens = shlex.split(joined, comments=True)
        except ValueError as exc:
            raise BadInput(f"cannot split the launch command: {exc}") from None
    else:
        tokens = [t for t in text_or_tokens if t != "\\"]
    env: list[tuple[str, str]] = []
    i = 0
    if tokens and tokens[0] == "env":
        i = 1
    while i < len(tokens) and _ENV_RE.match(tokens[i]):
        key, _, value = tokens[i].partition("=")
        env.append((key, value))
        i += 1
    rest = tokens[i:]
    dropped: list[str] = []
    for j, tok in enumerate(rest):
        if tok in _SHELL_TAIL or tok.startswith(("2>", ">", "|")):
            dropped = rest[j:]
            rest = rest[:j]
            break
    if not rest and not env:
        raise BadInput("empty launch command")
    program, argv, positional = _strip_program(rest)
    return LaunchCommand(env=tuple(env), program=program, argv=tuple(argv), positional_model=positional,
                         dropped=tuple(dropped))
