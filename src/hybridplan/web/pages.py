"""The HTML routes: the single-page UI and an offline API reference rendered from the OpenAPI schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from hybridplan.version import __version__

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=str(HERE / "templates"))
router = APIRouter(include_in_schema=False)


def _context(request: Request, **extra: Any) -> dict[str, Any]:
    from hybridplan.engine.api import DEFAULT, SUPPORTED, builds, default_release, releases

    vllm = releases("vllm")
    default = default_release("vllm")
    return {"request": request, "version": __version__, "engine_version": DEFAULT,
            "vllm_version": default, "vllm_versions": vllm, "engine_versions": sorted(SUPPORTED),
            "engine_builds": builds("sglang"), **extra}


@router.get("/", response_class=HTMLResponse)
def index(request: Request) -> HTMLResponse:
    return templates.TemplateResponse(request, "index.html", _context(request))


@router.get("/docs", response_class=HTMLResponse)
def api_docs(request: Request) -> HTMLResponse:
    """The API reference from the app's own OpenAPI schema, served without any CDN asset."""
    schema = request.app.openapi()
    return templates.TemplateResponse(request, "docs.html", _context(request, endpoints=_endpoints(schema),
                                                                     models=_models(schema)))


def _ref_name(schema: dict[str, Any] | None) -> str | None:
    ref = (schema or {}).get("$ref", "")
    return ref.rsplit("/", 1)[-1] or None


def _endpoints(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Each operation: method, path, summary, description, body model and response statuses."""
    out = []
    for path, ops in schema.get("paths", {}).items():
        for method, op in ops.items():
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            out.append({"method": method.upper(), "path": path, "summary": op.get("summary", ""),
                        "description": op.get("description", ""), "body": _ref_name(body),
                        "params": [p["name"] for p in op.get("parameters", [])],
                        "responses": {code: r.get("description", "") for code, r in op.get("responses", {}).items()}})
    return out


def _field_type(prop: dict[str, Any]) -> str:
    if "anyOf" in prop:
        return " | ".join(_field_type(p) for p in prop["anyOf"])
    if "$ref" in prop:
        return _ref_name(prop) or "object"
    if prop.get("type") == "array":
        return f"list[{_field_type(prop.get('items', {}))}]"
    return str(prop.get("type", "any"))


_BOUNDS = ("minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern",
           "maxItems")


def _models(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Request models with each field's type, bounds and description."""
    out = []
    for name, model in schema.get("components", {}).get("schemas", {}).items():
        if name in ("HTTPValidationError", "ValidationError"):
            continue
        required = set(model.get("required", ()))
        fields = []
        for fname, prop in model.get("properties", {}).items():
            bounds = {k: v for k, v in prop.items() if k in _BOUNDS}
            for alt in prop.get("anyOf", ()):
                bounds.update({k: v for k, v in alt.items() if k in _BOUNDS})
            fields.append({"name": fname, "type": _field_type(prop), "required": fname in required,
                           "default": prop.get("default"), "bounds": bounds,
                           "description": prop.get("description", "")})
        out.append({"name": name, "description": model.get("description", ""), "fields": fields})
    return out
