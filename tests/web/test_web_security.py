"""The server's attack surface: which model configs it reads (never an arbitrary server path, and a refused path
answers exactly like a missing one), which Host headers it answers, what it echoes, and that every input gets a
bounded, shaped answer (a JSON 4xx naming the field, never a 500)."""

from __future__ import annotations

import builtins
import io
import json
import logging
import os
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hybridplan.model_sources import ModelSourcePolicy
from hybridplan.models.catalog import read_text
from hybridplan.web.app import create_app
from hybridplan.web.hosts import HostPolicy

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
MODEL = "Qwen/Qwen3.5-9B"
SECRET = "SECRET-7c1e"
SIZED = {"pool_budget_gib": 20.0}  # sizing depends on the config only (no weights), so uploads compare exactly
COMPARED = ("state_bytes_per_slot", "kv_bytes_per_token", "slots_per_request", "max_mamba_cache_size",
            "max_total_num_tokens", "max_running_requests", "binding_limit")


def catalog_config(name: str = "Qwen__Qwen3.5-9B.json") -> dict:
    return json.loads(read_text(name))


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    """An allowed directory (a checkpoint, a single config file, escapes by symlink and by `..`) and, beside it,
    an outside directory holding a valid config and a secret."""
    root = tmp_path_factory.mktemp("srv")
    allowed, outside = root / "allowed", root / "outside"
    (allowed / "ckpt").mkdir(parents=True)
    outside.mkdir()
    text = json.dumps(catalog_config())
    (allowed / "ckpt" / "config.json").write_text(text)
    (allowed / "single.json").write_text(text)
    (outside / "config.json").write_text(text)
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    (allowed / "escape.json").symlink_to(outside / "config.json")
    (allowed / "escape_dir").symlink_to(outside, target_is_directory=True)
    (allowed / "loop").symlink_to(allowed / "loop")
    (allowed / "linked_ckpt").mkdir()
    (allowed / "linked_ckpt" / "config.json").symlink_to(outside / "config.json")
    (allowed / "linked_weights").mkdir()
    (allowed / "linked_weights" / "config.json").write_text(text)
    (allowed / "linked_weights" / "model.safetensors").symlink_to(outside / "secret.txt")
    bad = catalog_config()
    bad["text_config"]["linear_num_value_heads"] = SECRET
    (allowed / "bad_field.json").write_text(json.dumps(bad))
    (allowed / "bad_json.json").write_text('{"model_type": ' + SECRET + "}")
    (allowed / "not_object.json").write_text(json.dumps([SECRET]))
    return allowed, outside


@pytest.fixture(scope="module")
def sec(places):
    """A client of a server started with `--allow-path <allowed>` on 127.0.0.1:PORT."""
    app = create_app(hosts=HostPolicy(host="127.0.0.1", port=PORT),
                     sources=ModelSourcePolicy.of([places[0]]))
    with TestClient(app, base_url=BASE, raise_server_exceptions=False) as c:
        yield c


def _post(client, endpoint: str, ref: str, **extra):
    """The endpoint's request naming model `ref` (a command for explain/ratio, the `model` field for plan)."""
    quoted = json.dumps(ref)  # the command parser reads a double-quoted string whole
    if endpoint == "plan":
        body = {"model": ref, "gpu": "h100-80gb", "request_length": 4096, "concurrency": 8}
    elif endpoint == "ratio":
        body = {"command": f"--model-path {quoted}", "request_length": 4096, "concurrency": 8, **SIZED}
    else:
        body = {"command": f"--model-path {quoted}", **SIZED}
    return client.post(f"/api/{endpoint}", json={**body, **extra})


def _refused_refs(allowed: Path, outside: Path) -> list[str]:
    return [str(outside / "config.json"), str(outside), str(outside / "secret.txt"), "/etc/passwd", "/etc/shadow",
            "~", "~/.bashrc", str(allowed / ".." / "outside" / "config.json"), str(allowed / "escape.json"),
            str(allowed / "escape_dir" / "config.json"), "../../../../etc/passwd", "/proc/self/environ",
            str(allowed / "loop"), str(allowed / "loop" / "config.json"), "/etc/passwd\x00", str(allowed / ("a" * 5000)),
            str(allowed) + "/a" * 3000]


@pytest.mark.parametrize("endpoint", ["explain", "ratio", "plan"])
def test_a_refused_path_answers_exactly_like_a_missing_one(sec, places, endpoint):
    """No file-system oracle: existing files outside the allowed directory, symlink and `..` escapes, `~` and
    missing paths all get one status and one message (but for the reference itself); so do names the OS refuses."""
    allowed, outside = places
    missing = [str(allowed / "nothing.json"), str(outside / "nothing.json"), "/etc/nothing", "~/nothing"]
    answers = set()
    for ref in _refused_refs(allowed, outside) + missing:
        if endpoint == "plan" and len(ref) > 256:
            continue  # `model` is bounded before any lookup
        res = _post(sec, endpoint, ref)
        body = res.json()
        assert SECRET not in res.text
        named, _, rest = body["error"]["message"].partition(" not found: ")
        assert named.startswith("model '")
        answers.add((res.status_code, body["error"]["type"], rest))
    assert answers == {(400, "BadInput", "not in the bundled catalog (GET /api/models), not in this server's Hugging "
                        "Face cache, and not a path this server allows (hybridplan serve --allow-path DIR); or send "
                        "its config.json as `config`")}


def test_the_default_server_reads_no_path_at_all(client, places):
    """Without --allow-path even a readable, valid config.json is not found."""
    res = _post(client, "explain", str(places[1] / "config.json"))
    assert res.status_code == 400 and "not found" in res.json()["error"]["message"]


@pytest.mark.parametrize("name", ["ckpt", "single.json"])
def test_allowed_paths_resolve_to_the_same_numbers_as_the_catalog(sec, places, name):
    ref = str(places[0] / name)
    got, want = _post(sec, "explain", ref).json(), _post(sec, "explain", MODEL).json()
    assert got["model"]["source"] == ref
    assert {k: got[k] for k in COMPARED} == {k: want[k] for k in COMPARED}


def test_a_config_symlinked_out_of_an_allowed_checkpoint_is_not_read(sec, places):
    res = _post(sec, "explain", str(places[0] / "linked_ckpt"))
    assert res.status_code == 400
    assert res.json()["error"]["message"].endswith("config.json resolves outside the directories this server allows")


def test_a_weights_file_symlinked_out_of_an_allowed_checkpoint_is_not_read(sec, places):
    """Like its config.json, a checkpoint's safetensors shards and index must resolve inside the allowed directories:
    the server refuses the checkpoint before it opens any of them."""
    res = sec.post("/api/explain", json={"command": f"--model-path {places[0] / 'linked_weights'}", "gpu": "h200"})
    assert res.status_code == 400 and SECRET not in res.text
    assert res.json()["error"]["message"].endswith("model.safetensors resolves outside the directories this server "
                                                   "allows")


@pytest.mark.parametrize("name,field", [("bad_field.json", "linear_num_value_heads"),
                                        ("bad_json.json", "malformed config.json"),
                                        ("not_object.json", "expected a JSON object")])
def test_a_bad_config_names_the_field_not_the_content(sec, places, name, field):
    res = _post(sec, "explain", str(places[0] / name))
    assert res.status_code == 400 and field in res.json()["error"]["message"]
    assert SECRET not in res.text


def test_hf_ids_resolve_through_the_cache_and_only_when_allowed(places, monkeypatch, tmp_path):
    snap = tmp_path / "hub" / "models--Acme--Hybrid-9B" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps(catalog_config()))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    for allow, status in ((True, 200), (False, 400)):
        app = create_app(hosts=HostPolicy(port=PORT), sources=ModelSourcePolicy(allow_hf_cache=allow))
        with TestClient(app, base_url=BASE, raise_server_exceptions=False) as c:
            res = _post(c, "explain", "Acme/Hybrid-9B")
        assert res.status_code == status
        if allow:  # the answer names the Hub id, not where the server's cache lives
            assert res.json()["model"]["source"] == "hf-cache:Acme/Hybrid-9B" and str(tmp_path) not in res.text


# -- opens audit -------------------------------------------------------------------------------------------------


@pytest.fixture
def opened(monkeypatch):
    """Every path opened through builtins.open, io.open, os.open or Path.open while the test runs."""
    seen: list[str] = []

    def spy(real):
        def wrapper(file, *a, **k):
            if isinstance(file, (str, bytes, os.PathLike)):
                seen.append(os.fsdecode(file))
            return real(file, *a, **k)
        return wrapper

    real_path_open = Path.open

    def path_open(self, *a, **k):
        seen.append(str(self))
        return real_path_open(self, *a, **k)

    monkeypatch.setattr(builtins, "open", spy(builtins.open))
    monkeypatch.setattr(io, "open", spy(io.open))
    monkeypatch.setattr(os, "open", spy(os.open))
    monkeypatch.setattr(Path, "open", path_open)
    return seen


def _below(path: str, roots) -> bool:
    real = Path(os.path.realpath(path))
    return any(real == r or real.is_relative_to(r) for r in roots)


def test_requests_open_nothing_outside_the_allowed_places(sec, places, opened):
    """Attacks and ordinary requests on every model endpoint, with the opens audited: only the package's data, the
    allowed directory, the HF cache and the Python installation are ever opened."""
    import hybridplan

    allowed, outside = places
    for endpoint in ("explain", "ratio", "plan"):
        for ref in [*_refused_refs(allowed, outside), MODEL, str(allowed / "ckpt"), str(allowed / "linked_ckpt"),
                    str(allowed / "linked_weights")]:
            _post(sec, endpoint, ref)
    sec.post("/api/logs/check", json={"log": "x", "command": f"--model-path {outside / 'config.json'}"})
    roots = [Path(os.path.realpath(p)) for p in (Path(hybridplan.__file__).parent, allowed, sys.prefix,
                                                 sys.base_prefix, *ModelSourcePolicy().roots())]
    assert opened, "the audit saw no open at all: the spies are not wired"
    assert [p for p in opened if not _below(p, roots)] == []
    assert any(_below(p, [Path(os.path.realpath(allowed))]) for p in opened)  # the allowed checkpoint was read


# -- uploads ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ["explain", "ratio"])
def test_an_uploaded_config_gives_the_catalog_numbers(client, endpoint):
    got = _post(client, endpoint, "my-model", config=catalog_config())
    want = _post(client, endpoint, MODEL)
    assert got.status_code == want.status_code == 200
    g, w = got.json(), want.json()
    assert g["command"].endswith("--model-path my-model")
    if endpoint == "explain":
        assert g["model"]["source"] == "config" and g["args"]["model_path"]["value"] == "my-model"
        assert {k: g[k] for k in COMPARED} == {k: w[k] for k in COMPARED}
    else:
        assert g == {**w, "command": g["command"]}


def test_plan_takes_an_uploaded_config_under_its_model_name(client):
    res = _post(client, "plan", "my-model", config=catalog_config())
    assert res.status_code == 200 and "--model-path my-model" in res.json()["command"]


def test_an_upload_never_reaches_a_later_request(client):
    """An upload named like a catalog id answers for that request only (no cache keeps it)."""
    body = {"command": f"--model-path {MODEL} --mem-fraction-static 0.8", "gpu": "h200"}
    before = client.post("/api/explain", json=body).json()
    other = client.post("/api/explain", json={**body, "config": catalog_config("Qwen__Qwen3.5-35B-A3B.json")}).json()
    after = client.post("/api/explain", json=body).json()
    assert other["model"]["num_hidden_layers"] != before["model"]["num_hidden_layers"]
    assert other["memory"] != before["memory"]
    assert after == before


def test_an_uploaded_draft_config_stands_for_the_draft_path(client):
    cmd = ("--model-path Qwen/Qwen3.5-35B-A3B --speculative-algorithm DFLASH "
           "--speculative-draft-model-path {draft} --speculative-num-draft-tokens 16")
    want = client.post("/api/explain", json={"command": cmd.format(draft="SpecForge/qwen3.5-35b-a3b-dflash"), **SIZED})
    got = client.post("/api/explain", json={"command": cmd.format(draft="my-draft"), **SIZED,
                                            "draft_config": catalog_config("draft__SpecForge__qwen3.5-35b-a3b-dflash.json")})
    assert want.status_code == got.status_code == 200
    assert got.json()["draft_model"]["source"] == "draft_config"
    assert {k: got.json()[k] for k in COMPARED} == {k: want.json()[k] for k in COMPARED}


@pytest.mark.parametrize("extra,needle", [
    ({"draft_config": {"model_type": "llama"}}, "draft_config: the request names no draft model"),
    ({"config": {"pad": "x" * 140_000}}, "config: Value error, config.json over 131,072 bytes"),
    ({"config": [1, 2]}, "config: Input should be a valid dictionary"),
    ({"config": {"architectures": ["LlamaForCausalLM"], "model_type": "llama"}}, "config: unknown or non-hybrid"),
    ({"config": {"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
                 "text_config": {}}}, "config: "),
])
def test_bad_uploads_are_400s_naming_the_field(client, extra, needle):
    res = _post(client, "explain", "my-model", **extra)
    assert res.status_code == 400 and res.json()["error"]["message"].startswith(needle)


def test_an_upload_with_an_integer_past_pythons_conversion_limit_names_the_field(client):
    """json.loads raises inside FastAPI on 5,000 digits; the answer still names the field, and the server goes on."""
    body = json.dumps({"command": "--model-path my-model", **SIZED,
                       "config": {**catalog_config(), "num_hidden_layers": 271828182}})
    res = client.post("/api/explain", content=body.replace("271828182", "9" * 5000),
                      headers={"content-type": "application/json"})
    msg = res.json()["error"]["message"]
    assert res.status_code == 400 and msg.startswith("request body: `config.num_hidden_layers`: an integer of 5,000")
    assert client.post("/api/explain", json={"command": f"--model-path {MODEL}", **SIZED}).status_code == 200


# -- Host header -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bound,allowed,host,ok", [
    ("127.0.0.1", (), "127.0.0.1:8000", True),
    ("127.0.0.1", (), "localhost:8000", True),
    ("127.0.0.1", (), "LOCALHOST.:8000", True),
    ("127.0.0.1", (), "[::1]:8000", True),
    ("127.0.0.1", (), "evil.example:8000", False),  # a rebinding page sends its own name
    ("127.0.0.1", (), "localhost.evil.example:8000", False),
    ("127.0.0.1", (), "127.0.0.1:9999", False),
    ("127.0.0.1", (), "127.0.0.1", False),
    ("127.0.0.1", (), "", False),
    ("127.0.0.1", (), "localhost:8000:1", False),
    ("127.0.0.1", (), "[::1", False),
    ("::1", (), "[::1]:8000", True),
    ("::1", (), "localhost:8000", True),
    ("10.0.0.5", (), "10.0.0.5:8000", True),
    ("10.0.0.5", (), "localhost:8000", False),  # not bound to loopback
    ("0.0.0.0", (), "192.168.1.7:8000", True),  # any IP literal: rebinding always sends a name
    ("0.0.0.0", (), "[fe80::1]:8000", True),
    ("0.0.0.0", (), "box.lan:8000", False),
    ("0.0.0.0", ("box.lan",), "box.lan:8000", True),
    ("0.0.0.0", ("box.lan",), "BOX.LAN", True),
    ("127.0.0.1", ("plan.example.com:443",), "plan.example.com:443", True),
    ("127.0.0.1", ("plan.example.com:443",), "plan.example.com:8000", False),
])
def test_host_policy(bound, allowed, host, ok):
    assert HostPolicy(host=bound, port=8000, allowed=allowed).admits(host) is ok


@pytest.mark.parametrize("path,method", [("/", "GET"), ("/api/models", "GET"), ("/api/explain", "POST"),
                                         ("/static/app.js", "GET")])
def test_a_request_for_another_host_is_421_json(sec, path, method):
    res = sec.request(method, path, headers={"host": f"evil.example:{PORT}"},
                      json={"command": f"--model-path {MODEL}"} if method == "POST" else None)
    assert res.status_code == 421 and res.json()["error"]["type"] == "BadInput"
    assert "--allowed-host" in res.json()["error"]["message"]
    assert res.headers["x-content-type-options"] == "nosniff"
    assert sec.request(method, path, headers={"host": f"localhost:{PORT}"},
                       json={"command": f"--model-path {MODEL}"} if method == "POST" else None).status_code == 200


# -- bounded input -----------------------------------------------------------------------------------------------


VALID = {
    "explain": {"command": f"--model-path {MODEL}"},
    "ratio": {"command": f"--model-path {MODEL}", "request_length": 4096, "concurrency": 8},
    "plan": {"model": MODEL, "gpu": "h100-80gb", "request_length": 4096, "concurrency": 8},
    "render": {"page": "qwen3.8-27b"},
    "logs/parse": {"log": "x"},
    "logs/check": {"log": "x", "command": f"--model-path {MODEL}"},
    "compare": {"model": MODEL, "memory_gib": 40, "request_length": 4096},
}


def _numeric_fields(client) -> list[tuple[str, str, dict]]:
    """(endpoint, field, schema) for every number in every request body, read off the OpenAPI schema."""
    schema = client.get("/openapi.json").json()
    out = []
    for endpoint in VALID:
        ref = schema["paths"][f"/api/{endpoint}"]["post"]["requestBody"]["content"]["application/json"]["schema"]
        props = schema["components"]["schemas"][ref["$ref"].rsplit("/", 1)[-1]]["properties"]
        for name, prop in props.items():
            types = [p for p in prop.get("anyOf", [prop]) if p.get("type") in ("number", "integer")]
            out += [(endpoint, name, t) for t in types]
    return out


def test_every_numeric_field_is_bounded_both_ways(client):
    fields = _numeric_fields(client)
    assert len(fields) >= 15
    for endpoint, name, prop in fields:
        assert {"minimum", "exclusiveMinimum"} & set(prop), (endpoint, name)
        assert {"maximum", "exclusiveMaximum"} & set(prop), (endpoint, name)


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity", "1e300", "-1e300", "-1", "true", '"many"'])
def test_out_of_range_numbers_are_400s_naming_the_field(client, bad):
    for endpoint, name, prop in _numeric_fields(client):
        if bad == "-1" and prop.get("minimum", 0) < 0:
            continue  # a negative pool budget is the engine's refusal to model (422), as the CLI does
        body = json.dumps({k: v for k, v in VALID[endpoint].items() if k != name})[:-1] + f', "{name}": {bad}}}'
        res = client.post(f"/api/{endpoint}", content=body, headers={"content-type": "application/json"})
        assert res.status_code == 400, (endpoint, name, bad, res.text)
        assert res.json()["error"]["message"].startswith(f"{name}: "), (endpoint, name, bad)


def test_body_limits_per_endpoint(client):
    from hybridplan.web.limits import MAX_BODY_BYTES, MAX_LOG_BODY_BYTES

    assert MAX_BODY_BYTES == 256 * 1024 < MAX_LOG_BODY_BYTES
    big = {"command": f"--model-path {MODEL}", "config": {"pad": "x" * MAX_BODY_BYTES}}
    res = client.post("/api/explain", json=big)
    assert res.status_code == 413 and res.json()["error"]["message"] == f"request body over {MAX_BODY_BYTES:,} bytes"
    # a boot log four times the ordinary bound is read (its one line keeps it a log: nothing read would be a 400)
    log = client.post("/api/logs/parse", json={"log": "x" * (MAX_BODY_BYTES * 4) + "\nLoad weight end. avail mem=9.00 GB"})
    assert log.status_code == 200 and log.json()["avail_after_load_gib"] == 9.0


@pytest.mark.parametrize("content,needle", [
    (b'{"command": ', "request body: not valid JSON"),
    (b"[" * 100_000 + b"]" * 100_000, "request body: JSON nests deeper than 64 levels"),  # past json.loads recursion
    (b'"just a string"', "request body: "),
    (b'{"command": 5}', "command: Input should be a valid string"),
])
def test_malformed_bodies_are_400s(client, content, needle):
    res = client.post("/api/explain", content=content, headers={"content-type": "application/json"})
    assert res.status_code == 400 and res.json()["error"]["type"] == "BadInput"
    assert needle in res.json()["error"]["message"]


# -- any input: a shaped answer, never a 500 ---------------------------------------------------------------------


JSON_LEAF = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=40)
JSON_VALUE = st.recursive(JSON_LEAF, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=12),
                                                                                            kids, max_size=4),
                          max_leaves=12)
FIELDS = sorted({k for body in VALID.values() for k in body} | {
    "gpu", "gpu_memory_gib", "pool_budget_gib", "available_gib", "pre_load_gib", "weights_gib", "engine_version",
    "config", "draft_config", "quant", "spec", "draft", "tp", "extra", "picks", "placeholders", "max_mem_fraction",
    "engine", "kv_memory_gib", "kv_cache_dtype"})


@st.composite
def bodies(draw):
    """A valid body with some fields replaced by arbitrary JSON, or arbitrary JSON outright."""
    endpoint = draw(st.sampled_from(sorted(VALID)))
    if draw(st.booleans()):
        return endpoint, draw(JSON_VALUE)
    body = dict(VALID[endpoint])
    body.update(draw(st.dictionaries(st.sampled_from(FIELDS), JSON_VALUE, max_size=3)))
    return endpoint, body


class _Recorded(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=bodies())
def test_any_json_body_gets_a_shaped_answer(client, case):
    """Never a 500, always JSON, a 400 is one line under `error`; and no example needed the catch-all (an unexpected
    exception answered as a generic 400), so each bad input met a check that names it."""
    endpoint, body = case
    seen = _Recorded()
    log = logging.getLogger("hybridplan.web")
    log.addHandler(seen)
    try:
        res = client.post(f"/api/{endpoint}", content=json.dumps(body), headers={"content-type": "application/json"})
    finally:
        log.removeHandler(seen)
    assert res.status_code in (200, 400, 422), (endpoint, body, res.text)
    data = res.json()
    if res.status_code == 400:
        assert set(data) == {"error"} and data["error"]["message"] and "\n" not in data["error"]["message"]
    assert [r.getMessage() for r in seen.records] == [], (endpoint, body)
