"""Re-read every switch of engine/sglang/behaviours.py from the releases' own source (maintainers; not run in CI).

Needs the unpacked releases (conformance/setup_releases.sh, or --releases DIR holding <v>/site/sglang/...). For
each release: the two arch lists parsed out of arg_groups/overrides.py, and for every other switch a probe, a
piece of the release's code present exactly when the switch says so. With --flags, also each release's parser
against flag_history.registry_json (runs the releases in the oracle venv; slower). Exit 1 on any mismatch.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

from hybridplan.engine.sglang.behaviours import VERSIONS, switches

ROOT = Path(__file__).resolve().parent.parent
MEM = ("arg_groups/memory_hook.py", "server_args.py")  # 0.5.19+, 0.5.18 (the monolith)
CG = ("arg_groups/cuda_graph_hook.py", "server_args.py")
KVC = ("mem_cache/kv_cache_configurator.py",)

# switch -> (files under sglang/srt, first existing is read; value -> code that value implies is there; "re:" a regex)
PROBES: dict[str, tuple[tuple[str, ...], dict[object, str]]] = {
    "mid_tier_chunk_and_graph": (MEM, {(4096, 48, 160): "(chunked_prefill_size 4k, max_bs 48 if tp < 4 else 160)",
                                       (2048, 24, 80): "(chunked_prefill_size 2k, max_bs 24 if tp < 4 else 80)"}),
    "unknown_gpu_mem_fraction": (MEM, {0.95: "else 0.95", 0.88: "else 0.88"}),
    "xpu_extra_reserve_mib": (MEM, {2048: "reserved_mem += 2 * 1024"}),
    "decode_graph_capped_by_mrr": (MEM, {True: "decode_max_bs_is_default"}),
    "mla_prefill_graph_max_bs": (MEM, {"chunk_capped_8192": "min(8192, cfg.chunked_prefill_size)",
                                       "fixed_2048": "max_bs = 2048"}),
    "aiter_honors_explicit_mem_fraction_env": (("arg_groups/attention_hook.py", "server_args.py"),
                                               {True: "SGLANG_AITER_HONOR_EXPLICIT_MEM_FRACTION"}),
    "pp_disables_breakable_prefill_graph": (CG, {True: "Disabling breakable prefill CUDA graph by default for pipeline"}),
    "kda_breakable_prefill_graph": (CG, {frozenset({"disabled", "disabled_but_glm5_next"}): '"KDA hybrid linear attention"',
                                         "disabled_but_glm5_next": r're:and "Glm5NextForConditionalGeneration"\s+not in'}),
    "replayssm_ring": (KVC, {"fixed": "replayssm_fixed_bytes = replayssm_ring_per_req * replay_req_slots"}),
    "replayssm_gdn_ring_layout": (("configs/mamba_utils.py",), {"compact": "# normalized-k low part"}),
    "replayssm_gdn_ring_length": (KVC, {"max_draft_tokens": "record_len = max_draft_tokens"}),
    "pd_prefill_skips_spec_state": (KVC, {True: "def _pd_prefill_skips_mamba_spec_state"}),
    "mrr_per_dp_floor_one": (KVC, {True: "requested_per_worker = max(1, max_num_reqs // self.attn_dp_size)"}),
    "post_capture_exempts_capped_full_prefill": (KVC, {True: "capped_full_prefill_role"}),
    "dflash_draft_kv_per_attn_tp_rank": (("mem_cache/draft_kv_budget.py",  # 0.5.23 moved it here
                                          "model_executor/model_runner_components/spec_aux_hidden_state.py"),
                                         {True: r"re:tp_size=(get_parallel\(\)\.)?attn_tp_size\b",
                                          False: r"re:tp_size=(server_args|get_parallel\(\))\.tp_size\b"}),
    "pathless_mtp_draft_kv": (("model_executor/model_runner_components/spec_aux_hidden_state.py",),
                              {True: "re:draft_model_config = model_config|A path-less NEXTN/MTP head"}),
    "dspark_markov_rank_in_dflash_config": (("speculative/dspark_components/dspark_config.py",),
                                            {True: '_get_nested_config(config, "dflash_config")'}),
    "hybrid_kda_config": (KVC, {True: "requires a KDA \"\n                \"model; got"}),
    "dflash_with_attn_dp": (("arg_groups/speculative_hook.py",),
                            {True: "DFLASH with dp attention requires --enable-dp-lm-head."}),
    "dflash_attn_dp_npu_exempt": (("arg_groups/speculative_hook.py",), {
        True: r're:(enable_dp_attention|attn_dp_enabled_of\(cfg\)) and (not cfg\.device == |cfg\.device != )"npu"'}),
    "dspark_pp_on_pd_prefill": (("arg_groups/speculative_hook.py",), {True: "DSpark pipeline parallelism requires PD prefill"}),
    "mambaish_pure_mamba": (("configs/hybrid_arch.py",), {True: "FalconMambaConfig"}),
    "extra_buffer_on_stateless_arch_refused": (("arg_groups/model_hook.py", "server_args.py"), {True: "needs mamba state, got"}),
}
ARCH_LISTS = {"mamba_radix_cache_archs": ("arg_groups/overrides.py", "_MAMBA_RADIX_CACHE_ARCHS"),
              "mamba_extra_buffer_archs": ("arg_groups/overrides.py", "_MAMBA_EXTRA_BUFFER_ARCHS"),
              "multimodal_breakable_graph_archs": ("configs/model_config.py",
                                                   "multimodal_breakable_cuda_graph_supported_model_archs")}


def arch_list(srt: Path, file: str, name: str) -> frozenset[str]:
    tree = ast.parse((srt / file).read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == name:
            return frozenset(c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant)
                             and isinstance(c.value, str))
    raise SystemExit(f"{name} not found in {srt}/{file}")


def check_release(srt: Path, version: str) -> list[str]:
    """Mismatches between switches(version) and the release's code under `srt`."""
    s, bad = switches(version), []
    for switch, (file, const) in ARCH_LISTS.items():
        got = arch_list(srt, file, const)
        if got != getattr(s, switch):
            bad.append(f"{version} {switch}: source +{sorted(got - getattr(s, switch))} "
                       f"-{sorted(getattr(s, switch) - got)}")
    for switch, (files, needles) in PROBES.items():
        path = next((srt / f for f in files if (srt / f).exists()), None)
        if path is None:
            bad.append(f"{version} {switch}: none of {files}")
            continue
        code = path.read_text()
        value = getattr(s, switch)
        for implied, needle in needles.items():
            found = bool(re.search(needle[3:], code)) if needle.startswith("re:") else needle in code
            expected = value in implied if isinstance(implied, frozenset) else value == implied
            if found != expected:
                bad.append(f"{version} {switch}={value!r}: {needle!r} {'missing from' if expected else 'in'} "
                           f"{path.relative_to(srt)}")
    return bad


def check_flags(venv: Path) -> list[str]:
    sys.path.insert(0, str(ROOT / "scripts"))
    from gen_flag_history import dump  # noqa: E402  (the generator's own release runner)

    from hybridplan.engine.sglang.flag_history import registry_json

    bad = []
    for v in VERSIONS:
        real = {(f["dest"], tuple(f["options"])): {k: f.get(k) for k in f if k != "help"} for f in dump(venv, v)["flags"]
                if f["options"]}
        ours = {(f["dest"], tuple(f["options"])): {k: f.get(k) for k in f if k != "help"}
                for f in registry_json(v)["flags"]}
        if real != ours:
            diff = sorted(k[1][0] for k in real.keys() ^ ours.keys() | {k for k in real.keys() & ours.keys()
                                                                        if real[k] != ours[k]})
            bad.append(f"{v} flags differ: {diff[:10]}")
    return bad


def main(argv: list[str] | None = None) -> int:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--venv", default=str(ROOT / ".oracle-venv"))
    cli.add_argument("--releases", help="DIR with <version>/site/sglang (default: VENV/releases)")
    cli.add_argument("--flags", action="store_true", help="also compare each release's parser with flag_history")
    args = cli.parse_args(argv)
    releases = Path(args.releases or Path(args.venv) / "releases")
    bad: list[str] = []
    for v in VERSIONS:
        site = releases / v / "site"
        if not site.exists():  # the installed release (0.5.23 in the oracle venv)
            site = next((Path(args.venv) / "lib").glob("python3*/site-packages"))
        bad += check_release(site / "sglang/srt", v)
    if args.flags:
        bad += check_flags(Path(args.venv))
    print("\n".join(bad) if bad else f"behaviours.py agrees with the source of {', '.join(VERSIONS)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
