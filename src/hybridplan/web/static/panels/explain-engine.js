// Explain's engine: the same form reads SGLang or vLLM launch commands, each engine with its own memory input,
// labels, placeholders, release select and boot-log help. `explainEngine` is the one selected.

import { checkEngine } from "../lib/chips.js";
import { $, each } from "../lib/dom.js";

export var ENGINES = {
  sglang: {budget: "Pool budget (GiB, the engine's total_rest_memory)", example: "e.g. 66.5", field: "pool_budget_gib",
           gpu: "GPU (sizes the pools from its memory timeline)",
           placeholder: "python -m sglang.launch_server --model-path Qwen/Qwen3.8-27B --mem-fraction-static 0.85",
           name: "SGLang", log: "[2026-04-14 16:08:44 TP0] Load weight begin. avail mem=22.93 GB ..."},
  vllm: {budget: "Available KV cache memory (GiB, vLLM's boot log; empty: from the GPU)", example: "e.g. 40",
         field: "kv_memory_gib", gpu: "GPU (its sm, batch defaults and memory timeline)",
         placeholder: "vllm serve Qwen/Qwen3.8-27B --max-model-len 32768",
         name: "vLLM", log: "(APIServer pid=1) INFO ... non-default args: {'model_tag': ...}\n... GPU KV cache size: 569,878 tokens"}
};
export var explainEngine = "sglang";

// select engine `name`: its chip, labels, placeholders, and which version inputs and log help show
export function setEngine(name) {
  explainEngine = name;
  checkEngine("explain-engine", name);
  var e = ENGINES[name];
  $("explain-budget-label").textContent = e.budget;
  $("explain-gpu-label").textContent = e.gpu;
  $("explain-budget").placeholder = e.example;
  $("explain-budget").name = e.field;
  $("explain-command").placeholder = e.placeholder;
  $("explain-version-label").hidden = name !== "sglang";  // a vLLM log check models the release the log names
  $("explain-vllm-version-label").hidden = name !== "vllm";
  $("explain-log-version-label").hidden = name !== "sglang";
  $("explain-log").placeholder = e.log;
  each("#explain-log-box p[data-engine]", function (p) { p.hidden = p.getAttribute("data-engine") !== name; });
}
