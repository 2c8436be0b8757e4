"""How long a connection may take and how many there may be: the bounds `connection` holds.

Read from the environment, like `settings`, so that every worker of `serve --http`, and
`uvicorn --http kinetis_mcp_docs.server.http.uvicorn.connection:BoundedHttpToolsProtocol`, holds
the same ones:

- `KINETIS_DOCS_HEADER_TIMEOUT` (20 s): from a request's first byte to the end of its
  headers. Headers are small; a client that sends them a byte at a time holds a
  connection, and a worker's share of descriptors, for nothing.
- `KINETIS_DOCS_BODY_TIMEOUT` (30 s): from the end of the headers to the end of the body.
  The body is at most 2 MiB and is buffered until it is whole: a stalled upload held its
  buffer for as long as it stalled.
- `KINETIS_DOCS_IDLE_TIMEOUT` (5 s): waiting for a request's first byte, on a new
  connection or between two requests. Unset, it is uvicorn's keep-alive timeout
  (`--timeout-keep-alive`, 5 s by default), which it stands for.
- `KINETIS_DOCS_MAX_CONNECTIONS`: connections a worker holds at once. By default 1,000,
  or half the process's descriptor limit if that is less: the other half is left for
  what serving needs besides (page files, Redis, the listening socket).

A request head (its request line and headers) is at most `MAX_HEAD_BYTES`; that bound is
not configurable: no client of this route sends headers near it.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Mapping
from dataclasses import dataclass

from ....seconds import parse_seconds
from ..settings import SettingsError

HEADER_TIMEOUT = "KINETIS_DOCS_HEADER_TIMEOUT"
BODY_TIMEOUT = "KINETIS_DOCS_BODY_TIMEOUT"
IDLE_TIMEOUT = "KINETIS_DOCS_IDLE_TIMEOUT"
MAX_CONNECTIONS = "KINETIS_DOCS_MAX_CONNECTIONS"

DEFAULT_HEADER_TIMEOUT = 20.0
DEFAULT_BODY_TIMEOUT = 30.0
DEFAULT_MAX_CONNECTIONS = 1000
MAX_HEAD_BYTES = 32 * 1024


@dataclass(frozen=True)
class ConnectionBounds:
    """One worker's connection bounds; `max_connections` None: derived from the
    descriptor limit (`connection_bound`); `idle_timeout` None: uvicorn's own."""

    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    idle_timeout: float | None = None  # None: uvicorn's keep-alive timeout
    max_connections: int | None = None

    def connection_bound(self) -> int:
        """The connections a worker holds at once: `max_connections`, else the default or
        half the descriptor limit, whichever is less."""
        if self.max_connections is not None:
            return self.max_connections
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return DEFAULT_MAX_CONNECTIONS
        return max(1, min(DEFAULT_MAX_CONNECTIONS, soft // 2))

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> ConnectionBounds:
        env = os.environ if environ is None else environ
        connections = env.get(MAX_CONNECTIONS)
        return cls(
            header_timeout=_seconds(env, HEADER_TIMEOUT) or DEFAULT_HEADER_TIMEOUT,
            body_timeout=_seconds(env, BODY_TIMEOUT) or DEFAULT_BODY_TIMEOUT,
            idle_timeout=_seconds(env, IDLE_TIMEOUT),
            max_connections=None if connections is None else _count(MAX_CONNECTIONS, connections),
        )


def _seconds(env: Mapping[str, str], name: str) -> float | None:
    text = env.get(name)
    if text is None:
        return None
    value = parse_seconds(text)
    if value is None:
        raise SettingsError(f"{name}={text!r}: not a positive number of seconds")
    return value


def _count(name: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise SettingsError(f"{name}={text!r}: not a positive integer")
    return value
