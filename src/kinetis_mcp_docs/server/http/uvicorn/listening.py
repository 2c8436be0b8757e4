"""The route's listening socket: bound and listening before the start-up line, or one line
saying why it cannot be.

uvicorn binds the socket it is given (`Config.bind_socket`) and listens only once its
application has loaded, so a script that connected as soon as `serving MCP at ...` was
printed could be refused. Here the socket listens before that line is said: a connection
made after it waits in the kernel's queue until the route answers it.

A socket that cannot be bound is refused by uvicorn with its logger's bare `[Errno 98]
Address already in use` and exit status 3, naming neither the address nor a fix. So the
address is tried first, as uvicorn will bind it (IPv6 for a host holding a colon, the
same socket options), and each failure a user meets becomes one line naming the address
and what to do (`CannotListen`). Between that try and uvicorn's own bind another program
could take the port; uvicorn then says so in its words, as before.
"""

from __future__ import annotations

import errno
import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import uvicorn

PORT_FIX = "choose another with --port (--port 0 picks a free one)"


class CannotListen(Exception):
    """The route cannot listen where it was asked: the one line that says why, and what to do."""


def listening_socket(config: uvicorn.Config) -> socket.socket:
    """`config`'s socket, bound as uvicorn binds it and listening; `CannotListen` if not."""
    host, port = config.host, config.port
    _try_binding(host, port)
    listening = config.bind_socket()
    try:
        listening.listen(config.backlog)
    except OSError as error:
        listening.close()
        raise CannotListen(_reason(host, port, error)) from None
    return listening


def _try_binding(host: str, port: int) -> None:
    """Bind `host`, `port` as uvicorn will, and let go; `CannotListen` when it cannot."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP) as trial:
        trial.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            trial.bind((host, port))
        except OSError as error:
            raise CannotListen(_reason(host, port, error)) from None


def _reason(host: str, port: int, error: OSError) -> str:
    """The line for `error`, met binding `host`, `port`: the address, what is wrong, the fix."""
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    said = error.strerror or str(error)
    if isinstance(error, socket.gaierror):
        why = (
            f"the name {host} does not resolve ({said}); give --host an address of this "
            "machine, or a name that resolves to one"
        )
    elif error.errno == errno.EADDRINUSE:
        why = (
            f"port {port} is already in use there (another server listens on it: an earlier "
            f"`serve --http` still running, say); stop that one, or {PORT_FIX}"
        )
    elif error.errno == errno.EADDRNOTAVAIL:
        why = (
            f"{host} is not an address of this machine; give --host one of its addresses "
            "(127.0.0.1 for this machine alone, 0.0.0.0 for all of them)"
        )
    elif error.errno == errno.EACCES:
        why = (
            "permission denied: a port below 1024 needs privileges this user lacks; choose "
            "one from 1024 up with --port (--port 0 picks a free one)"
        )
    else:
        why = f"{said}; check --host and --port"
    return f"cannot listen on {address}: {why}."
