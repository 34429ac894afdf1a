// The catalogs: the GPUs (every GPU select: Explain's, Plan's, Compare's, Fleet's; `gpus` maps an id to its card for
// labels) and the bundled models (Plan's and Compare's model suggestions), loaded once.

import { api } from "./api.js";
import { $, el } from "./dom.js";
import { fmtGiBv } from "./format.js";

export var gpus = {};  // catalog id -> GPU (for labels)

export function loadCatalogs() {
  return api("/api/gpus").then(function (res) {
    ["explain-gpu", "plan-gpu", "compare-gpu", "fleet-gpu"].forEach(function (id) {
      (res.data.gpus || []).forEach(function (g) {
        gpus[g.id] = g;
        $(id).appendChild(el("option", {value: g.id, text: g.name + " (" + fmtGiBv(g.memory_gib) + ")"}));
      });
    });
    return api("/api/models");
  }).then(function (res) {
    (res.data.models || []).forEach(function (m) { $("plan-models").appendChild(el("option", {value: m.id})); });
  });
}
// a card as the panels name it: its catalog name, or its memory alone (--gpu-memory-gib)
export function cardName(gpu, memoryGib) {
  return gpu ? (gpus[gpu] || {}).name || gpu : typeof memoryGib === "number" ? "a " + memoryGib + " GiB card" : "the card";
}
