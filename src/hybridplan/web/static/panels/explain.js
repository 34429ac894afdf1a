// Explain: a pasted launch command -> `explain --json` on SGLang (its geometry, pools, request limits, warnings,
// boot-log lines, resolved arguments and memory picture) or on vLLM (explain-vllm.js), with the boot-log box
// (logcheck.js) checked beside it; other panels open their commands here (openInExplain).

import { api } from "../lib/api.js";
import { cardName } from "../lib/catalogs.js";
import { radioKeys } from "../lib/chips.js";
import { $, announce, clear, each, el } from "../lib/dom.js";
import { fieldError, showError } from "../lib/errors.js";
import { listBlock, stat, term } from "../lib/figures.js";
import { fmtBytes, fmtGiB, fmtGiBv, fmtInt, isNum, short } from "../lib/format.js";
import { memoryPicture, timelineTable } from "../lib/memory-picture.js";
import { dropParam, params, selectParam, setParams } from "../lib/url-state.js";
import { verdictBlock } from "../lib/verdict.js";
import { ENGINES, explainEngine, setEngine } from "./explain-engine.js";
import { renderVllmExplain } from "./explain-vllm.js";
import { readLinkDigest, runLogCheck, showLogEngine } from "./logcheck.js";

function explainFigures(r) {
  var prov = r.provenance || {};
  return el("div", {class: "stats", id: "explain-geometry"},
    stat("slots_per_request", term("S", "S state slots / request"), fmtInt(r.slots_per_request), r.slots_per_request, prov.slots_per_request),
    stat("draft_states_per_request", term("D", "D verify states / request"), fmtInt(r.draft_states_per_request), r.draft_states_per_request, prov.draft_states_per_request),
    stat("state_bytes_per_slot", "state / slot", fmtBytes(r.state_bytes_per_slot), r.state_bytes_per_slot, prov.state_bytes_per_slot, null, "B"),
    stat("kv_bytes_per_token", "KV / token", fmtBytes(r.kv_bytes_per_token), r.kv_bytes_per_token, prov.kv_bytes_per_token, null, "B"));
}
function explainPools(r) {
  if (!isNum(r.max_mamba_cache_size)) return null;
  var binding = r.binding_limit;
  return el("div", {},
    el("h3", {text: "Pools"}),
    el("div", {class: "stats", id: "explain-pools"},
      stat("pool_budget_gib", "pool budget", fmtGiBv(r.pool_budget_gib), r.pool_budget_gib, {source: "input", note: "total_rest_memory"}, null, "GiB"),
      stat("max_mamba_cache_size", term("K", "K max_mamba_cache_size"), fmtInt(r.max_mamba_cache_size), r.max_mamba_cache_size, {source: "engine rule", note: r.mamba_pool_branch + " branch"}),
      stat("state_pool_bytes", "state pool", fmtGiB(r.state_pool_bytes), r.state_pool_bytes, {source: "engine rule", note: "(K + 1) x state/slot"}, null, "B"),
      r.spec_scratch_bytes ? stat("spec_scratch_bytes", "verify scratch", fmtGiB(r.spec_scratch_bytes), r.spec_scratch_bytes, {source: "engine rule", note: r.spec_scratch_rows + " rows x D x state/slot"}, null, "B") : null,
      stat("kv_budget_bytes", "KV budget", fmtGiB(r.kv_budget_bytes), r.kv_budget_bytes, {source: "engine rule"}, null, "B"),
      stat("max_total_num_tokens", "KV pool", fmtInt(r.max_total_num_tokens) + " tokens", r.max_total_num_tokens, {source: "engine rule", note: "KV budget // KV/token, page-floored"}),
      stat("max_running_requests", "serves", fmtInt(r.max_running_requests) + " requests", r.max_running_requests, {source: "engine rule", note: "bound by " + binding}, "binding")),
    limitsTable(r.limits || {}, binding));
}
var LIMIT_FOR_BINDING = {max_running_requests: "requested"};
function limitsTable(limits, binding) {
  var names = {requested: "requested (--max-running-requests or default)", context_estimate: "context estimate",
               kv_pool: "KV pool", state_pool: "state pool (K // S)"};
  var rows = Object.keys(limits).map(function (k) {
    var isBinding = (LIMIT_FOR_BINDING[binding] || binding) === k;
    return el("tr", {"data-limit": k, class: isBinding ? "binding" : null},
      el("td", {text: names[k] || k}), el("td", {class: "num", "data-value": limits[k] === null ? "" : String(limits[k]), text: fmtInt(limits[k])}),
      el("td", {text: isBinding ? "binding" : ""}));
  });
  return el("div", {class: "table-wrap"}, el("table", {id: "explain-limits", "aria-label": "request limits"},
    el("thead", {}, el("tr", {}, el("th", {scope: "col", text: "limit on running requests"}), el("th", {scope: "col", text: "requests"}), el("th", {scope: "col", text: "binding?"}))),
    el("tbody", {}, rows)));
}
function argsTable(args) {
  var rows = Object.keys(args || {}).map(function (name) {
    var a = args[name];
    return el("tr", {"data-arg": name}, el("td", {}, el("code", {text: name})),
      el("td", {class: "mono", text: a.value === null ? "None" : JSON.stringify(a.value)}),
      el("td", {text: a.source}), el("td", {class: "muted", text: a.rule || ""}));
  });
  return el("details", {}, el("summary", {text: "Resolved engine arguments (" + rows.length + ")"}),
    el("div", {class: "table-wrap"}, el("table", {}, el("thead", {}, el("tr", {}, ["argument", "value", "source", "rule"].map(function (h) { return el("th", {scope: "col", text: h}); }))),
      el("tbody", {}, rows))));
}
function renderExplain(r) {
  var out = clear($("explain-out"));
  var m = r.model || {};
  out.appendChild(el("p", {id: "explain-model"},
    el("strong", {text: m.architecture || ""}),
    " (" + (m.family || "?") + ", " + (m.linear_layer_ids || []).length + " state + " +
    (m.full_attention_layer_ids || []).length + " full-attention layers) from " + (m.source || "?") +
    " — sglang " + ((r.engine || {}).version || "")));
  var mem = r.memory || {};
  var verdict = verdictBlock("explain-verdict", mem.verdict, {where: "on " + cardName((mem.timeline || {}).gpu), fix: mem.warnings});
  if (verdict) out.appendChild(verdict);
  out.appendChild(explainFigures(r));
  var pools = explainPools(r);
  if (pools) out.appendChild(pools);
  var warn = listBlock("explain-warnings", "Silent caps, warnings and what to change", r.warnings, "warnings");
  if (warn) out.appendChild(warn);
  var notes = listBlock("explain-notes", "Model notes", m.notes);
  if (notes) out.appendChild(notes);
  if (r.log_lines && r.log_lines.length) {
    out.appendChild(el("h3", {text: "Boot-log lines to expect (rank 0)"}));
    out.appendChild(el("pre", {id: "explain-log-lines", tabindex: "0", "aria-label": "boot-log lines", text: r.log_lines.join("\n")}));
  }
  out.appendChild(argsTable(r.args));
  var box = clear($("explain-memory"));
  if (mem.breakdown) {
    box.appendChild(memoryPicture(mem.breakdown, mem.timeline, (mem.timeline.gpu || "GPU") + " running this command", "memory-explain"));
    box.appendChild(timelineTable(mem.timeline));
  }
}

// an engine chip picked: the form switches, and what it showed for the other engine goes
function pickEngine(b) {
  var name = b.getAttribute("data-engine");
  if (name === explainEngine) return;
  setEngine(name);
  clear($("explain-out")); clear($("explain-memory")); clear($("logcheck-out"));
  showError($("explain-error"), null); showError($("logcheck-error"), null); showLogEngine(null);
  fieldError($("explain-command"), null); fieldError($("explain-budget"), null);
  setParams({eng: name === "sglang" ? null : name});
  announce("Explain now reads " + (name === "vllm" ? "vLLM" : "SGLang") + " launch commands.");
}

function runExplain() {
  var command = $("explain-command").value.trim();
  var budgetInput = $("explain-budget");
  var budgetText = budgetInput.value.trim();
  var errBox = $("explain-error");
  showError(errBox, null);
  var vllm = explainEngine === "vllm";
  if (!command && vllm && $("explain-log").value.trim()) return runVllmLogAlone();
  if (!command) { fieldError($("explain-command"), "paste a launch command first", function () { return !!$("explain-command").value.trim(); }); return Promise.resolve(); }
  fieldError($("explain-command"), null);
  var body = vllm ? {command: command, engine: "vllm", gpu: $("explain-gpu").value || null,
                     engine_version: $("explain-vllm-version").value || null} :
    {command: command, engine_version: $("explain-version").value || null, gpu: $("explain-gpu").value || null};
  if (budgetText) {
    var b = Number(budgetText);
    if (!isFinite(b)) { fieldError(budgetInput, (vllm ? "available KV memory" : "pool budget") + ": a number of GiB", function () { return isFinite(Number(budgetInput.value.trim())); }); return Promise.resolve(); }
    body[ENGINES[explainEngine].field] = b;
  }
  fieldError(budgetInput, null);
  setParams({cmd: command, budget: budgetText, egpu: body.gpu, eng: vllm ? "vllm" : null,
             ever: vllm || body.engine_version === $("explain-version").getAttribute("data-default") ? null : body.engine_version,
             vver: vllm ? body.engine_version : null,
             lv: vllm ? null : $("explain-log-version").value.trim()});
  $("explain-run").disabled = true;
  return Promise.all([api("/api/explain", body), runLogCheck(command)]).then(function (all) {
    $("explain-run").disabled = false;
    var d = all[0].data;
    if (d.error && !d.model) {  // bad input: next to the field it names, else the command it is about
      var onBudget = (d.error.message || "").indexOf(ENGINES[explainEngine].field + ":") === 0;
      fieldError(onBudget ? budgetInput : $("explain-command"), d.error.message);
      showError(errBox, null);
    } else showError(errBox, d.error || null);
    if (d.model) { if (vllm) renderVllmExplain(d); else renderExplain(d); }
    else { clear($("explain-out")); clear($("explain-memory")); }
    announce(!d.model ? "Explain: " + short((d.error || {}).message) :
      vllm ? "Explained on vLLM: " + (isNum(d.kv_cache_tokens) ? fmtInt(d.kv_cache_tokens) + " KV tokens, " + d.max_concurrency.toFixed(2) + "x at " + fmtInt(d.max_model_len) + " tokens." : "block size " + fmtInt(d.block_size) + " tokens.") :
      "Explained: serves " + fmtInt(d.max_running_requests) + " requests.");
  });
}
// vLLM with a boot log and no command: the log's own launch line is the command, so only the log is checked
function runVllmLogAlone() {
  fieldError($("explain-command"), null);
  clear($("explain-out")); clear($("explain-memory"));
  setParams({cmd: null, budget: null, egpu: $("explain-gpu").value || null, eng: "vllm", ever: null, lv: null});
  $("explain-run").disabled = true;
  return runLogCheck(null).then(function (res) {
    $("explain-run").disabled = false;
    announce(!res ? "" : res.status !== 200 ? "Boot log: " + short(res.data.error.message) :
      res.data.explained ? "Boot log checked on vLLM: every logged number is predicted." :
      "Boot log checked on vLLM: some logged numbers differ.");
  });
}
// another panel's command into the form (opts: {engine, memory, version}), scrolled to and run
export function openInExplain(command, gpu, opts) {
  var engine = (opts && opts.engine) || "sglang";
  if (engine !== explainEngine) { setEngine(engine); clear($("logcheck-out")); }
  $("explain-command").value = command;
  if (gpu && $("explain-gpu").querySelector('option[value="' + CSS.escape(gpu) + '"]')) $("explain-gpu").value = gpu;
  $("explain-budget").value = opts && isNum(opts.memory) ? String(opts.memory) : "";
  // the release (or the page's build) the other panel ran it on, so Explain's verdict is that panel's
  if (engine === "vllm") $("explain-vllm-version").value = (opts && opts.version) || "";
  else $("explain-version").value = (opts && opts.version) || $("explain-version").getAttribute("data-default");
  $("explain").scrollIntoView();
  $("explain-h").focus();
  return runExplain();
}
// the Explain form answers from the first moment (before the catalogs load), so an early click never submits natively
export function wireExplain() {
  var form = $("explain-form");
  form.addEventListener("submit", function (ev) { ev.preventDefault(); runExplain(); });
  $("explain-command").addEventListener("keydown", function (ev) {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); runExplain(); }
  });
  each("#explain-engine .chip", function (b) { b.addEventListener("click", function () { pickEngine(b); }); });
  radioKeys($("explain-engine"), pickEngine);
}
// the link's Explain state, once the GPU list it may name has loaded
export function initExplain() {
  $("explain-version").setAttribute("data-default", $("explain-version").value);
  if (params.has("eng")) {
    if (Object.prototype.hasOwnProperty.call(ENGINES, params.get("eng"))) setEngine(params.get("eng")); else dropParam("eng", "sglang or vllm");
  }
  selectParam("egpu", $("explain-gpu"), "GPU");
  selectParam("ever", $("explain-version"), "engine version");
  selectParam("vver", $("explain-vllm-version"), "vLLM release");
  if (params.get("lv")) $("explain-log-version").value = params.get("lv").slice(0, 120);
  readLinkDigest();
  if (params.has("budget") && !isFinite(Number(params.get("budget")))) dropParam("budget", "not a number");
  if (params.get("cmd")) {
    $("explain-command").value = params.get("cmd");
    $("explain-budget").value = params.get("budget") || "";
    runExplain();
  }
}
