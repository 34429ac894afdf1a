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
// an input's own error line, right under the field (inside its label: never pushed along a row of fields), with
// aria-invalid + aria-describedby; null clears it. It goes once the field is corrected: on each edit `valid` (the
// check that raised it) is asked again, or, for an error the server raised, the edit itself clears it.
export function fieldError(input, message, valid) {
  var id = input.id + "-err";
  var box = $(id);
  if (!box) {
    box = el("span", {class: "field-error", id: id, role: "alert", hidden: true});
    input.insertAdjacentElement("afterend", box);
    var recheck = function () { if (!box.hidden && (!input._valid || input._valid())) fieldError(input, null); };
    input.addEventListener("input", recheck);
    input.addEventListener("change", recheck);
  }
  input._valid = message ? valid || null : null;
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
// a positive whole number typed into an input (at most its max), or null
function wholeOf(input) {
  var text = input.value.trim();
  var n = Number(text);
  return /^[0-9]+$/.test(text) && n >= 1 && n <= Number(input.getAttribute("max") || 1e7) ? n : null;
}
// a positive whole number typed into an input, or null with the field's error shown
export function wholeNumber(input, what) {
  var n = wholeOf(input);
  if (n === null) {
    var text = input.value.trim();
    fieldError(input, what + ": a whole number from 1 to " + fmtInt(Number(input.getAttribute("max") || 1e7)) +
               (text ? " (got " + short(JSON.stringify(text)) + ")" : ""), function () { return wholeOf(input) !== null; });
    return null;
  }
  fieldError(input, null);
  return n;
}
// the field an API error is about: its message's leading name (a field's or a flag's) looked up in `fields`
// (name -> input id), else `fallback` (an id, or null: the panel's box)
export function fieldOf(err, fields, fallback) {
  var name = (/^(--?[a-z][a-z0-9-]*|[a-z_]+): /.exec((err || {}).message || "") || [])[1];
  var id = name && fields[name] ? fields[name] : fallback;
  return id ? $(id) : null;
}
