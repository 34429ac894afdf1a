// Figures with their sources: a labelled value whose exact number and provenance show on hover and focus, a term
// with its glossary popover, a titled list, and a verdict's confidence line.

import { el } from "./dom.js";
import { exactText, provText } from "./format.js";

// one figure: label, formatted value, raw value and provenance (title = hover, aria-description = focus)
export function stat(key, label, shown, raw, prov, extraClass, unit) {
  var tip = [exactText(raw, unit), provText(prov)].filter(Boolean).join(" · ");
  return el("div", {class: "stat" + (extraClass ? " " + extraClass : ""), "data-key": key,
                    "data-value": raw === null || raw === undefined ? "" : String(raw), title: tip || null,
                    tabindex: tip ? "0" : null, "aria-description": tip || null},
    el("span", {class: "k"}, label), el("span", {class: "v", text: shown}));
}
// a term with its glossary popover (S, D, K, ratio, pin): the button opens the definition in index.html
export function term(key, text) {
  return el("span", {class: "term"}, text, " ",
    el("button", {type: "button", class: "gloss", popovertarget: "gloss-" + key, "aria-label": "What is " + key + "?",
                  text: "?"}));
}
// a titled list (warnings, notes), or null when there is nothing to list
export function listBlock(id, title, items, cls) {
  if (!items || !items.length) return null;
  return el("div", {id: id}, el("h3", {text: title}),
    el("ul", {class: cls || ""}, items.map(function (w) { return el("li", {text: w}); })));
}
// a verdict's confidence (planner.evidence): measured, calibrated (margin shown) or extrapolated (what is unknown)
export function confidenceLine(id, c) {
  if (!c) return null;
  return el("p", {id: id, class: "confidence", "data-level": c.level}, el("strong", {text: "Confidence: " + c.level}),
    " — " + c.note + "." + (c.unknowns && c.unknowns.length ? " Unknown: " + c.unknowns.join("; ") + "." : ""));
}
