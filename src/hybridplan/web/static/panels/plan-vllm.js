// Plan on vLLM: `plan --engine vllm --json` for the launch typed here (it never follows the SGLang Deploy command):
// the baseline and the candidates, cheapest first, the best one's command and why each change; and Plan's engine
// selector (`planEngine` is the one selected; each engine's fields show only under it).

import { checkEngine } from "../lib/chips.js";
import { $, announce, clear, each, el } from "../lib/dom.js";
import { fieldError, showError, wholeNumber } from "../lib/errors.js";
import { listBlock, stat } from "../lib/figures.js";
import { detach } from "../lib/follower.js";
import { exactText, fmtInt, short } from "../lib/format.js";
import { cardName } from "../lib/catalogs.js";
import { verdictBlock } from "../lib/verdict.js";
import { commandBlock } from "./commands.js";

export var planEngine = "sglang";
// an error's field name (the API's, or the CLI flag's) -> the input it is about
var PLAN_VLLM_FIELDS = {command: "plan-vllm-command", kv_memory_gib: "plan-kv", engine_version: "plan-vllm-version",
                        "--engine-version": "plan-vllm-version", gpu: "plan-gpu", request_length: "plan-L",
                        concurrency: "plan-C"};
export function setPlanEngine(name) {
  planEngine = name;
  checkEngine("plan-engine", name);
  each("#plan [data-engine]:not(.chip)", function (n) { n.hidden = n.getAttribute("data-engine") !== name; });
}
// an engine chip picked; vLLM detaches Plan from the Deploy selection (`follower`, see lib/follower.js)
export function pickPlanEngine(b, follower) {
  var name = b.getAttribute("data-engine");
  if (name === planEngine) return;
  setPlanEngine(name);
  if (name === "vllm") {
    detach(follower);
    var model = $("plan-model").value.trim();  // a start: the model Plan had, launched with vLLM's defaults
    if (!$("plan-vllm-command").value.trim() && model) $("plan-vllm-command").value = "vllm serve " + model;
  }
  clear($("plan-out"));
  showError($("plan-error"), null);
  Object.keys(PLAN_VLLM_FIELDS).forEach(function (k) { fieldError($(PLAN_VLLM_FIELDS[k]), null); });
  fieldError($("plan-model"), null);
  announce("Plan now plans " + (name === "vllm" ? "a vLLM launch command." : "SGLang deployments."));
}
// the request from the form, or null with the bad field's error shown
export function vllmPlanBody() {
  var cmdInput = $("plan-vllm-command"), kvInput = $("plan-kv");
  var command = cmdInput.value.trim(), kvText = kvInput.value.trim(), kv = kvText ? Number(kvText) : null;
  var L = wholeNumber($("plan-L"), "L"), C = wholeNumber($("plan-C"), "C");
  if (!command) { fieldError(cmdInput, "command: paste a vLLM launch (vllm serve MODEL ...)", function () { return !!cmdInput.value.trim(); }); return null; }
  fieldError(cmdInput, null);
  if (kvText && !(isFinite(kv) && kv > 0)) {
    fieldError(kvInput, "kv_memory_gib: a positive number of GiB (got " + short(JSON.stringify(kvText)) + ")", function () {
      var t = kvInput.value.trim();
      return !t || Number(t) > 0;
    });
    return null;
  }
  fieldError(kvInput, null);
  if (L === null || C === null) return null;
  return {engine: "vllm", command: command, gpu: $("plan-gpu").value || null, kv_memory_gib: kv, request_length: L,
          concurrency: C, engine_version: $("plan-vllm-version").value || null};
}
// an answer: the plan, or the error on the field it names (a bad launch on the command; a refusal in the box)
export function vllmPlanAnswer(res, body) {
  Object.keys(PLAN_VLLM_FIELDS).forEach(function (k) { fieldError($(PLAN_VLLM_FIELDS[k]), null); });
  showError($("plan-error"), null);
  if (res.status === 200) {
    renderVllmPlan(res.data, body);
    var b = res.data.best;
    announce(b ? "Planned on vLLM: " + b.max_concurrency.toFixed(2) + "x at " + fmtInt(body.request_length) + " tokens." :
             "Planned on vLLM: no candidate serves the target.");
    return;
  }
  clear($("plan-out"));
  var err = res.data.error || {};
  var msg = err.message || "";
  var name = (/^([a-z_-]+): /.exec(msg) || [])[1];
  if (err.rule || err.type === "EngineRefusal") showError($("plan-error"), err);
  else fieldError($(PLAN_VLLM_FIELDS[name] || (/--gpu is required/.test(msg) ? "plan-gpu" : "plan-vllm-command")), msg);
  announce("Plan: " + short(msg));
}
function vllmChanges(r) {
  var parts = Object.keys(r.changes).map(function (k) { return (k + " " + r.changes[k]).trim(); });
  return parts.length ? parts.join(" ") : "(as launched)";
}
function renderVllmPlan(d, body) {
  var out = clear($("plan-out"));
  var t = d.target, m = d.measured, best = d.best;
  out.appendChild(el("p", {id: "plan-vllm-evidence", "data-source": m.source},
    el("strong", {text: fmtInt(t.concurrency) + " requests of " + fmtInt(t.request_length) + " tokens"}),
    m.source === "boot" ? ", from the boot measured at gpu_memory_utilization " + m.gpu_memory_utilization + " (" +
      m.available_kv_gib + " GiB available KV memory)" :
      ", from the card alone (no boot log; utilization up to " + m.ceiling + "): " + m.rule));
  // the verdict and vLLM's startup checks on the planned launch (the launch at the target's length when none fits)
  var verdict = verdictBlock("plan-verdict", d.verdict, {where: "on " + cardName(body.gpu, body.gpu_memory_gib), checks: d.checks});
  if (verdict) out.appendChild(verdict);
  if (best) {
    out.appendChild(el("h3", {text: "Best command"}));
    // its Explain link models the same release (the newest: none named)
    out.appendChild(commandBlock("plan-command", d.command, body.gpu, null, null,
                                 {engine: "vllm", memory: m.source === "boot" ? best.available_kv_gib : null,
                                  version: body.engine_version}));
    var why = best.why || {};
    var flags = Object.keys(why);
    out.appendChild(el("p", {class: "muted", id: "plan-changes-made", text: flags.length ? "Why each change:" :
      "No changes: the launch serves the target at " + fmtInt(t.request_length) + " tokens as it is."}));
    if (flags.length) {
      out.appendChild(el("ul", {id: "plan-vllm-why"}, flags.map(function (f) {
        return el("li", {"data-flag": f}, el("code", {text: (f + " " + best.changes[f]).trim()}), ": " + why[f]);
      })));
    }
    out.appendChild(el("div", {class: "stats", id: "plan-vllm-figures"},
      stat("gpu_memory_utilization", "--gpu-memory-utilization", String(best.gpu_memory_utilization), best.gpu_memory_utilization, {source: m.source === "boot" ? "input" : "estimate", note: m.source === "boot" ? "from the measured boot" : m.rule}),
      stat("available_kv_gib", "available KV memory", best.available_kv_gib.toFixed(2) + " GiB", best.available_kv_gib, {source: m.source === "boot" ? "input" : "estimate", note: m.source === "boot" ? "the boot's, at this utilization" : "the card alone"}, null, "GiB"),
      stat("block_size", "attention block", fmtInt(best.block_size) + " tokens", best.block_size, {source: "engine rule", note: best.mamba_cache_mode + " mode"}),
      stat("kv_cache_tokens", "GPU KV cache size", fmtInt(best.kv_cache_tokens) + " tokens", best.kv_cache_tokens, {source: "engine rule"}),
      stat("state_pages_per_request", "state pages / request", fmtInt(best.state_pages_per_request), best.state_pages_per_request, {source: "engine rule"}),
      stat("max_concurrency", "concurrency at " + fmtInt(t.request_length) + " tokens", best.max_concurrency.toFixed(2) + "x", best.max_concurrency, {source: "engine rule", note: "max_num_seqs " + fmtInt(best.max_num_seqs)}, "binding")));
  } else {
    out.appendChild(el("div", {class: "alert warn", id: "plan-why"}, el("strong", {text: "Nothing fits: "}),
      "no candidate serves " + fmtInt(t.concurrency) + " requests of " + fmtInt(t.request_length) + " tokens within --max-util (the highest gpu_memory_utilization proposed)."));
  }
  var cell = function (text, raw) { return el("td", {class: "num", text: text, "data-value": raw === null || raw === undefined ? "" : String(raw), title: exactText(raw) || null}); };
  var rows = (d.baseline ? [["baseline", d.baseline]] : []).concat(d.candidates.map(function (r, i) { return [String(i), r]; }));
  out.appendChild(el("div", {class: "table-wrap", tabindex: "0", role: "region", "aria-label": "vLLM plan candidates"}, el("table", {id: "plan-vllm-candidates"},
    el("caption", {text: "The launch at " + fmtInt(t.request_length) + " tokens (baseline), then the candidates, cheapest change first"}),
    el("thead", {}, el("tr", {}, ["changes", "util", "KV GiB", "mode", "block", "KV tokens", "concurrency", "fits"].map(function (h) { return el("th", {scope: "col", text: h}); }))),
    el("tbody", {}, rows.map(function (x) {
      var r = x[1], isBest = best && x[0] !== "baseline" && JSON.stringify(r) === JSON.stringify(best);
      return el("tr", {"data-row": x[0], class: isBest ? "best" : null, title: isBest ? "the best command's candidate" : null},
        el("td", {}, el("code", {text: x[0] === "baseline" ? "baseline " + vllmChanges(r) : vllmChanges(r)})),
        cell(String(r.gpu_memory_utilization), r.gpu_memory_utilization), cell(r.available_kv_gib.toFixed(2), r.available_kv_gib),
        el("td", {text: r.mamba_cache_mode}), cell(fmtInt(r.block_size), r.block_size), cell(fmtInt(r.kv_cache_tokens), r.kv_cache_tokens),
        cell(r.max_concurrency.toFixed(2) + "x", r.max_concurrency), el("td", {text: r.fits ? "yes" : "no", "data-value": String(r.fits)}));
    })))));
  var warn = listBlock("plan-warnings", "Warnings", d.warnings, "warnings");
  if (warn) out.appendChild(warn);
}
