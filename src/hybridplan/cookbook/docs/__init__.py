"""The round trip with the SGLang docs' cookbook config modules (`configs/<Org>/<model>.jsx`): `cookbook import`
reads a module as a hybridplan page, `cookbook export --format sglang-jsx` writes a page as a module, and `cookbook
check` on a module applies the docs' own rules to it.

Modules:
  * `node_eval`: evaluates a module with Node.js in a locked-down child process (its data and every function's values).
  * `literal`: the source layout of the module's `export const config` literal; refuses what cannot be kept.
  * `recover`: a function's values over the selection space back as conditions and item lists.
  * `view`: a module's and a page's behaviour on every selection, compared observation by observation.
  * `importer`: `cookbook import`, a module as a page (functions recovered as data, then compared).
  * `merge`: `cookbook import --merge`, the regenerated page with hybridplan's own additions kept as an overlay.
  * `keep`: the module text an import keeps, so an unchanged page exports the module itself.
  * `export`: `cookbook export --format sglang-jsx`, a page as a module.
  * `pretty`: plain data as a JavaScript literal laid out as prettier lays out the docs' modules.
  * `rules`: the docs' structural rules for a module (docs/scripts/check_cookbook_configs.mjs), restated.

Nothing is imported here: each command loads only the modules it uses.
"""
