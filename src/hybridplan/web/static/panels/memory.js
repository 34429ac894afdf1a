// Memory picture: where one GPU's memory goes for the Deploy command on the selected card (`explain --gpu`): the
// stacked bar, the pools it sizes, the verdict (its confidence, evidence and what to change) and the timeline.

import { $, clear, el } from "../lib/dom.js";
import { showError } from "../lib/errors.js";
import { stat, term } from "../lib/figures.js";
import { fmtInt } from "../lib/format.js";
import { memoryPicture, timelineTable } from "../lib/memory-picture.js";
import { verdictBlock } from "../lib/verdict.js";

// d: the explain answer for the Deploy command; hw: the selected hardware row
export function drawMemory(d, hw) {
  var out = clear($("memory-out"));
  showError($("memory-error"), d.error || null);
  if (!d.memory || !d.memory.breakdown) {
    if (!hw.gpu) out.appendChild(el("p", {class: "muted", text: "The selected hardware names no GPU in the catalog."}));
    return;
  }
  out.appendChild(memoryPicture(d.memory.breakdown, d.memory.timeline, (hw.label || hw.gpu) + " running the Deploy command", "memory-deploy"));
  out.appendChild(el("div", {class: "stats", id: "memory-pools"},
    stat("max_mamba_cache_size", term("K", "K state slots"), fmtInt(d.max_mamba_cache_size), d.max_mamba_cache_size, {source: "engine rule", note: d.mamba_pool_branch + " branch"}),
    stat("max_total_num_tokens", "KV pool", fmtInt(d.max_total_num_tokens) + " tokens", d.max_total_num_tokens, {source: "engine rule"}),
    stat("max_running_requests", "serves", fmtInt(d.max_running_requests) + " requests", d.max_running_requests, {source: "engine rule", note: "bound by " + d.binding_limit}, "binding")));
  var verdict = verdictBlock("memory-verdict", d.memory.verdict, {where: "on " + (hw.label || hw.gpu), fix: d.memory.warnings});
  if (verdict) out.appendChild(verdict);
  else (d.memory.warnings || []).forEach(function (w) { out.appendChild(el("div", {class: "alert warn", text: w})); });
  out.appendChild(timelineTable(d.memory.timeline));
}
