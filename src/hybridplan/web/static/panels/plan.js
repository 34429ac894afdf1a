// Plan: `plan --json`: it follows the Deploy command, card and workload (answering that command with the fewest
// changes) until its own fields are edited; then it plans the model, card and workload typed. On vLLM it plans the
// launch typed (plan-vllm.js).

import { api } from "../lib/api.js";
import { radioKeys } from "../lib/chips.js";
import { $, clear, each, el } from "../lib/dom.js";
import { fieldError, fieldOf, showError, wholeNumber } from "../lib/errors.js";
import { listBlock, stat, term } from "../lib/figures.js";
import { detach, wireFollower } from "../lib/follower.js";
import { fmtFrac, fmtInt, isNum } from "../lib/format.js";
import { memoryPicture } from "../lib/memory-picture.js";
import { PLAN_KEYS, dropParam, intParam, modelParam, params, selectParam, setParams } from "../lib/url-state.js";
import { verdictBlock } from "../lib/verdict.js";
import { commandBlock } from "./commands.js";
import { followCompare } from "./compare.js";
import { pickPlanEngine, planEngine, setPlanEngine, vllmPlanAnswer, vllmPlanBody } from "./plan-vllm.js";
import { S, commandOf, hardware, pageC, pageL } from "./selection.js";

var plan = {follow: true, seq: 0, command: null, version: null};
var SPEC_FOR_ALGORITHM = {DSPARK: "dspark", DFLASH: "dflash", NGRAM: "ngram", EAGLE: "mtp", NEXTN: "mtp"};
// an error's field (the API's name or the CLI flag's) -> the input it is about
var PLAN_FIELDS = {model: "plan-model", "--model": "plan-model", tp: "plan-tp", "--tp": "plan-tp", quant: "plan-quant",
                   "--quant": "plan-quant", spec: "plan-spec", "--spec": "plan-spec", draft: "plan-draft", "--draft": "plan-draft",
                   gpu: "plan-gpu", "--gpu": "plan-gpu", request_length: "plan-L", concurrency: "plan-C"};
function renderPlan(d, gpu) {
  var out = clear($("plan-out"));
  out.appendChild(el("p", {id: "plan-checkpoint"}, "Checkpoint ", el("code", {text: (d.checkpoint || {}).model_path || "-"}),
    (d.checkpoint || {}).note ? " — " + d.checkpoint.note : ""));
  if (!d.fits) {
    out.appendChild(el("div", {class: "alert warn", id: "plan-why"}, el("strong", {text: "Nothing fits: "}), d.why || ""));
    if (d.changes_that_fit && d.changes_that_fit.length) {
      out.appendChild(el("h3", {text: "Changes that would fit (cheapest first)"}));
      out.appendChild(el("ol", {id: "plan-changes"}, d.changes_that_fit.map(function (c) { return el("li", {text: c.change}); })));
    }
    return;
  }
  var s = d.split || {};
  var m = d.mem_fraction || {};
  var changes = d.changes || [];
  out.appendChild(el("p", {class: "muted", id: "plan-changes-made"}, changes.length ?
    "Changes to " + (d.target && d.target.command ? "the Deploy command" : "the catalog command") + ":" :
    "No changes: the command serves the target as it is."));
  if (changes.length) {
    out.appendChild(el("ul", {id: "plan-change-list"}, changes.map(function (c) {
      return el("li", {"data-flag": c.flag}, el("code", {text: c.flag}), " " + (c.old === null ? "unset" : c.old || "on") +
        " → " + (c.new === null ? "removed" : c.new || "on") + (c.why ? ": " + c.why : ""));
    })));
  }
  out.appendChild(el("h3", {text: "Best command"}));
  out.appendChild(commandBlock("plan-command", d.command, gpu, null, null,
                              {version: plan.follow && plan.command ? plan.version : null}));
  var up = m.step_up || {};
  out.appendChild(el("div", {class: "stats", id: "plan-fraction"},
    isNum(m.engine_default) ? stat("engine_default", "engine default fraction", fmtFrac(m.engine_default), m.engine_default, {source: "engine rule", note: "the release's own --mem-fraction-static for this command"}) : null,
    stat("mem_fraction_static", "--mem-fraction-static", fmtFrac(d.mem_fraction_static), d.mem_fraction_static, {source: "estimate", note: "fits from " + d.min_mem_fraction_static}),
    isNum(m.ceiling) ? stat("ceiling", "evidence ceiling", fmtFrac(m.ceiling), m.ceiling, {source: "estimate", note: m.rule}) : null,
    isNum(up.kv_tokens) ? stat("step_up", "the step up buys", (up.kv_tokens >= 0 ? "+" : "") + fmtInt(up.kv_tokens) + " KV tokens, " + (up.state_slots >= 0 ? "+" : "") + fmtInt(up.state_slots) + " slots, " + (up.requests >= 0 ? "+" : "") + fmtInt(up.requests) + " requests", up.kv_tokens, {source: "engine rule", note: up.serves_at_default ? "the default serves the target too" : "the default does not serve the target"}) :
      up.why ? stat("step_up", "at the engine default", "does not start", null, {source: "engine rule", note: up.why}) : null));
  var verdict = verdictBlock("plan-verdict", d.verdict, {where: "on " + (((d.target || {}).gpu || {}).name || gpu)});
  if (verdict) out.appendChild(verdict);
  out.appendChild(el("div", {class: "stats", id: "plan-figures"},
    s.kind === "ratio" ? stat("mamba_full_memory_ratio", term("ratio", "--mamba-full-memory-ratio"), s.mamba_full_memory_ratio_text, s.mamba_full_memory_ratio, {source: "engine rule", note: (s.kept ? "the command's own" : "balanced") + "; binding " + s.binding_pool}) : null,
    stat("max_mamba_cache_size_pin", term("pin", "--max-mamba-cache-size pin"), fmtInt(s.max_mamba_cache_size_pin), s.max_mamba_cache_size_pin, {source: "engine rule"}),
    stat("max_mamba_cache_size", term("K", "K state slots"), fmtInt(d.max_mamba_cache_size), d.max_mamba_cache_size, {source: "engine rule"}),
    stat("max_total_num_tokens", "KV pool", fmtInt(d.max_total_num_tokens) + " tokens", d.max_total_num_tokens, {source: "engine rule"}),
    // what the command serves is the engine's max_running_requests (its cap included); the pools may hold more
    stat("max_running_requests", "serves", fmtInt(d.max_running_requests) + " requests", d.max_running_requests, {source: "engine rule", note: "bound by " + d.binding_limit}, "binding"),
    d.pool_capacity !== d.max_running_requests ? stat("pool_capacity", "the pools would hold", fmtInt(d.pool_capacity) + " requests", d.pool_capacity, {source: "engine rule", note: "min(K // S, KV pool / L): more than the command's --max-running-requests lets run"}) : null));
  out.appendChild(memoryPicture(d.breakdown, d.timeline, (((d.target || {}).gpu || {}).name || "GPU") + " running the plan", "memory-plan"));
  var warn = listBlock("plan-warnings", "Warnings", d.warnings, "warnings");
  if (warn) out.appendChild(warn);
  if (d.log_lines && d.log_lines.length) {
    out.appendChild(el("h3", {text: "Boot-log lines to expect (rank 0)"}));
    out.appendChild(el("pre", {id: "plan-log-lines", tabindex: "0", "aria-label": "boot-log lines", text: d.log_lines.join("\n")}));
  }
}
function planBody() {
  if (plan.follow && plan.command) {  // the Deploy command itself, answered with the fewest changes
    var cmd = {command: plan.command, gpu: $("plan-gpu").value || null, request_length: wholeNumber($("plan-L"), "L"),
               concurrency: wholeNumber($("plan-C"), "C"), pin: $("plan-pin").checked};
    if (plan.version) cmd.engine_version = plan.version;
    return cmd.request_length === null || cmd.concurrency === null ? null : cmd;
  }
  var body = {model: $("plan-model").value.trim(), gpu: $("plan-gpu").value || null,
              quant: $("plan-quant").value || null, spec: $("plan-spec").value || null,
              tp: wholeNumber($("plan-tp"), "TP"), request_length: wholeNumber($("plan-L"), "L"),
              concurrency: wholeNumber($("plan-C"), "C"), pin: $("plan-pin").checked};
  if (body.tp === null || body.request_length === null || body.concurrency === null) return null;
  if (!body.model) { fieldError($("plan-model"), "model: a catalog id or Hub id", function () { return !!$("plan-model").value.trim(); }); return null; }
  fieldError($("plan-model"), null);
  var draft = $("plan-draft").value.trim();
  if (draft) body.draft = draft;
  return body;
}
function writePlanParams(body) {
  var q = {};
  Object.keys(PLAN_KEYS).forEach(function (k) { q[k] = null; });
  if (body.engine === "vllm") {
    q = {pe: "vllm", pcmd: body.command, pkv: body.kv_memory_gib === null ? null : String(body.kv_memory_gib),
         pver: body.engine_version, pg: body.gpu, pL: body.request_length, pC: body.concurrency};
  } else if (!plan.follow) {
    q = {pm: body.model, pq: body.quant, ps: body.spec, pg: body.gpu, ptp: body.tp === 1 ? null : body.tp,
         pL: body.request_length, pC: body.concurrency, ppin: body.pin};
  }
  setParams(q);
}
function runPlan() {
  var vllm = planEngine === "vllm";
  var body = vllm ? vllmPlanBody() : planBody();
  if (!body) return Promise.resolve();
  if (!body.gpu) { fieldError($("plan-gpu"), "GPU: pick a card", function () { return !!$("plan-gpu").value; }); return Promise.resolve(); }
  fieldError($("plan-gpu"), null);
  writePlanParams(body);
  var seq = ++plan.seq;
  $("plan-run").disabled = true;
  return api("/api/plan", body).then(function (res) {
    if (seq !== plan.seq) return null;
    $("plan-run").disabled = false;
    if (vllm) { vllmPlanAnswer(res, body); return null; }
    if (res.status !== 200) {
      var err = res.data.error || {};
      var field = err.rule ? null : fieldOf(err, PLAN_FIELDS, /model/.test(err.message || "") ? "plan-model" : null);
      if (field) { fieldError(field, err.message); showError($("plan-error"), null); } else showError($("plan-error"), err);
      clear($("plan-out"));
      return null;
    }
    showError($("plan-error"), null);
    fieldError($("plan-model"), null);
    renderPlan(res.data, body.gpu);
    return null;
  });
}
// Plan and Compare, each where it follows the Deploy state (the last stage of the Deploy pipeline)
export function followPlan() { return Promise.all([followCompare(), followPlanOnly()]); }
// Plan's fields from the Deploy state: the Deploy command itself (node 0's view, as Memory and Calculator see it),
// its card and the Calculator's L and C; the model, TP and speculative fields show what it names
function followPlanOnly() {
  if (!plan.follow || !S.analysis || !S.analysis.cell || S.analysis.redirect) return Promise.resolve();
  var hw = hardware();
  if (!hw.gpu) return Promise.resolve();
  var args = (S.explain || {}).args || {};
  var val = function (k) { return (args[k] || {}).value; };
  var alg = val("speculative_algorithm");
  var spec = alg ? SPEC_FOR_ALGORITHM[String(alg).toUpperCase()] || "" : "";
  $("plan-model").value = S.analysis.model_name || $("plan-model").value;
  $("plan-gpu").value = hw.gpu;
  $("plan-quant").value = "";
  $("plan-spec").value = spec;
  $("plan-draft").value = spec && spec !== "mtp" && spec !== "ngram" ? val("speculative_draft_model_path") || "" : "";
  $("plan-tp").value = val("tp_size") || 1;
  $("plan-L").value = S.L || pageL() || "";
  $("plan-C").value = S.C !== null ? S.C : S.served !== null ? S.served : pageC() || "";
  $("plan-pin").checked = false;  // the command's own ratio or pin is kept when it serves
  plan.command = commandOf(S.analysis);
  plan.version = S.analysis.engine_version || null;
  $("plan-follow").textContent = "Plan answers the Deploy command (" + (hw.label || hw.gpu) + ", L and C of the Calculator) with the fewest changes. Edit a field to plan something else.";
  $("plan-refollow").hidden = true;
  return runPlan();
}
// the panel's handlers, then the link's Plan state (where it carries one: Plan starts detached and runs)
export function initPlan() {
  var f = {state: plan, id: "plan", name: "Plan", keys: PLAN_KEYS, write: writePlanParams, follow: followPlan, run: runPlan};
  var pick = function (b) { pickPlanEngine(b, f); };
  $("plan-draft").addEventListener("input", function () { detach(f); });
  each("#plan-engine .chip", function (b) { b.addEventListener("click", function () { pick(b); }); });
  radioKeys($("plan-engine"), pick);
  // following the Deploy selection is planning its SGLang command (wired before the follower's own handler)
  $("plan-refollow").addEventListener("click", function () { if (planEngine !== "sglang") pick(document.querySelector('#plan-engine [data-engine="sglang"]')); });
  if (!wireFollower(f)) return;
  if (params.has("pe")) {
    if (params.get("pe") === "vllm") setPlanEngine("vllm"); else dropParam("pe", "vllm, or left out for sglang");
  }
  if (params.has("pcmd")) {
    if (params.get("pcmd").length <= 16384) $("plan-vllm-command").value = params.get("pcmd"); else dropParam("pcmd", "longer than 16,384 characters");
  }
  if (params.has("pkv")) {
    if (isFinite(Number(params.get("pkv"))) && Number(params.get("pkv")) > 0) $("plan-kv").value = params.get("pkv");
    else dropParam("pkv", "not a positive number of GiB");
  }
  selectParam("pver", $("plan-vllm-version"), "vLLM release");
  selectParam("pg", $("plan-gpu"), "GPU");
  selectParam("pq", $("plan-quant"), "quantization");
  selectParam("ps", $("plan-spec"), "speculative decoding");
  modelParam("pm", $("plan-model"));
  [["ptp", 1024], ["pL", 10000000], ["pC", 1000000]].forEach(function (p) {
    var n = intParam(p[0], p[1]);
    if (n !== null) $(PLAN_KEYS[p[0]]).value = n;
  });
  $("plan-pin").checked = params.get("ppin") === "1";
  runPlan();
}
