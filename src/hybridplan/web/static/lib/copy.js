// Copy buttons: the clipboard API where the page is a secure context, else a hidden textarea and execCommand;
// the button's status line says whether it worked.

import { el } from "./dom.js";

function copyText(text, status) {
  var done = function () { status.textContent = "Copied."; };
  var fail = function () { status.textContent = "Copy failed: select the text and press Ctrl+C."; };
  if (navigator.clipboard && window.isSecureContext) { navigator.clipboard.writeText(text).then(done, fail); return; }
  var area = el("textarea", {class: "offscreen", "aria-hidden": "true"});
  area.value = text;
  document.body.appendChild(area);
  area.select();
  try { if (document.execCommand("copy")) done(); else fail(); } catch (e) { fail(); }
  document.body.removeChild(area);
}
// a button copying the text of `source` (read at click time), reporting in `status`
export function wireCopy(button, source, status) {
  button.addEventListener("click", function () { copyText(source.textContent, status); });
}
