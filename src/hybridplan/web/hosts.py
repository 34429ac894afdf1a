"""Host-header check against DNS rebinding: the server answers only requests addressed to the address it is bound
to, its loopback equivalents, or names the operator allowed (`hybridplan serve --allowed-host NAME`)."""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from hybridplan.web.errors import error_body

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARDS = frozenset({"", "0.0.0.0", "::"})
MAX_HOST_CHARS = 255


def split_host(value: str) -> tuple[str, int | None] | None:
    """`name[:port]` or `[v6][:port]` -> (lower-case name without brackets or trailing dot, port); None if malformed."""
    value = value.strip()
    if not value or len(value) > MAX_HOST_CHARS:
        return None
    if value.startswith("["):
        name, sep, rest = value[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            return None
        port = rest[1:] if rest else None
    else:
        name, sep, port = value.rpartition(":") if value.count(":") == 1 else (value, "", None)
        if not sep:
            name, port = value, None
    if port is not None and not (port.isdigit() and 0 < int(port) < 65536):
        return None
    return name.lower().rstrip("."), int(port) if port is not None else None


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _is_loopback(name: str) -> bool:
    return name in LOOPBACK_NAMES or (_is_ip(name) and ipaddress.ip_address(name).is_loopback)


@dataclass(frozen=True, kw_only=True)
class HostPolicy:
    """The Host values a server bound to `host:port` answers.

    Bound to loopback: that address and 127.0.0.1 / localhost / [::1], on the bound port. Bound to a wildcard
    (0.0.0.0, ::): loopback names and any IP literal on the bound port (a rebinding page always sends its own DNS
    name, never an IP). Any `allowed` name, on any port, or on the port it names.
    """

    host: str = "127.0.0.1"
    port: int = 8000
    allowed: tuple[str, ...] = ()

    def bound_names(self) -> frozenset[str]:
        own = (split_host(self.host) or (self.host, None))[0] if self.host not in WILDCARDS else ""
        loop = LOOPBACK_NAMES if (self.host in WILDCARDS or _is_loopback(own)) else frozenset()
        return frozenset({own, *loop} - {""})

    def admits(self, header: str) -> bool:
        """Whether a request with this Host header is addressed to this server."""
        parsed = split_host(header)
        if parsed is None:
            return False
        name, port = parsed
        for allowed in self.allowed:
            a_name, a_port = split_host(allowed) or ("", None)
            if name == a_name and (a_port is None or port == a_port):
                return True
        on_port = port == self.port or (port is None and self.port == 80)
        if not on_port:
            return False
        return name in self.bound_names() or (self.host in WILDCARDS and _is_ip(name))


class HostGuard:
    """ASGI middleware: a request whose Host header this server does not answer gets 421 and a JSON error."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        host = dict(scope.get("headers") or ()).get(b"host", b"").decode("latin-1")
        if self.policy.admits(host):
            return await self.app(scope, receive, send)
        if scope["type"] == "websocket":
            return await send({"type": "websocket.close", "code": 1008})
        body = json.dumps(error_body("Host: not an address this server answers; start it with "
                                     "`hybridplan serve --allowed-host NAME` to add a name", "BadInput")).encode()
        await send({"type": "http.response.start", "status": 421,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
        return None
