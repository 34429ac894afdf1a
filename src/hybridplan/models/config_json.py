"""Reading a config.json as the engine's config classes see it: text-config nesting, class defaults, context length."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hybridplan.errors import BadInput
from hybridplan.jsontext import parse_json
from hybridplan.limits import MAX_CONTEXT

_MISSING = object()


def parse_config_text(text: str, *, origin: str) -> dict[str, Any]:
    """Parse config.json text, nesting and integers bounded (hybridplan.jsontext); JSON `Infinity`/`NaN` are
    accepted, as transformers accepts them."""
    data = parse_json(text, origin=origin, what="config.json")
    if not isinstance(data, dict):
        raise BadInput(f"{origin}: malformed config.json: expected a JSON object, got {type(data).__name__}")
    return data


@dataclass
class ConfigView:
    """A config dict read like a transformers config object: attribute, else the config class default.

    Records which fields fell back to a class default, so the output can say so.
    """

    data: dict[str, Any]
    origin: str
    path: str = ""  # "text_config." when this is the nested text config
    defaulted: list[str] = field(default_factory=list)

    def has(self, key: str) -> bool:
        return key in self.data and self.data[key] is not None

    def get(self, key: str, default: Any = _MISSING) -> Any:
        """The field's value; `default` is the engine config class's default when the key is absent."""
        if key in self.data:
            return self.data[key]
        if default is _MISSING:
            raise BadInput(f"{self.origin}: config.json has no `{self.path}{key}`, which the engine reads")
        self.defaulted.append(f"{self.path}{key}={default!r}")
        return default

    def int(self, key: str, default: Any = _MISSING) -> int:
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                return int(value)
            raise BadInput(f"{self.origin}: `{self.path}{key}` must be an integer, got {value!r}")
        return value

    def sub(self, key: str) -> "ConfigView":
        value = self.data.get(key)
        if not isinstance(value, dict):
            raise BadInput(f"{self.origin}: `{self.path}{key}` must be an object")
        return ConfigView(value, self.origin, f"{self.path}{key}.", self.defaulted)


def text_config(root: dict[str, Any], origin: str) -> ConfigView:
    """The text sub-config the engine reads geometry from (`get_hf_text_config`), or the root."""
    view = ConfigView(root, origin)
    if isinstance(root.get("text_config"), dict):
        return view.sub("text_config")
    return view


_CONTEXT_LENGTH_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings")


def context_length(text: ConfigView, default_max_position: int | None = None) -> int:
    """Mirrors utils/hf_transformers/common.py::get_context_length (first key found x rope factor)."""
    rope = text.data.get("rope_scaling")
    factor = 1
    if rope:
        factor = rope.get("factor", 1)
        if "original_max_position_embeddings" in rope or rope.get("rope_type") == "llama3":
            factor = 1
    for key in _CONTEXT_LENGTH_KEYS:
        value = text.data.get(key)
        if key == "max_position_embeddings" and value is None:
            value = default_max_position
        if value is not None:
            derived = int(factor * value)
            if not 0 < derived <= MAX_CONTEXT:
                raise BadInput(f"{text.origin}: `{text.path}{key}` x rope factor gives a context of {derived:,} tokens, "
                               f"outside 1..{MAX_CONTEXT:,}")
            return derived
    return 2048


def head_dim(text: ConfigView, default: int | None = None) -> int:
    """`head_dim`, else hidden_size // num_attention_heads (configs/model_config.py::_derive_model_shapes)."""
    value = text.data.get("head_dim")
    if value is None:
        value = default
    if value is None:
        heads = text.int("num_attention_heads")
        return text.int("hidden_size") // heads if heads else 0
    return int(value)


def model_dtype_field(text: ConfigView) -> str | None:
    """The text config's dtype as transformers exposes it (`dtype`, formerly `torch_dtype`)."""
    return text.data.get("dtype") or text.data.get("torch_dtype")
