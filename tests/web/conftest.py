"""Web fixtures: an in-process API client, a live server on a free loopback port, and headless Chromium."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "web"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def web_port() -> int:
    """The loopback port the app is built for (its Host check answers 127.0.0.1/localhost/[::1] on it)."""
    return _free_port()


@pytest.fixture(scope="session")
def web_app(web_port):
    from hybridplan.web.app import create_app
    from hybridplan.web.hosts import HostPolicy

    return create_app(hosts=HostPolicy(host="127.0.0.1", port=web_port))


@pytest.fixture(scope="session")
def client(web_app, web_port):
    from fastapi.testclient import TestClient

    with TestClient(web_app, base_url=f"http://127.0.0.1:{web_port}", raise_server_exceptions=False) as c:
        yield c


@pytest.fixture(scope="session")
def live_server(web_app, web_port):
    """The app under uvicorn in a thread, on 127.0.0.1; yields its base URL and stops it afterwards."""
    import uvicorn

    port = web_port
    server = uvicorn.Server(uvicorn.Config(web_app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium driven by Playwright (never a downloaded browser). Missing chromium fails under CI."""
    if not shutil.which(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium package")
        pytest.skip(f"{CHROMIUM} not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _expected(text: str) -> bool:
    """Chromium logs every 4xx fetch; 400 (bad input) and 422 (engine refusal) are answers the page shows."""
    return text.startswith("Failed to load resource") and ("status of 400" in text or "status of 422" in text)


@pytest.fixture
def page(browser, live_server):
    """A fresh page on the live server; console errors fail the test. Screenshots land under artifacts/web/."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(45_000)  # waits end when met; the margin is for a loaded 2-core CI machine
    pg = context.new_page()
    errors: list[str] = []
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" and not _expected(m.text) else None)
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.base = live_server
    goto = pg.goto

    def goto_ready(url: str, **kw):
        """Navigate, then wait until the page's first load has wired every form and drawn the Deploy card."""
        response = goto(url, **kw)
        pg.wait_for_selector("html[data-ready]", state="attached")
        return response

    pg.goto = goto_ready
    yield pg
    context.close()
    assert not errors, f"browser console errors: {errors}"


@pytest.fixture
def screenshot():
    """Keep a full-page screenshot as a test artifact: screenshot(page, name) -> path."""

    def take(pg, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        pg.screenshot(path=str(path), full_page=True)
        return path

    return take
