// Followers: Plan and Compare follow the Deploy state until one of their own fields is edited; a link carrying
// their keys starts them detached. f: {state, id ("plan": #plan-form, #plan-follow, #plan-refollow), name, keys,
// write, follow, run}.

import { $ } from "./dom.js";
import { params } from "./url-state.js";

// stop following (a field of its own was edited): say so and offer the way back
export function detach(f) {
  if (!f.state.follow) return;
  f.state.follow = false;
  $(f.id + "-follow").textContent = f.name + " no longer follows the Deploy selection.";
  $(f.id + "-refollow").hidden = false;
}
// wire the form, its fields and the "follow again" button; returns whether the link gave its fields
export function wireFollower(f) {
  var off = function () { detach(f); };
  $(f.id + "-form").addEventListener("submit", function (ev) { ev.preventDefault(); off(); f.run(); });
  Object.keys(f.keys).forEach(function (k) {
    $(f.keys[k]).addEventListener("input", off);
    $(f.keys[k]).addEventListener("change", off);
  });
  $(f.id + "-refollow").addEventListener("click", function () { f.state.follow = true; f.write({}); f.follow(); });
  if (!Object.keys(f.keys).some(function (k) { return params.has(k); })) return false;
  f.state.follow = false;
  $(f.id + "-follow").textContent = f.name + " as the link gave it.";
  $(f.id + "-refollow").hidden = false;
  return true;
}
