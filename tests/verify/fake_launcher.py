"""A stand-in for a GPU box, used as `verify --launcher "python fake_launcher.py SCENARIOS.json"`.

verify appends the real command (`[env K=V ...] python -m sglang.launch_server ...`, `... -m sglang.bench_serving
...` or `... -c "import sglang; ..."`). This script replays what a recorded server would do:

* launch_server: pick the first scenario whose `when` flags match the command, print its recorded boot log, then
  `serve` (answer /health; POST answers with the scenario's bench output file), `oom_on_request` (serve /health,
  then print an OOM traceback and die on the first POST), `exit` (with `exit_code`), `killed` (SIGKILL itself),
  `hang` (never answer /health) or `hang_ignoring_sigterm`. It starts one child process, as the engine's schedulers
  are children, and writes the child's pid to `child_pid_file` so a test can check the whole group was stopped.
* bench_serving: POST to the server; print the bench output it names, or fail like a client whose server died.
* -c: print the scenario file's `version`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def flag(argv: list[str], name: str) -> str | None:
    for i, tok in enumerate(argv):
        if tok == name and i + 1 < len(argv):
            return argv[i + 1]
        if tok.startswith(name + "="):
            return tok.split("=", 1)[1]
    return None


def split_command(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    env: dict[str, str] = {}
    if argv and argv[0] == "env":
        argv = argv[1:]
        while argv and "=" in argv[0] and not argv[0].startswith("-"):
            key, _, value = argv.pop(0).partition("=")
            env[key] = value
    return env, argv[1:]  # drop the interpreter


def scenario_for(config: dict, argv: list[str]) -> dict:
    for sc in config.get("points", []):
        if all(flag(argv, f) == v for f, v in sc.get("when", {}).items()):
            return {**config.get("default", {}), **sc}
    return config["default"]


def emit(path: str | None) -> None:
    if path:
        sys.stdout.write(Path(path).read_text())
    sys.stdout.flush()


def serve(sc: dict, port: int) -> None:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep the replayed log clean
            pass

        def do_GET(self):
            self.send_response(200 if self.path.startswith("/health") else 404)
            self.end_headers()

        def do_POST(self):
            if sc["behavior"] == "oom_on_request":
                emit(sc.get("request_log"))
                os._exit(1)
            body = json.dumps({"bench": sc.get("bench")}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    httpd.serve_forever()


def server(config: dict, argv: list[str]) -> None:
    sc = scenario_for(config, argv)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    if sc.get("child_pid_file"):
        Path(sc["child_pid_file"]).write_text(str(child.pid))
    time.sleep(float(sc.get("boot_delay_s", 0.0)))
    emit(sc.get("log"))
    behavior = sc["behavior"]
    if behavior == "exit":
        sys.exit(int(sc.get("exit_code", 1)))
    if behavior == "killed":
        os.kill(os.getpid(), signal.SIGKILL)
    if behavior.startswith("hang"):
        if behavior == "hang_ignoring_sigterm":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(1)
    serve(sc, int(flag(argv, "--port")))


def bench(argv: list[str]) -> None:
    url = f"http://{flag(argv, '--host')}:{flag(argv, '--port')}/generate"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=b"{}", method="POST"), timeout=10) as resp:
            answer = json.loads(resp.read())
    except Exception as exc:  # the client side of a server that died mid-request
        print(f"Error: request to {url} failed: {exc!r}")
        sys.exit(1)
    emit(answer["bench"])


def main() -> None:
    config = json.loads(Path(sys.argv[1]).read_text())
    env, argv = split_command(sys.argv[2:])
    os.environ.update(env)
    if Path(config.get("argv_log", "")).name:
        with open(config["argv_log"], "a") as fh:
            fh.write(json.dumps({"env": env, "argv": argv}) + "\n")
    if argv[:1] == ["-c"]:
        print(config["version"])
    elif argv[:2] == ["-m", "sglang.launch_server"]:
        server(config, argv)
    elif argv[:2] == ["-m", "sglang.bench_serving"]:
        bench(argv)
    else:
        sys.exit(f"fake launcher: unexpected command {argv}")


if __name__ == "__main__":
    main()
