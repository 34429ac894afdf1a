"""`hybridplan serve`: the local web page and JSON API (the CLI's functions in a browser)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List

import typer

from hybridplan.commands.app import app, run_guarded


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind. Keep the loopback default unless the "
                             "network should see it."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="TCP port."),
    allow_path: List[Path] = typer.Option([], "--allow-path", metavar="DIR", help="Let requests name model configs "
                                          "below DIR (symlinks followed; repeatable). Without it the API reads only "
                                          "catalog ids, the local HF cache and configs sent with the request."),
    allowed_host: List[str] = typer.Option([], "--allowed-host", metavar="NAME", help="Also answer requests whose "
                                           "Host is NAME (repeatable; e.g. the name a reverse proxy forwards). "
                                           "Others than the bound address are refused (DNS rebinding)."),
    hf_cache: bool = typer.Option(True, "--hf-cache/--no-hf-cache", help="Resolve Hub ids through the local "
                                  "Hugging Face cache."),
) -> None:
    """Serve the Deploy / Calculator / Memory / Explain page and its JSON API (docs at /docs)."""

    def body() -> int:
        from hybridplan.errors import BadInput

        try:
            import uvicorn

            from hybridplan.web.app import create_app
        except ImportError as exc:
            raise BadInput(f"the web extra is missing ({exc.name}): pip install 'hybridplan[web]'") from None
        from hybridplan.model_sources import ModelSourcePolicy
        from hybridplan.web.hosts import HostPolicy, split_host

        for name in allowed_host:
            if split_host(name) is None:
                raise BadInput(f"--allowed-host {name!r}: not a host name (NAME or NAME:PORT)")
        sources = ModelSourcePolicy.of(allow_path, allow_hf_cache=hf_cache)
        hosts = HostPolicy(host=host, port=port, allowed=tuple(allowed_host))
        shown = f"[{host}]" if ":" in host else host
        sys.stderr.write(f"hybridplan: serving on http://{shown}:{port}/ (Ctrl-C stops)\n")
        uvicorn.run(create_app(hosts=hosts, sources=sources), host=host, port=port, log_level="warning")
        return 0

    run_guarded(body, as_json=False)
