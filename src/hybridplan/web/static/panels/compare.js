// Compare: `compare --json`, SGLang and vLLM side by side (drawn by compare-view.js). It follows the Deploy
// selection: the Deploy command itself (its ratio or pin, speculative decoding, KV and SSM dtypes) runs as it is on
// SGLang, and what vLLM shares of it is carried over, each engine sizing itself on the Deploy card at the
// Calculator's L, until its own fields are edited. Typed, it compares a pasted SGLang launch, or a model at each
// engine's defaults.

import { api } from "../lib/api.js";
import { $, announce, clear } from "../lib/dom.js";
import { fieldError, fieldOf, showError, wholeNumber } from "../lib/errors.js";
import { wireFollower } from "../lib/follower.js";
import { fmtInt, isNum, short } from "../lib/format.js";
import { COMPARE_KEYS, dropParam, intParam, modelParam, params, selectParam, setParams } from "../lib/url-state.js";
import { ENGINES, legState, renderCompare } from "./compare-view.js";
import { S, commandOf, hardware, pageL } from "./selection.js";

var cmp = {follow: true, seq: 0, version: null};  // version: the SGLang build the Deploy page pins, while following
// an error's field (the API's name or the CLI flag's) -> the input it is about
var FIELDS = {model: "compare-model", "--model": "compare-model", memory_gib: "compare-memory", "--memory-gib": "compare-memory",
              request_length: "compare-L", tp: "compare-tp", "--tp": "compare-tp", gpu: "compare-gpu", "--gpu": "compare-gpu",
              kv_cache_dtype: "compare-kv", "--kv-cache-dtype": "compare-kv", command: "compare-command"};

// with a launch typed, the model, TP and KV dtype are the launch's: their fields rest
function syncFields() {
  var launch = !!$("compare-command").value.trim();
  ["compare-model", "compare-tp", "compare-kv"].forEach(function (id) { $(id).disabled = launch; if (launch) fieldError($(id), null); });
}
function memoryOk(text) { return text ? isFinite(Number(text)) && Number(text) > 0 : !!$("compare-gpu").value; }
function compareBody() {
  var command = $("compare-command").value.trim(), model = $("compare-model").value.trim();
  if (!command && !model) {
    fieldError($("compare-model"), "model: a catalog id or Hub id (or paste a launch above)", function () { return !!$("compare-model").value.trim(); });
    return null;
  }
  fieldError($("compare-model"), null);
  var memText = $("compare-memory").value.trim(), mem = memText ? Number(memText) : null;
  if (!memoryOk(memText)) {
    fieldError($("compare-memory"), memText ? "cache memory: a positive number of GiB per rank (got " + short(JSON.stringify(memText)) + ")"
                                            : "cache memory: a number of GiB per rank, or choose a GPU to size each engine from the card",
               function () { return memoryOk($("compare-memory").value.trim()); });
    return null;
  }
  fieldError($("compare-memory"), null);
  var L = wholeNumber($("compare-L"), "L"), tp = command ? 1 : wholeNumber($("compare-tp"), "TP");
  if (L === null || tp === null) return null;
  var body = {memory_gib: mem, request_length: L, gpu: $("compare-gpu").value || null};
  if (command) { body.command = command; if (cmp.version) body.sglang_version = cmp.version; }
  else { body.model = model; body.tp = tp; body.kv_cache_dtype = $("compare-kv").value; }
  return body;
}
function writeCompareParams(body) {
  var q = {cver: null};
  Object.keys(COMPARE_KEYS).forEach(function (k) { q[k] = null; });
  if (!cmp.follow) {
    q = {ccmd: body.command, cm: body.model, cg: body.gpu, cmem: body.memory_gib === null ? null : String(body.memory_gib),
         cL: body.request_length, ctp: body.tp && body.tp !== 1 ? body.tp : null,
         ckv: body.kv_cache_dtype && body.kv_cache_dtype !== "auto" ? body.kv_cache_dtype : null, cver: body.sglang_version};
  }
  setParams(q);
}
function runCompare() {
  var body = compareBody();
  if (!body) return Promise.resolve();
  writeCompareParams(body);
  var seq = ++cmp.seq;
  $("compare-run").disabled = true;
  return api("/api/compare", body).then(function (res) {
    if (seq !== cmp.seq) return null;
    $("compare-run").disabled = false;
    Object.keys(FIELDS).forEach(function (k) { fieldError($(FIELDS[k]), null); });
    if (res.status !== 200) {
      var err = res.data.error || {};
      var field = fieldOf(err, FIELDS, /^model /.test(err.message || "") ? "compare-model" : body.command ? "compare-command" : null);
      clear($("compare-out"));
      if (field) { fieldError(field, err.message); showError($("compare-error"), null); } else showError($("compare-error"), err);
      announce("Compare: " + short(err.message));
      return null;
    }
    showError($("compare-error"), null);
    renderCompare(res.data);
    announce("Compared at " + fmtInt(body.request_length) + " tokens: " + ENGINES.map(function (e) {
      var leg = res.data[e[0]] || {};
      return e[1] + " " + (isNum(leg.requests_at_length) ? "serves " + fmtInt(leg.requests_at_length) + " requests" : "has none: " + legState(leg));
    }).join(", ") + ".");
    return null;
  });
}
// Compare's fields from the Deploy state (the Deploy command on the Deploy card at the Calculator's L), then run
export function followCompare() {
  if (!cmp.follow || !S.analysis || !S.analysis.cell || S.analysis.redirect) return Promise.resolve();
  var hw = hardware();
  if (!hw.gpu) {
    $("compare-follow").textContent = "Compare follows the Deploy selection once it names a card in the catalog.";
    return Promise.resolve();
  }
  $("compare-command").value = commandOf(S.analysis);
  $("compare-model").value = S.analysis.model_name || $("compare-model").value;
  $("compare-gpu").value = $("compare-gpu").querySelector('option[value="' + CSS.escape(hw.gpu) + '"]') ? hw.gpu : "";
  $("compare-memory").value = "";
  $("compare-L").value = S.L || pageL() || "";
  cmp.version = S.analysis.engine_version || null;
  syncFields();
  $("compare-follow").textContent = "Compare runs the Deploy command as it is on SGLang and carries what vLLM shares of it (each side says " +
    "what it carried and left behind), each engine sizing itself on " + (hw.label || hw.gpu) + ", at the Calculator's L. Edit a field to compare something else.";
  $("compare-refollow").hidden = true;
  return runCompare();
}
// the panel's handlers, then the link's Compare state (where it carries one: Compare starts detached and runs)
export function initCompare() {
  $("compare-command").addEventListener("input", syncFields);
  if (!wireFollower({state: cmp, id: "compare", name: "Compare", keys: COMPARE_KEYS, write: writeCompareParams,
                     follow: followCompare, run: runCompare})) return;
  selectParam("cg", $("compare-gpu"), "GPU");
  selectParam("ckv", $("compare-kv"), "KV cache dtype");
  modelParam("cm", $("compare-model"));
  if (params.has("ccmd")) {
    if (params.get("ccmd").length <= 16384) $("compare-command").value = params.get("ccmd"); else dropParam("ccmd", "longer than 16,384 characters");
  }
  if (params.has("cver")) {
    if (/^[0-9A-Za-z._-]{1,32}$/.test(params.get("cver"))) cmp.version = params.get("cver"); else dropParam("cver", "not a release");
  }
  if (params.has("cmem")) {
    if (isFinite(Number(params.get("cmem"))) && Number(params.get("cmem")) > 0) $("compare-memory").value = params.get("cmem");
    else dropParam("cmem", "not a positive number of GiB");
  }
  [["ctp", 1024], ["cL", 10000000]].forEach(function (p) {
    var n = intParam(p[0], p[1]);
    if (n !== null) $(COMPARE_KEYS[p[0]]).value = n;
  });
  syncFields();
  runCompare();
}
