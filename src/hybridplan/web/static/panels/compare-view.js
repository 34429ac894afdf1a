// Compare's answer drawn (`compare --json`): one row per quantity with a column per engine (its verdict first), then
// each engine's own answer: its verdict (the engine's message where it refuses), the cheapest change that would serve
// with its command, the launch compared and, for a launch carried from the other engine, what was carried, added and
// left behind; then why they differ. An engine the model does not cover for this launch says so in its column.

import { $, clear, el } from "../lib/dom.js";
import { cardName } from "../lib/catalogs.js";
import { listBlock } from "../lib/figures.js";
import { exactText, fmtBytes, fmtGiBv, fmtInt, isNum } from "../lib/format.js";
import { verdictBlock } from "../lib/verdict.js";
import { commandBlock } from "./commands.js";

export var ENGINES = [["sglang", "SGLang"], ["vllm", "vLLM"]];  // the payload's keys, in its order, and their names

// a leg's short answer: serves, fails (phase), or not modelled
export function legState(leg) {
  if (leg.modelled === false) return "not modelled";
  var v = leg.verdict;
  return !v ? "-" : v.serves ? "serves" : "fails (" + v.phase + ")";
}
function row(key, label, cells) {
  return el("tr", {"data-key": key}, el("th", {scope: "row", text: label}), ENGINES.map(function (e, i) {
    var x = cells[i];
    return el("td", {"data-engine": e[0], "data-value": x.raw === null || x.raw === undefined ? "" : String(x.raw),
                     title: [exactText(x.raw, x.unit), x.note].filter(Boolean).join(" · ") || null},
      el("span", {class: "v", text: x.shown}), x.note ? el("span", {class: "sub muted", text: x.note}) : null);
  }));
}
// each quantity for both engines: cell(leg, engine) -> {shown, raw, unit, note}; "-" where the engine has none (it
// would not start, or it is not modelled)
function quantity(d, key, label, cell) {
  return row(key, label, ENGINES.map(function (e) {
    var leg = d[e[0]] || {};
    var x = leg.modelled === false && key !== "verdict" ? null : cell(leg, e[0]);
    return x === null || x.raw === null || x.raw === undefined ? {shown: "-", raw: null} : x;
  }));
}
function table(d, own) {
  var L = fmtInt(d.request_length), card = d.gpu || isNum(d.gpu_memory_gib) ? cardName(d.gpu, d.gpu_memory_gib) : null;
  var num = function (x) { return isNum(x) ? x : null; };
  return el("div", {class: "table-wrap"}, el("table", {id: "compare-table", class: "side"},
    el("caption", {text: d.model + " at L = " + L + " tokens from " + (own ? "each engine's own cache memory" : fmtGiBv(d.memory_gib) + " of cache memory per rank") +
      (card ? " on " + card : "") + (d.tp > 1 ? ", TP " + d.tp : "")}),
    el("thead", {}, el("tr", {}, el("td", {}), ENGINES.map(function (e) { return el("th", {scope: "col", text: e[1] + " " + ((d[e[0]] || {}).version || "")}); }))),
    el("tbody", {},
      quantity(d, "verdict", "verdict" + (card ? " on " + card : ""), function (leg) {
        return {shown: legState(leg), raw: leg.verdict ? leg.verdict.serves : leg.modelled === false ? "not modelled" : null,
                note: leg.verdict && !leg.verdict.serves ? leg.verdict.why : null};
      }),
      own ? quantity(d, "cache_memory_gib", "cache memory / rank", function (leg) {
        return {shown: fmtGiBv(leg.cache_memory_gib), raw: leg.cache_memory_gib, unit: "GiB", note: leg.memory_source};
      }) : null,
      quantity(d, "requests_at_length", "requests of " + L + " tokens", function (leg, e) {
        return {shown: fmtInt(leg.requests_at_length), raw: leg.requests_at_length,
                note: e === "sglang" ? (leg.binding_limit ? "bound by " + leg.binding_limit : null) :
                  isNum(leg.max_concurrency) ? "max concurrency " + leg.max_concurrency.toFixed(2) + "x" : null};
      }),
      quantity(d, "kv_tokens", "KV tokens", function (leg, e) {
        return {shown: fmtInt(leg.kv_tokens), raw: leg.kv_tokens, note: e === "sglang" ? "KV pool (max_total_num_tokens)" : "GPU KV cache size"};
      }),
      quantity(d, "state", "state", function (leg, e) {
        return e === "sglang" ? {shown: fmtInt(leg.state_slots) + " slots", raw: leg.state_slots, note: isNum(leg.slots_per_request) ? "a pool of its own, " + fmtInt(leg.slots_per_request) + " per request" : null}
          : {shown: fmtInt(leg.state_pages_per_request) + " pages / request", raw: leg.state_pages_per_request, note: leg.mamba_cache_mode ? leg.mamba_cache_mode + " mode, in the one paged pool" : null};
      }),
      quantity(d, "state_bytes_per_request", "state / request", function (leg) {
        return {shown: fmtBytes(leg.state_bytes_per_request), raw: leg.state_bytes_per_request, unit: "B"};
      }),
      quantity(d, "paging", "KV paging", function (leg, e) {
        return e === "sglang" ? {shown: fmtBytes(leg.kv_bytes_per_request), raw: leg.kv_bytes_per_request, unit: "B", note: "KV of one request at L"}
          : {shown: fmtInt(leg.block_size) + "-token blocks", raw: leg.block_size, note: isNum(leg.blocks_per_request) ? fmtInt(leg.blocks_per_request) + " blocks / request of " + fmtBytes(leg.bytes_per_block) : null};
      }),
      quantity(d, "running_cap", "running-request cap", function (leg, e) {
        var cap = e === "sglang" ? leg.max_running_requests : leg.max_num_seqs;
        return {shown: fmtInt(num(cap)), raw: num(cap), note: e === "sglang" ? "max_running_requests" : "max_num_seqs"};
      }))));
}
// one engine's own answer under the table
function answer(d, e, own) {
  var name = e[0], leg = d[name] || {};
  var box = el("div", {class: "compare-leg", id: "compare-leg-" + name, "data-engine": name}, el("h3", {text: e[1] + " " + (leg.version || "")}));
  if (leg.modelled === false) {
    box.appendChild(el("p", {class: "alert info", id: "compare-unmodelled-" + name}, el("strong", {text: e[1] + " is not modelled for this launch: "}), (leg.error || {}).message || ""));
    return box;
  }
  var fix = leg.cheapest_change;
  var where = d.gpu || isNum(d.gpu_memory_gib) ? "on " + cardName(d.gpu, d.gpu_memory_gib) : null;
  var verdict = verdictBlock("compare-verdict-" + name, leg.verdict, {where: where, fix: fix,
    fixBlock: fix && fix.command ? commandBlock("compare-fix-" + name, fix.command, d.gpu, null, null, {engine: name, version: leg.version}) : null});
  if (verdict) box.appendChild(verdict);
  else if (leg.error) box.appendChild(el("p", {class: "alert error", id: "compare-verdict-" + name}, el("strong", {text: "The engine would refuse to start: "}), leg.error.message));
  var memory = own ? leg.cache_memory_gib : d.memory_gib;
  box.appendChild(el("p", {class: "muted", text: "The command compared" + (isNum(memory) ? ", with " + fmtGiBv(memory) + (name === "sglang" ? " as its pool budget" : " as its available KV memory") : "") +
    (own && leg.memory_source ? " (" + leg.memory_source + ")" : "") + ":"}));
  box.appendChild(commandBlock("compare-" + name + "-command", leg.command, d.gpu, null, null, {engine: name, memory: d.memory_gib, version: leg.version}));
  var launch = leg.launch;
  if (launch && launch.from) {
    var from = (ENGINES.filter(function (x) { return x[0] === launch.from; })[0] || [0, launch.from])[1];
    box.appendChild(el("div", {id: "compare-launch-" + name},
      el("p", {}, "Carried from the " + from + " launch: " + (launch.carried.length ? launch.carried.join(" ") : "nothing but the model") + "."),
      listBlock("compare-added-" + name, "Added", launch.added),
      listBlock("compare-not-carried-" + name, "Not carried", launch.not_carried)));
  }
  return box;
}
export function renderCompare(d) {
  var out = clear($("compare-out"));
  var own = d.memory_gib === null;
  out.appendChild(table(d, own));
  out.appendChild(el("div", {class: "grid2 compare-legs"}, ENGINES.map(function (e) { return answer(d, e, own); })));
  var why = listBlock("compare-why", "Why they differ", d.why);
  if (why) out.appendChild(why);
}
