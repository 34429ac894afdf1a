// Compare: `compare --json`, SGLang and vLLM side by side. It follows the Deploy model, card and L, with the pool
// budget SGLang finds for the Deploy command on that card as both engines' cache memory, until its own fields are
// edited.

import { api } from "../lib/api.js";
import { gpus } from "../lib/catalogs.js";
import { $, announce, clear, el } from "../lib/dom.js";
import { fieldError, showError, wholeNumber } from "../lib/errors.js";
import { listBlock } from "../lib/figures.js";
import { wireFollower } from "../lib/follower.js";
import { exactText, fmtBytes, fmtGiBv, fmtInt, isNum, short } from "../lib/format.js";
import { COMPARE_KEYS, dropParam, intParam, modelParam, params, selectParam, setParams } from "../lib/url-state.js";
import { commandBlock } from "./commands.js";
import { S, hardware, pageL } from "./selection.js";

var cmp = {follow: true, seq: 0};
function compareBody() {
  var model = $("compare-model").value.trim();
  if (!model) { fieldError($("compare-model"), "model: a catalog id or Hub id"); return null; }
  fieldError($("compare-model"), null);
  var memText = $("compare-memory").value.trim(), mem = memText ? Number(memText) : null;
  if (memText ? !isFinite(mem) || mem <= 0 : !$("compare-gpu").value) {
    fieldError($("compare-memory"), memText ? "cache memory: a positive number of GiB per rank (got " + short(JSON.stringify(memText)) + ")"
                                            : "cache memory: a number of GiB per rank, or choose a GPU to size each engine from the card");
    return null;
  }
  fieldError($("compare-memory"), null);
  var L = wholeNumber($("compare-L"), "L"), tp = wholeNumber($("compare-tp"), "TP");
  if (L === null || tp === null) return null;
  return {model: model, memory_gib: mem, request_length: L, tp: tp, kv_cache_dtype: $("compare-kv").value,
          gpu: $("compare-gpu").value || null};
}
function writeCompareParams(body) {
  var q = {};
  Object.keys(COMPARE_KEYS).forEach(function (k) { q[k] = null; });
  if (!cmp.follow) {
    q = {cm: body.model, cg: body.gpu, cmem: body.memory_gib === null ? null : String(body.memory_gib), cL: body.request_length, ctp: body.tp === 1 ? null : body.tp,
         ckv: body.kv_cache_dtype === "auto" ? null : body.kv_cache_dtype};
  }
  setParams(q);
}
var COMPARE_FIELDS = {model: "compare-model", memory_gib: "compare-memory", request_length: "compare-L", tp: "compare-tp",
                      gpu: "compare-gpu", kv_cache_dtype: "compare-kv"};
function runCompare() {
  var body = compareBody();
  if (!body) return Promise.resolve();
  writeCompareParams(body);
  var seq = ++cmp.seq;
  $("compare-run").disabled = true;
  return api("/api/compare", body).then(function (res) {
    if (seq !== cmp.seq) return null;
    $("compare-run").disabled = false;
    Object.keys(COMPARE_FIELDS).forEach(function (k) { fieldError($(COMPARE_FIELDS[k]), null); });
    if (res.status !== 200) {
      var err = res.data.error || {};
      var name = (/^([a-z_]+): /.exec(err.message || "") || [])[1];
      var field = COMPARE_FIELDS[name] ? $(COMPARE_FIELDS[name]) : /^model /.test(err.message || "") ? $("compare-model") : null;
      clear($("compare-out"));
      if (cmp.follow) {  // the Deploy selection has no side-by-side (a model vLLM does not model): a note, not an error
        showError($("compare-error"), null);
        $("compare-out").appendChild(el("p", {class: "alert info", id: "compare-none"}, el("strong", {text: "No side-by-side for this selection: "}), short(err.message)));
      } else if (field) { fieldError(field, err.message); showError($("compare-error"), null); } else showError($("compare-error"), err);
      return null;
    }
    showError($("compare-error"), null);
    renderCompare(res.data);
    announce("Compared at " + fmtInt(body.request_length) + " tokens: SGLang serves " + fmtInt(res.data.sglang.requests_at_length) +
             " requests, vLLM " + fmtInt(res.data.vllm.requests_at_length) + ".");
    return null;
  });
}
// one row of the side-by-side table: the quantity, then each engine's value (exact value in data-value and the title)
function compareRow(key, label, s, v) {
  var cell = function (engine, x) {
    return el("td", {"data-engine": engine, "data-value": x.raw === null || x.raw === undefined ? "" : String(x.raw),
                     title: [exactText(x.raw, x.unit), x.note].filter(Boolean).join(" · ") || null},
      el("span", {class: "v", text: x.shown}), x.note ? el("span", {class: "sub muted", text: x.note}) : null);
  };
  return el("tr", {"data-key": key}, el("th", {scope: "row", text: label}), cell("sglang", s), cell("vllm", v));
}
function renderCompare(d) {
  var out = clear($("compare-out"));
  var s = d.sglang, v = d.vllm;
  var L = fmtInt(d.request_length), card = d.gpu ? (gpus[d.gpu] || {}).name || d.gpu : null, own = d.memory_gib === null;
  out.appendChild(el("div", {class: "table-wrap"}, el("table", {id: "compare-table", class: "side"},
    el("caption", {text: d.model + " at L = " + L + " tokens from " + (own ? "each engine's own cache memory" : fmtGiBv(d.memory_gib) + " of cache memory per rank") +
      (card ? " on " + card : "") + (d.tp > 1 ? ", TP " + d.tp : "")}),
    el("thead", {}, el("tr", {}, el("td", {}), el("th", {scope: "col", text: "SGLang " + s.version}), el("th", {scope: "col", text: "vLLM " + v.version}))),
    el("tbody", {},
      own ? compareRow("cache_memory_gib", "cache memory / rank", {shown: fmtGiBv(s.cache_memory_gib), raw: s.cache_memory_gib, unit: "GiB", note: s.memory_source},
        {shown: fmtGiBv(v.cache_memory_gib), raw: v.cache_memory_gib, unit: "GiB", note: v.memory_source}) : null,
      compareRow("requests_at_length", "requests of " + L + " tokens",
        {shown: fmtInt(s.requests_at_length), raw: s.requests_at_length, note: "bound by " + s.binding_limit},
        {shown: fmtInt(v.requests_at_length), raw: v.requests_at_length, note: "max concurrency " + v.max_concurrency.toFixed(2) + "x"}),
      compareRow("kv_tokens", "KV tokens", {shown: fmtInt(s.kv_tokens), raw: s.kv_tokens, note: "KV pool (max_total_num_tokens)"},
        {shown: fmtInt(v.kv_tokens), raw: v.kv_tokens, note: "GPU KV cache size"}),
      compareRow("state", "state", {shown: fmtInt(s.state_slots) + " slots", raw: s.state_slots, note: "a pool of its own, " + fmtInt(s.slots_per_request) + " per request"},
        {shown: fmtInt(v.state_pages_per_request) + " pages / request", raw: v.state_pages_per_request, note: v.mamba_cache_mode + " mode, in the one paged pool"}),
      compareRow("state_bytes_per_request", "state / request", {shown: fmtBytes(s.state_bytes_per_request), raw: s.state_bytes_per_request, unit: "B"},
        {shown: fmtBytes(v.state_bytes_per_request), raw: v.state_bytes_per_request, unit: "B"}),
      compareRow("paging", "KV paging", {shown: fmtBytes(s.kv_bytes_per_request), raw: s.kv_bytes_per_request, unit: "B", note: "KV of one request at L"},
        {shown: fmtInt(v.block_size) + "-token blocks", raw: v.block_size, note: fmtInt(v.blocks_per_request) + " blocks / request of " + fmtBytes(v.bytes_per_block)}),
      compareRow("running_cap", "running-request cap", {shown: fmtInt(s.max_running_requests), raw: s.max_running_requests, note: "max_running_requests"},
        {shown: v.max_num_seqs === null ? "-" : fmtInt(v.max_num_seqs), raw: v.max_num_seqs, note: "max_num_seqs"})))));
  var why = listBlock("compare-why", "Why they differ", d.why);
  if (why) out.appendChild(why);
  out.appendChild(el("h3", {text: "The commands compared"}));
  out.appendChild(el("p", {class: "muted", text: "SGLang, with " + fmtGiBv(own ? s.cache_memory_gib : d.memory_gib) + " as its pool budget" + (own ? " (" + s.memory_source + "):" : ":")}));
  out.appendChild(commandBlock("compare-sglang-command", s.command, d.gpu, null, null, {engine: "sglang", memory: d.memory_gib}));
  out.appendChild(el("p", {class: "muted", text: "vLLM, with " + fmtGiBv(own ? v.cache_memory_gib : d.memory_gib) + " as its available KV memory" + (own ? " (" + v.memory_source + "):" : ":")}));
  out.appendChild(commandBlock("compare-vllm-command", v.command, d.gpu, null, null, {engine: "vllm", memory: d.memory_gib}));
}
// Compare's fields from the Deploy state, then run (where it follows and the card leaves room for the pools)
export function followCompare() {
  if (!cmp.follow || !S.analysis || !S.analysis.cell || S.analysis.redirect) return Promise.resolve();
  var hw = hardware(), e = S.explain || {};
  if (!hw.gpu || !isNum(e.pool_budget_gib) || e.pool_budget_gib <= 0) {
    $("compare-follow").textContent = "Compare follows the Deploy selection once it names a card with room for the pools.";
    return Promise.resolve();
  }
  var args = e.args || {};
  var val = function (k) { return (args[k] || {}).value; };
  var memory = Math.floor(e.pool_budget_gib * 100) / 100;  // the input shows GiB to two decimals, never more than the budget
  $("compare-model").value = S.analysis.model_name || $("compare-model").value;
  $("compare-gpu").value = $("compare-gpu").querySelector('option[value="' + CSS.escape(hw.gpu) + '"]') ? hw.gpu : "";
  $("compare-memory").value = String(memory);
  $("compare-L").value = S.L || pageL() || "";
  $("compare-tp").value = val("tp_size") || 1;
  $("compare-kv").value = /^fp8/.test(String(val("kv_cache_dtype") || "")) ? "fp8" : "auto";
  $("compare-follow").textContent = "Compare takes the Deploy model on " + (hw.label || hw.gpu) + ", the pool budget SGLang finds " +
    "there for the Deploy command (" + fmtGiBv(memory) + ") as both engines' cache memory, and the Calculator's L. Edit a field to compare something else.";
  $("compare-refollow").hidden = true;
  return runCompare();
}
// the panel's handlers, then the link's Compare state (where it carries one: Compare starts detached and runs)
export function initCompare() {
  if (!wireFollower({state: cmp, id: "compare", name: "Compare", keys: COMPARE_KEYS, write: writeCompareParams,
                     follow: followCompare, run: runCompare})) return;
  selectParam("cg", $("compare-gpu"), "GPU");
  selectParam("ckv", $("compare-kv"), "KV cache dtype");
  modelParam("cm", $("compare-model"));
  if (params.has("cmem")) {
    if (isFinite(Number(params.get("cmem"))) && Number(params.get("cmem")) > 0) $("compare-memory").value = params.get("cmem");
    else dropParam("cmem", "not a positive number of GiB");
  }
  [["ctp", 1024], ["cL", 10000000]].forEach(function (p) {
    var n = intParam(p[0], p[1]);
    if (n !== null) $(COMPARE_KEYS[p[0]]).value = n;
  });
  runCompare();
}
