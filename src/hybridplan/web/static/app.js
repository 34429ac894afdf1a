// hybridplan page, the entry module: calls the JSON API (the CLI's functions) and shows the dicts it returns. No
// model logic here: every number on the page is a value from an API payload, only formatted for reading.
//
// One state (page, selection, placeholders, L, C) drives every panel (panels/selection.js): Deploy renders the
// command, the Memory picture and the Calculator analyse that same command on the selected card, and Plan and
// Compare follow the same card and workload until their own fields are edited. The query string holds every input.
// Each panel is a module under panels/, the helpers they share are under lib/; the page's import map addresses
// every module by its content hash (hybridplan.web.assets).

import { loadCatalogs } from "./lib/catalogs.js";
import { drawLinkNotes } from "./lib/url-state.js";
import { initCompare } from "./panels/compare.js";
import { initDeploy } from "./panels/deploy.js";
import { initExplain, wireExplain } from "./panels/explain.js";
import { initFleet } from "./panels/fleet.js";
import { initPlan } from "./panels/plan.js";

document.addEventListener("DOMContentLoaded", function () {
  drawLinkNotes();
  // until a form's own handler is wired, a submit stays on the page (a native GET would reload it)
  document.addEventListener("submit", function (ev) { ev.preventDefault(); });
  wireExplain();
  var ready = function () { document.documentElement.setAttribute("data-ready", "true"); };
  loadCatalogs().then(function () {
    initExplain();
    initPlan();
    initCompare();
    initFleet();
    return initDeploy();
  }).then(ready, ready);
});
