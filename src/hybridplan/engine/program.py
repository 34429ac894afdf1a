"""Which server program a launch runs: the words from the program on (after `env` and NAME=value assignments), and
whether they start with one of an engine's launchers (`vllm serve`, `python -m sglang.launch_server`, any python
interpreter or a path to one). Each engine lists its launchers; `engine.api.launched_by` asks each in turn, so a
command picks its engine without `--engine`."""

from __future__ import annotations

import re
import shlex

from hybridplan.limits import MAX_COMMAND_CHARS

_ENV = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,255}=")


def program_words(command: str | tuple[str, ...]) -> list[str]:
    """The launch's words from its program on (a path's directory dropped from the program); [] when it cannot be
    split or is over the bound (the engine's own parser names why)."""
    if isinstance(command, str):
        if len(command) > MAX_COMMAND_CHARS:
            return []
        try:
            words = shlex.split(re.sub(r"\\\r?\n", " ", command), comments=True)
        except ValueError:
            return []
    else:
        words = list(command)
    i = 1 if words[:1] == ["env"] else 0
    while i < len(words) and _ENV.match(words[i]):
        i += 1
    rest = words[i:]
    return [rest[0].rsplit("/", 1)[-1], *rest[1:]] if rest else []


def match_program(words: list[str], programs: tuple[tuple[str, ...], ...]) -> tuple[str, ...] | None:
    """The launcher of `programs` the words start with (`python` stands for any interpreter: python3, python3.12)."""
    for prog in programs:
        n = len(prog)
        if tuple(words[:n]) == prog or (prog[0].startswith("python") and words[:1] and words[0].startswith("python")
                                        and tuple(words[1:n]) == prog[1:]):
            return prog
    return None
