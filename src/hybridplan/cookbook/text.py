"""Command text: the pip (`python -m sglang.launch_server`) and docker forms, hints, placeholders, the
multi-node header (cookbook-semantics §3.7)."""

from __future__ import annotations

from typing import Any, Mapping

from hybridplan.cookbook.compose import flag_value
from hybridplan.cookbook.conditions import evaluate
from hybridplan.cookbook.schema import PLACEHOLDER, Hardware, NamedRule, Page

CONT = " \\\n"
HF_CACHE = "-v ~/.cache/huggingface:/root/.cache/huggingface"
AMD_DOCKER = ("--device=/dev/kfd --device=/dev/dri", "--group-add video",
              "--cap-add=SYS_PTRACE --security-opt seccomp=unconfined")


def first_match(rules: list[NamedRule], sel: Mapping[str, str]) -> str | None:
    """The first rule whose condition holds (model names, docker images)."""
    return next((r.value for r in rules if evaluate(r.when, sel)), None)


def placeholder_values(page: Page, model_name: str, overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """MODEL_NAME plus each declared placeholder's default, with the user's values over them."""
    values = {k: p.default for k, p in page.placeholders.items()}
    values.update(overrides or {})
    values["MODEL_NAME"] = model_name
    return values


def interpolate(text: str, values: Mapping[str, str]) -> str:
    """`{{KEY}}` -> value; undeclared keys stay literally `{{KEY}}` (the user fills them in)."""
    if "{{" not in text:  # most flag strings have no placeholder: skip the regex pass
        return text
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def pip_text(program: str, flags: list[str], env: list[str]) -> str:
    lines = list(env) + [program] + ["  " + f for f in flags]
    return CONT.join(lines)


def docker_text(*, program: str, flags: list[str], env: list[str], image: str, hw: Hardware, multi_node: bool,
                hf_token: bool, mounts: list[str]) -> str:
    """docker run with GPU access for the vendor, host networking when multi-node, else the `--port` mapping."""
    lines = ["docker run" if hw.vendor == "amd" else "docker run --gpus all"]
    opts = list(AMD_DOCKER) if hw.vendor == "amd" else []
    opts.append("--shm-size 32g")
    if multi_node:
        opts.append("--network host")
        opts += hw.multi_node_docker_flags
    else:
        port = flag_value(flags, "--port") or "{{PORT}}"
        opts.append(f"-p {port}:{port}")
    opts.append(HF_CACHE)
    opts += [f"-v {m}" for m in mounts]
    if hf_token:
        opts.append('--env "HF_TOKEN={{HF_TOKEN}}"')
    opts += [f"--env {e}" for e in env]
    opts.append("--ipc=host")
    lines += ["  " + o for o in opts]
    lines += ["  " + image, "  " + program]
    lines += ["    " + f for f in flags]
    return CONT.join(lines)


def multi_node_header(nnodes: int) -> list[str]:
    return [f"# Multi-node ({nnodes} nodes): run this command on every node.",
            f"# Set NODE_RANK to 0 on the first node and 1..{nnodes - 1} on the others;",
            "# NODE0_IP is the first node's address (port 20000 must be reachable from all nodes)."]


def hint_lines(hints: list[str]) -> list[str]:
    return [f"# {h}" if h else "#" for h in hints]


def benchmark_lines(page: Page, measurements: list[Any], values: Mapping[str, str]) -> list[dict[str, Any]]:
    """The speed command that reproduces each measured workload at each concurrency (the Reproduce modal)."""
    tmpl = page.benchmark_commands.speed
    out: list[dict[str, Any]] = []
    if not tmpl:
        return out
    for m in measurements:
        w = m.workload
        if w is None:
            continue
        for c in w.concurrency:
            fill = {"DATASET": w.dataset, "ISL": str(w.isl), "OSL": str(w.osl), "MAX_CONCURRENCY": str(c),
                    "NUM_PROMPTS": str(page.benchmark_commands.num_prompts(w, c))}
            cmd = interpolate(tmpl, {**values, **fill})
            if not any(b["command"] == cmd for b in out):
                out.append({"concurrency": c, "command": cmd})
    return out
