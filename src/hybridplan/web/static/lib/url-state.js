// URL state: the query string holds every input, so a link reproduces the page. A value the link carried that the
// page cannot use is dropped alone, with a note saying so (#link-notes). Also the table of reserved query keys:
// every other key is a Deploy dimension pick (ph:KEY is a placeholder value).

import { $, clear, el } from "./dom.js";
import { fmtInt, short } from "./format.js";

export var params = new URLSearchParams(window.location.search);
var linkNotes = [];

// set (or, for null/undefined/""/false, delete) keys and write the query string back without a navigation
export function setParams(updates) {
  Object.keys(updates).forEach(function (k) {
    var v = updates[k];
    if (v === null || v === undefined || v === "" || v === false) params.delete(k); else params.set(k, v === true ? "1" : v);
  });
  var q = params.toString();
  history.replaceState(null, "", window.location.pathname + (q ? "?" + q : "") + window.location.hash);
}
// a value the link carried that the page cannot use: dropped alone, with a note saying so
export function dropParam(key, why) {
  linkNotes.push(key + "=" + short(params.get(key)) + " (" + why + ")");
  params.delete(key);
  setParams({});
  drawLinkNotes();
}
// a note about the link that names no single key (the selection as a whole)
export function noteLink(text) {
  linkNotes.push(text);
  drawLinkNotes();
}
export function drawLinkNotes() {
  var box = $("link-notes");
  clear(box);
  box.hidden = !linkNotes.length;
  if (!linkNotes.length) return;
  box.appendChild(el("strong", {text: "Ignored from the link: "}));
  box.appendChild(el("ul", {}, linkNotes.map(function (n) { return el("li", {text: n}); })));
}
// the link's whole number from 1 to max under `key`, or null (a bad one dropped with a note)
export function intParam(key, max) {
  if (!params.has(key)) return null;
  var v = params.get(key);
  var n = Number(v);
  if (/^[0-9]+$/.test(v) && n >= 1 && n <= max) return n;
  dropParam(key, "not a whole number from 1 to " + fmtInt(max));
  return null;
}
// the link's value under `key` into a select, if it is one of its options
export function selectParam(key, select, what) {
  if (!params.has(key)) return;
  var v = params.get(key);
  if (Array.prototype.some.call(select.options, function (o) { return o.value === v; })) select.value = v;
  else dropParam(key, "not a known " + what);
}
// a model reference from the link into its field (at most 256 characters, as the API takes)
export function modelParam(key, input) {
  if (!params.has(key)) return;
  if (params.get(key).length <= 256) input.value = params.get(key); else dropParam(key, "longer than 256 characters");
}

// ---- reserved query keys (Plan's and Compare's map to their fields' ids); every other key is a dimension pick ----
export var PLAN_KEYS = {pm: "plan-model", pq: "plan-quant", ps: "plan-spec", pg: "plan-gpu", ptp: "plan-tp", pL: "plan-L",
                        pC: "plan-C", ppin: "plan-pin", pe: "plan-engine", pcmd: "plan-vllm-command", pkv: "plan-kv",
                        pver: "plan-vllm-version"};
export var COMPARE_KEYS = {ccmd: "compare-command", cm: "compare-model", cg: "compare-gpu", cmem: "compare-memory", cL: "compare-L",
                           ctp: "compare-tp", ckv: "compare-kv"};
export var FLEET_KEYS = {fm: "fleet-model", fg: "fleet-gpu", fL: "fleet-L", fC: "fleet-C", fn: "fleet-n", fk: "fleet-per-node",
                         fe: "fleet-engine"};
var RESERVED = {page: 1, run: 1, L: 1, C: 1, cmd: 1, budget: 1, egpu: 1, ever: 1, vver: 1, lv: 1, ld: 1, eng: 1, cver: 1};
Object.keys(PLAN_KEYS).forEach(function (k) { RESERVED[k] = 1; });
Object.keys(COMPARE_KEYS).forEach(function (k) { RESERVED[k] = 1; });
Object.keys(FLEET_KEYS).forEach(function (k) { RESERVED[k] = 1; });
export function isPick(k) { return !RESERVED[k] && k.indexOf("ph:") !== 0; }
