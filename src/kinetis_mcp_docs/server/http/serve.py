"""`kinetis-docs serve --http`: the route on uvicorn, configured through the environment.

Options become the environment variables `settings` reads, so every uvicorn worker (a
separate process when `workers > 1`) builds the same route through the ASGI factory.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from .guard import ip_address, is_loopback
from .settings import ALLOWED_HOSTS, Settings, SettingsError

FACTORY = "kinetis_mcp_docs.server.http:create_app"
LOOPBACK_HOSTNAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def beyond_loopback(host: str) -> bool:
    """Whether binding `host` lets other machines connect."""
    return host.lower() not in LOOPBACK_HOSTNAMES and not is_loopback(host.strip("[]"))


def as_typed(error: SettingsError, options: Mapping[str, str]) -> str:
    """The refusal, naming the option the user typed when the setting came from one."""
    option = options.get(error.variable or "")
    if option is None or error.value is None or error.problem is None:
        return str(error)
    return f"{option} {error.value!r}: {error.problem}"


def serve(
    host: str,
    port: int,
    workers: int,
    environ: Mapping[str, str],
    *,
    access_log: bool = True,
    options: Mapping[str, str] | None = None,
) -> int:
    """Run the route until interrupted; the exit status. `environ` adds to this process's.

    `options` names the command-line option each variable of `environ` came from, so that
    a setting refused is named as the user typed it.
    """
    os.environ.update(environ)
    if ip_address(host.strip("[]")) is None:
        # A name bound (one /etc/hosts maps to 127.0.0.2, say) is a name this server answers
        # to; the address a connection arrives on is accepted by the guard itself.
        named = os.environ.get(ALLOWED_HOSTS, "")
        os.environ[ALLOWED_HOSTS] = f"{named},{host}" if named else host
    try:
        settings = Settings.from_environ()
    except SettingsError as error:
        print(f"kinetis-docs: {as_typed(error, options or {})}", file=sys.stderr, flush=True)
        return 2
    if beyond_loopback(host) and settings.token is None:
        print(
            f"kinetis-docs: warning: serving {host}:{port} beyond loopback without "
            "MCP_BEARER_TOKEN: anyone who can reach it can use the route.",
            file=sys.stderr,
            flush=True,
        )
    import uvicorn  # noqa: PLC0415 - only the HTTP route needs it

    uvicorn.run(
        FACTORY,
        factory=True,
        host=host,
        port=port,
        workers=workers,
        # The route reads X-Forwarded-For itself, from trusted proxies only.
        proxy_headers=False,
        server_header=False,
        date_header=False,
        log_level="info",
        access_log=access_log,
        timeout_graceful_shutdown=10,
    )
    return 0
