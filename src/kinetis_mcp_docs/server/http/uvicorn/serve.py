"""`kinetis-docs serve --http`: the route on uvicorn, configured through the environment.

Options become the environment variables `settings` reads, so every uvicorn worker (a
separate process when `workers > 1`) builds the same route through the ASGI factory. The
socket is bound here, as `uvicorn.run` binds it, so that the first line says the address
and port it really got and the endpoint's URL, and that a route open beyond loopback, or
dark, says so at start; it listens before that line, and an address it cannot listen on is
one line of ours and exit status 2 (`listening.py`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from ...core.display import say
from ..limits.guard import ip_address, is_loopback
from ..observe.access_log import SALT
from ..settings import ALLOWED_HOSTS, MULTIPROCESS_DIR, Settings, SettingsError
from .bounds import ConnectionBounds
from .listening import CannotListen, listening_socket

FACTORY = "kinetis_mcp_docs.server.http:create_app"
ROUTE = "/api/mcp"
PRIVATE = "KINETIS_DOCS_PRIVATE"
LOOPBACK_HOSTNAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
# The modules of the http extra that the route imports, some only when an option asks for
# one (Redis, the metrics, a ranking): without the extra, `serve --http` must say so at
# once, in one line, rather than in a traceback when a module is first needed. httptools
# is the parser the route's bounded protocol is built on (see `connection`): there is no
# second protocol to fall back to. uvloop is left out: uvicorn does without it.
EXTRA_MODULES = (
    "uvicorn",
    "httptools",
    "limits",
    "redis",
    "prometheus_client",
    "tantivy",
    "zstandard",
)


def missing_extra() -> str | None:
    """The first module of the http extra this environment cannot import, or None."""
    return next((name for name in EXTRA_MODULES if importlib.util.find_spec(name) is None), None)


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
        ConnectionBounds.from_environ()
    except SettingsError as error:
        say(as_typed(error, options or {}))
        return 2
    with _run_environment(settings):
        return _run(host, port, workers, settings, access_log=access_log, options=options or {})


def _run(
    host: str,
    port: int,
    workers: int,
    settings: Settings,
    *,
    access_log: bool,
    options: Mapping[str, str],
) -> int:
    import uvicorn  # noqa: PLC0415 - only the HTTP route needs it

    from .connection import BoundedHttpToolsProtocol  # noqa: PLC0415 - imports uvicorn
    from .drain import DrainingServer  # noqa: PLC0415 - imports uvicorn
    from .workers import Workers  # noqa: PLC0415

    config = uvicorn.Config(
        FACTORY,
        factory=True,
        host=host,
        port=port,
        workers=workers,
        # The class, not its import string: uvicorn takes a class in every release, and an
        # import string only from 0.32 on.
        http=BoundedHttpToolsProtocol,
        ws="none",  # no WebSocket: an upgrade would hand the connection past the bounds
        # The route reads X-Forwarded-For itself, from trusted proxies only.
        proxy_headers=False,
        server_header=False,
        date_header=False,
        log_level="info",
        # The route's JSON log replaces uvicorn's line rather than doubling it.
        access_log=access_log and settings.access_log != "json",
        timeout_graceful_shutdown=10,
    )
    # Bound here, as `uvicorn.run` binds it, so that the start-up lines can name the address
    # and port the socket really has (`--port 0` picks one), and listening before they are
    # said, so that a script waiting for them is never refused.
    try:
        listening = listening_socket(config)
    except CannotListen as error:
        say(str(error))
        return 2
    for line in startup_lines(host, listening.getsockname(), settings, options):
        say(line)
    try:
        if workers > 1:
            return Workers(config, listening, workers, settings.drain_seconds).run()
        server = DrainingServer(config, settings.drain_seconds)
        # A Ctrl-C before the server took the signal over: nothing was being served.
        with contextlib.suppress(KeyboardInterrupt):
            server.run(sockets=[listening])
        # uvicorn's own status for a server that never started (its app failed to load).
        return 0 if server.started else 3
    finally:
        listening.close()


@contextmanager
def _run_environment(settings: Settings) -> Iterator[None]:
    """What every worker of this run shares through its environment: the directory the
    metrics of all workers are summed in (made for the run, removed after, unless the
    operator named one), and the secret the access log hashes keys with."""
    made = None
    if settings.metrics and not os.environ.get(MULTIPROCESS_DIR):
        made = tempfile.mkdtemp(prefix="kinetis-docs-metrics-")
        os.environ[MULTIPROCESS_DIR] = made
    if settings.access_log == "json" and not os.environ.get(SALT):
        os.environ[SALT] = secrets.token_hex(16)
    try:
        yield
    finally:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


def startup_lines(
    host: str, bound: tuple[object, ...], settings: Settings, options: Mapping[str, str]
) -> list[str]:
    """What `serve --http` says once its socket is bound: where the endpoint is, and what
    keeps it from being used as an operator may expect (open beyond loopback, or dark)."""
    address, port = str(bound[0]), int(str(bound[1]))
    shown = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
    bound_ip = ip_address(address)
    if bound_ip is not None and bound_ip.is_unspecified:
        local = "[::1]" if ":" in address else "127.0.0.1"
        where = (
            f"http://{local}:{port}{ROUTE} from this machine, and at each of its addresses "
            f"from others (bound to {shown})"
        )
    else:
        # A name given to --host is how its users reach it; an address, as bound.
        name = host if ip_address(host.strip("[]")) is None else shown.rsplit(":", 1)[0]
        where = f"http://{name}:{port}{ROUTE} (bound to {shown})"
    lines = [f"serving MCP at {where}"]
    if beyond_loopback(host) and settings.token is None:
        lines.append(
            f"warning: serving {shown} beyond loopback without MCP_BEARER_TOKEN: anyone who "
            "can reach it can use the route."
        )
    if settings.dark:
        private = options.get(PRIVATE, PRIVATE)
        missing = [
            *([] if settings.enabled else ["MCP_ENABLED=true"]),
            *([] if settings.token else ["MCP_BEARER_TOKEN"]),
        ]
        lines.append(
            f"{private}: the route is dark, every request answered 404, until MCP_ENABLED=true "
            f"and MCP_BEARER_TOKEN are both set in its environment (missing: "
            f"{', '.join(missing)})."
        )
    return lines
