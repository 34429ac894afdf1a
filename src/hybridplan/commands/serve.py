"""`hybridplan serve`: the local web page and JSON API (the CLI's functions in a browser)."""

from __future__ import annotations

import sys

import typer

from hybridplan.cli import app, run_guarded


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind. Keep the loopback default unless the "
                             "network should see it (the API reads model configs from local paths, as the CLI does)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="TCP port."),
) -> None:
    """Serve the Deploy / Calculator / Memory / Explain page and its JSON API (docs at /docs)."""

    def body() -> int:
        from hybridplan.errors import BadInput

        try:
            import uvicorn

            from hybridplan.web.app import create_app
        except ImportError as exc:
            raise BadInput(f"the web extra is missing ({exc.name}): pip install 'hybridplan[web]'") from None
        shown = f"[{host}]" if ":" in host else host
        sys.stderr.write(f"hybridplan: serving on http://{shown}:{port}/ (Ctrl-C stops)\n")
        uvicorn.run(create_app(), host=host, port=port, log_level="warning")
        return 0

    run_guarded(body, as_json=False)
