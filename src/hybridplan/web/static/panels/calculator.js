// Calculator: `ratio --json --gpu <card> -L L -C C -- <the Deploy command>`: the geometry (S, D, bytes), the
// balanced ratio or pin the command carries, whether C fits on the card, the command and the formula; and the
// hint under C (what the command serves, or "changed from the recipe" with the way back).

import { $, clear, el } from "../lib/dom.js";
import { listBlock, stat, term } from "../lib/figures.js";
import { fmtBytes, fmtInt, isNum } from "../lib/format.js";
import { commandBlock } from "./commands.js";
import { S, changedFlags, commandOf, flagsOf } from "./selection.js";

var SIZING = ["--mamba-full-memory-ratio", "--max-mamba-cache-size"];

// q: the ratio answer; d: the analysed render; hw: the selected hardware row
export function drawCalculator(q, d, hw) {
  var out = clear($("calc-out"));
  var f = q.formula || {};
  var r = d.ratio || {};
  var own = d.effective ? r.effective : r.base;  // the ratio the render put into the command shown
  var base = r.base, cell = r.cell;
  var card = hw.label || hw.gpu || "this card";
  var ring = (S.explain || {}).replayssm_ring_bytes_per_request || 0;
  out.appendChild(el("div", {class: "stats", id: "calc-geometry"},
    stat("slots_per_request", term("S", "S slots / request"), fmtInt(q.slots_per_request), q.slots_per_request, {source: "engine rule", note: "_calculate_mamba_ratio"}),
    stat("draft_states_per_request", term("D", "D verify states"), fmtInt(q.draft_states_per_request), q.draft_states_per_request, {source: "engine rule"}),
    stat("state_bytes_per_slot", ring ? "state / slot (+ ring)" : "state / slot", fmtBytes(q.state_bytes_per_slot), q.state_bytes_per_slot, {source: "engine rule", note: "from config"}, null, "B"),
    stat("kv_bytes_per_token", "KV / token", fmtBytes(q.kv_bytes_per_token), q.kv_bytes_per_token, {source: "engine rule", note: "draft KV folded in"}, null, "B")));
  if (ring) {  // explain counts the ReplaySSM ring apart; the formula prices it per slot: say how the two add up
    out.appendChild(el("p", {class: "muted", id: "calc-ring", "data-state": String(S.explain.state_bytes_per_slot), "data-ring": String(ring)},
      "State / slot in the formula = " + fmtInt(S.explain.state_bytes_per_slot) + " B of conv + SSM state + " +
      fmtInt(ring) + " B of ReplaySSM ring per request."));
  }
  var pinned = r.pinned;
  var sizing = flagsOf(d).filter(function (x) { return SIZING.some(function (s) { return x.indexOf(s) === 0; }); });
  var hasRatio = sizing.some(function (x) { return x.indexOf(SIZING[0]) === 0; });
  var inCommand = sizing.length ? sizing.join(" ") : null;
  out.appendChild(el("div", {class: "stats", id: "calc-answer"},
    inCommand ? stat("in_command", "in the command (" + (pinned === "calculator" || pinned === null ? "calculator" : "pinned by the " + pinned) + ")",
                     inCommand, inCommand, {source: pinned === "cell" || pinned === "overlay" ? "input" : "engine rule", note: pinned === "cell" || pinned === "overlay" ? "the recipe's own pin" : f.text || ""}, "binding") : null,
    stat("pinned_ratio", term("ratio", "balanced ratio for L = " + fmtInt(q.request_length)), own && own.text !== null ? own.text : "-",
         own ? own.mamba_full_memory_ratio : null, {source: "engine rule", note: f.text || ""}),
    stat("max_mamba_cache_size_pin", term("pin", "or pin for C = " + fmtInt(q.concurrency)), fmtInt(q.max_mamba_cache_size_pin) + " slots", q.max_mamba_cache_size_pin, {source: "engine rule", note: f.pin_text || ""}),
    isNum(q.mamba_full_memory_ratio) ? stat("exact_ratio", "exact on " + card, q.mamba_full_memory_ratio_text, q.mamba_full_memory_ratio,
                    {source: (q.budget || {}).source, note: "search over the engine's sizing; binding: " + q.binding_pool}) : null,
    q.pin_fits === null || q.pin_fits === undefined ? null :
      stat("pin_fits", "C = " + fmtInt(q.concurrency) + " fits on " + card, q.pin_fits ? "yes" : "no", q.pin_fits, {source: "engine rule", note: (q.pin_check || {}).reason || ""})));
  var status;
  if (pinned === "cell") status = "The recipe's cell sizes the state pool itself; the balanced value stands beside it.";
  else if (pinned === "overlay") status = "An overlay pick sizes the state pool with its own pin; the balanced value for the base command stands beside it.";
  else if (hasRatio) status = "The recipe sizes nothing itself, so the command carries the balanced ratio " + (own || {}).text + " for L = " + fmtInt(q.request_length) + ".";
  else status = "No ratio is pinned into the command.";
  out.appendChild(el("p", {id: "calc-status", text: status}));
  if (cell && base && cell.text !== base.text) {
    out.appendChild(el("p", {id: "calc-base", "data-value": String(cell.text)},
      "The overlays change it: the cell's own command balances at ", el("code", {text: cell.text}),
      ", the command with your overlays at ", el("code", {text: base.text}), "."));
  }
  if (q.pin_fits === false && q.pin_check && q.pin_check.reason) {
    out.appendChild(el("div", {class: "alert warn", id: "calc-pin-warning", text: "At C = " + fmtInt(q.concurrency) + " on " + card + ": " + q.pin_check.reason}));
  }
  // the exact search's reason only where the command does not already carry a ratio (it would contradict it)
  if (q.reason && !hasRatio) out.appendChild(el("div", {class: "alert info", id: "calc-reason", text: q.reason}));
  var warn = listBlock("calc-warnings", "Notes", q.warnings);
  if (warn) out.appendChild(warn);
  out.appendChild(commandBlock("calc-command", commandOf(S.pip), hw.gpu, changedFlags(S.pip), commandOf(d),
                               {version: d.engine_version}));
  out.appendChild(el("details", {id: "calc-formula"}, el("summary", {text: "Formula"}),
    el("p", {}, el("code", {text: f.text || ""})),
    el("p", {class: "mono", text: "(" + f.S + " + " + f.D + ") x " + fmtInt(f.state_bytes_per_slot) + " / (" +
      fmtInt(f.L) + " x " + fmtInt(f.kv_bytes_per_token) + ") = " + (f.value === null ? "-" : String(f.value))}),
    el("p", {}, el("code", {text: f.pin_text || ""})),
    el("p", {class: "mono", text: "C = " + f.C + ", attn_dp_size = " + f.attn_dp_size + " -> pin " + fmtInt(f.pin)})));
}

// the hint under C: what the command serves, or that C changed it from the recipe with a button back (onReset)
export function drawCHint(onReset) {
  var hint = clear($("calc-C-hint"));
  if (S.C === null) {
    hint.appendChild(document.createTextNode(S.served !== null ? "What the command serves (" + fmtInt(S.served) +
      " requests, bound by " + (S.explain.binding_limit || "?") + "). Change it to set --max-running-requests." :
      "The page's workload."));
  } else {
    hint.appendChild(document.createTextNode("Changed from the recipe" + (S.served !== null ? " (the command now serves " + fmtInt(S.served) + ")" : "") + ". "));
    var back = el("button", {type: "button", class: "ghost small", id: "calc-reset", text: "Back to the recipe"});
    back.addEventListener("click", onReset);
    hint.appendChild(back);
  }
}
