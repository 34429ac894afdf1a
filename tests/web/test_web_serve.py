"""`hybridplan serve` as a user runs it: binds the given port, answers the page and the API, stops on SIGINT."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
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
