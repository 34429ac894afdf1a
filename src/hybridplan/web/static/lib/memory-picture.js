// The memory picture: one GPU's `breakdown` (explain --gpu, plan) as a stacked SVG bar whose segments say their
// bytes and source on hover and focus, and the memory timeline behind it as a table.

import { el, svg } from "./dom.js";
import { GIB, exactText, fmtFrac, fmtGiBv, fmtInt, isNum } from "./format.js";

// [breakdown key, label, CSS class, the timeline step whose note explains it]
var SEGMENTS = [
  ["driver_reserved_gib", "driver reserved", "seg-slack", "visible_gib"],
  ["context_gib", "CUDA context", "seg-slack", "context_gib"],
  ["weights_gib", "weights", "seg-weights", "target_weights_gib"],
  ["draft_weights_gib", "draft weights", "seg-draft", "draft_weights_gib"],
  ["state_pool_gib", "state pool", "seg-state", null],
  ["spec_scratch_gib", "spec verify scratch", "seg-scratch", null],
  ["kv_pool_gib", "KV pool", "seg-kv", null],
  ["cuda_graphs_activations_gib", "CUDA graphs + activations", "seg-graphs", "headroom_gib"],
  ["free_gib", "slack left", "seg-free", null]
];
var POOL_NOTES = {
  state_pool_gib: "conv + SSM state as the engine allocates them ((K + 1) rows)",
  spec_scratch_gib: "intermediate SSM / conv-window verify buffers",
  kv_pool_gib: "K + V caches for max_total_num_tokens (+ one page of padding)",
  free_gib: "the card less everything else"
};
export function memoryPicture(b, timeline, title, id) {
  var parts = SEGMENTS.filter(function (s) { return isNum(b[s[0]]); });
  var positive = parts.reduce(function (a, s) { return a + Math.max(0, b[s[0]]); }, 0);
  var total = Math.max(b.capacity_gib || 0, positive);  // an over-committed card draws past its capacity line
  var wrap = el("figure", {class: "memory", id: id});
  wrap.appendChild(el("figcaption", {text: title + (b.capacity_gib ? " — " + fmtGiBv(b.capacity_gib) : "")}));
  var box = svg("svg", {viewBox: "0 0 1000 64", role: "list", "aria-label": title, preserveAspectRatio: "none"});
  var tip = el("p", {class: "tip", "aria-live": "polite"});
  var x = 0;
  parts.forEach(function (s) {
    var gib = b[s[0]];
    var bytes = Math.round(gib * GIB);
    var src = (b.sources || {})[s[0]] || "";
    var note = s[3] && timeline && timeline[s[3]] ? timeline[s[3]].note : POOL_NOTES[s[0]] || "";
    var text = s[1] + ": " + fmtGiBv(gib) + " (" + fmtInt(bytes) + " B) — " + src + (note ? ": " + note : "");
    var w = total > 0 ? Math.max(0, gib) / total * 1000 : 0;
    var r = svg("rect", {x: x, y: 0, width: w, height: 64, class: s[2], tabindex: w > 0 ? 0 : null, role: "listitem",
                         "aria-label": text, "data-segment": s[0], "data-gib": gib, "data-bytes": bytes, "data-source": src});
    var t = svg("title", {}); t.textContent = text; r.appendChild(t);
    var show = function () { tip.textContent = text; };
    r.addEventListener("mouseenter", show); r.addEventListener("focus", show);
    box.appendChild(r);
    x += w;
  });
  if (b.capacity_gib && positive > b.capacity_gib) {
    var cx = b.capacity_gib / total * 1000;
    box.appendChild(svg("line", {x1: cx, x2: cx, y1: 0, y2: 64, class: "capacity", "data-capacity": b.capacity_gib}));
  }
  wrap.appendChild(box);
  wrap.appendChild(el("div", {class: "legend"}, parts.map(function (s) {
    return el("span", {"data-segment": s[0], title: exactText(b[s[0]], "GiB")}, el("span", {class: "sw " + s[2]}), s[1] + " " + fmtGiBv(b[s[0]]));
  })));
  wrap.appendChild(tip);
  if (isNum(b.free_gib) && b.free_gib < 0) {
    wrap.appendChild(el("div", {class: "alert warn", text: "Over by " + fmtGiBv(-b.free_gib) + ": the planner's " +
      "estimate of CUDA graphs + activations (" + fmtGiBv(b.cuda_graphs_activations_gib) + ") is more than the " +
      "pools leave; the line marks the card's capacity."}));
  }
  return wrap;
}
export function timelineTable(tl) {
  var rows = Object.keys(tl || {}).filter(function (k) { return tl[k] && typeof tl[k] === "object" && "value" in tl[k]; });
  return el("details", {class: "timeline"}, el("summary", {text: "Memory timeline (one GPU)"}),
    el("div", {class: "table-wrap"}, el("table", {}, el("tbody", {}, rows.map(function (k) {
      var v = tl[k];
      var shown = isNum(v.value) ? (k.indexOf("fraction") >= 0 ? fmtFrac(v.value) : fmtGiBv(v.value)) : String(v.value);
      return el("tr", {"data-step": k}, el("td", {}, el("code", {text: k})),
        el("td", {class: "num", title: exactText(v.value), text: shown}),
        el("td", {text: v.source}), el("td", {class: "muted", text: v.note || ""}));
    })))));
}
