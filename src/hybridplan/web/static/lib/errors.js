// Error placement: an answer's error in its panel's box, or next to the field it is about (aria-invalid and
// aria-describedby), short, and gone once fixed.

import { $, clear, el } from "./dom.js";
import { fmtInt, short } from "./format.js";

// a panel's error box: the error (a refusal says the engine would not start), or hidden for null
export function showError(box, err) {
  clear(box);
  if (!err) { box.hidden = true; return; }
  box.appendChild(el("strong", {text: err.type === "EngineRefusal" || err.rule ? "The engine would refuse to start: " : "Error: "}));
  box.appendChild(document.createTextNode(short(err.message)));
  if (err.rule) box.appendChild(el("div", {class: "muted", text: "rule: " + short(err.rule)}));
  box.hidden = false;
}
// an input's own error line (aria-invalid + aria-describedby); null clears it
export function fieldError(input, message) {
  var id = input.id + "-err";
  var box = $(id);
  if (!box) {
    box = el("p", {class: "field-error", id: id, role: "alert", hidden: true});
    (input.closest("label") || input).insertAdjacentElement("afterend", box);
  }
  if (message) {
    box.textContent = short(message);
    box.hidden = false;
    input.setAttribute("aria-invalid", "true");
    input.setAttribute("aria-describedby", ((input.getAttribute("aria-describedby") || "").replace(id, "") + " " + id).trim());
  } else {
    box.textContent = "";
    box.hidden = true;
    input.removeAttribute("aria-invalid");
    var rest = (input.getAttribute("aria-describedby") || "").replace(id, "").trim();
    if (rest) input.setAttribute("aria-describedby", rest); else input.removeAttribute("aria-describedby");
  }
}
// a positive whole number typed into an input, or null with the field's error shown
export function wholeNumber(input, what) {
  var text = input.value.trim();
  var n = Number(text);
  if (!/^[0-9]+$/.test(text) || !(n >= 1) || n > Number(input.getAttribute("max") || 1e7)) {
    fieldError(input, what + ": a whole number from 1 to " + fmtInt(Number(input.getAttribute("max") || 1e7)) +
               (text ? " (got " + short(JSON.stringify(text)) + ")" : ""));
    return null;
  }
  fieldError(input, null);
  return n;
}
