"""`hybridplan serve` as a user runs it: binds the given port, answers the page and the API, stops on SIGINT."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(url: str, proc: subprocess.Popen, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"serve exited early: {proc.stderr.read()}")
        try:
            urllib.request.urlopen(url, timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("serve did not answer in time")


def test_serve_answers_page_and_api_then_stops():
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "hybridplan", "serve", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait(base + "/", proc)
        with urllib.request.urlopen(base + "/") as res:
            assert "Explain a launch command" in res.read().decode()
        req = urllib.request.Request(base + "/api/explain", method="POST", headers={"Content-Type": "application/json"},
                                     data=json.dumps({"command": "--model-path Qwen/Qwen3.5-9B"}).encode())
        with urllib.request.urlopen(req) as res:
            assert json.loads(res.read())["state_bytes_per_slot"] > 0
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert f"serving on http://127.0.0.1:{port}/" in err
    assert "Traceback" not in err


def test_port_in_use_is_one_line_not_a_traceback():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        res = subprocess.run([sys.executable, "-m", "hybridplan", "serve", "--port", str(port)],
                             capture_output=True, text=True, timeout=60)
    assert res.returncode != 0
    assert "Traceback" not in res.stderr and "address already in use" in res.stderr.lower()


def test_bad_port_is_refused(cli):
    code, _, err = cli("serve", "--port", "70000")
    assert code == 2 and "65535" in err


def _post(base: str, host: str, body: dict) -> tuple[int, dict]:
    req = urllib.request.Request(base + "/api/explain", method="POST", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json", "Host": host})
    try:
        with urllib.request.urlopen(req) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_serve_widens_paths_and_hosts_only_as_told(tmp_path):
    """--allow-path DIR reads configs below DIR and nowhere else; --allowed-host NAME answers Host NAME, and any other
    name is refused (DNS rebinding)."""
    from hybridplan.models.catalog import read_text

    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    for d in (allowed, outside):
        (d / "config.json").write_text(read_text("Qwen__Qwen3.5-9B.json"))
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "hybridplan", "serve", "--port", str(port), "--allow-path",
                             str(allowed), "--allowed-host", "planner.lan"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait(base + "/", proc)
        own = f"127.0.0.1:{port}"
        code, body = _post(base, own, {"command": f"--model-path {allowed}"})
        assert code == 200 and body["model"]["source"] == str(allowed)
        code, body = _post(base, own, {"command": f"--model-path {outside}"})
        assert code == 400 and "not found" in body["error"]["message"]
        assert _post(base, f"planner.lan:{port}", {"command": "--model-path Qwen/Qwen3.5-9B"})[0] == 200
        code, body = _post(base, f"rebound.example:{port}", {"command": "--model-path Qwen/Qwen3.5-9B"})
        assert code == 421 and "--allowed-host" in body["error"]["message"]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)


def test_an_allow_path_that_is_no_directory_is_refused(cli, tmp_path):
    code, _, err = cli("serve", "--allow-path", str(tmp_path / "missing"))
    assert code == 2 and f"--allow-path {tmp_path / 'missing'}: not a directory" in err
