// Colour theme: "auto" follows the system; a pick is remembered in localStorage. Loaded in <head> to avoid a flash.
(function () {
  "use strict";
  var KEY = "hybridplan-theme";
  var ORDER = ["auto", "light", "dark"];
  function stored() {
    try { return localStorage.getItem(KEY) || "auto"; } catch (e) { return "auto"; }
  }
  function apply(mode) {
    if (mode === "auto") document.documentElement.removeAttribute("data-theme");
    else document.documentElement.setAttribute("data-theme", mode);
    var btn = document.getElementById("theme-toggle");
    if (btn) btn.textContent = "Theme: " + mode;
  }
  apply(stored());
  document.addEventListener("DOMContentLoaded", function () {
    apply(stored());
    var btn = document.getElementById("theme-toggle");
    if (!btn) return;
    btn.addEventListener("click", function () {
      var next = ORDER[(ORDER.indexOf(stored()) + 1) % ORDER.length];
      try { localStorage.setItem(KEY, next); } catch (e) { /* private mode: not remembered */ }
      apply(next);
    });
  });
})();
