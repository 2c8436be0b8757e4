"""The HTTP route: stateless MCP at `POST /api/mcp`, a transport over `DocsApplication`.

Needs the `http` extra (`pip install 'kinetis-mcp-docs[http]'`); the stdio server never
imports this package. `create_app` is the ASGI factory, configured from the environment
(see `settings`):

    uvicorn --factory kinetis_mcp_docs.server.http:create_app --host 0.0.0.0 --workers 4
"""

from __future__ import annotations

from ..core import reasons
from .app import McpRoute
from .observe.access_log import AccessLog
from .settings import Settings
from .uvicorn.bounds import ConnectionBounds


def create_app() -> McpRoute:
    """The route as an ASGI application, configured from this process's environment.

    A server of its own, it sends the reasons behind its fixed error answers (a page that
    could not be read) to its stderr, as the stdio server does.
    """
    reasons.to_stderr()
    settings = Settings.from_environ()
    ConnectionBounds.from_environ()  # a bound that cannot be used stops the start, here
    metrics = access_log = None
    if settings.metrics:
        # Imported here: prometheus_client is needed only with metrics on.
        from .observe.metrics import RouteMetrics  # noqa: PLC0415

        metrics = RouteMetrics.from_environ()
    if settings.access_log == "json":
        access_log = AccessLog.from_environ()
    return McpRoute(settings, metrics=metrics, access_log=access_log)


__all__ = ["McpRoute", "Settings", "create_app"]
