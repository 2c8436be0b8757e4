"""DNS-rebinding guard: on a loopback connection, only loopback names may be asked for.

A web page can make a browser send requests to a server on the user's own machine by
pointing a name it controls at 127.0.0.1. The request then arrives on a loopback
connection carrying that foreign name in `Host` (and the page's `Origin`). So, as the MCP
transport rules require and the MCP SDK answers: a request that arrived on a loopback
address whose `Host` is not a loopback name (or an allowed one) is 421, and one whose
`Origin`, when present, is not a loopback origin (or an allowed one) is 403.

The test is made per connection, from the address it arrived on, so it holds whether the
server was bound to 127.0.0.1 or to every interface; a connection from another machine
(through a load balancer, say) is not subject to it.
"""

from __future__ import annotations

import ipaddress

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})
_SCHEMES = ("http://", "https://")


def is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


_LOOPBACK_LOCAL: dict[str, bool] = {}  # a server has few local addresses: each parsed once


def _without_port(host: str) -> str:
    if host.startswith("["):
        end = host.find("]")
        return host[: end + 1] if end > 0 else host
    return host.partition(":")[0]


class RebindingGuard:
    """Decides whether a request on a loopback connection names this machine."""

    def __init__(self, allowed_hosts: tuple[str, ...], allowed_origins: tuple[str, ...]) -> None:
        self._hosts = LOOPBACK_NAMES | {_without_port(host).lower() for host in allowed_hosts}
        self._origins = frozenset(origin.rstrip("/").lower() for origin in allowed_origins)

    def refusal(self, local_address: str | None, host: str | None, origin: str | None) -> int:
        """0 when the request may go on, else the status to answer (421 or 403)."""
        if local_address is None:
            return 0
        loopback = _LOOPBACK_LOCAL.get(local_address)
        if loopback is None:
            loopback = _LOOPBACK_LOCAL[local_address] = is_loopback(local_address)
        if not loopback:
            return 0
        if not host or _without_port(host.strip()).lower() not in self._hosts:
            return 421
        if origin and not self._origin_allowed(origin.strip().lower()):
            return 403
        return 0

    def _origin_allowed(self, origin: str) -> bool:
        if origin.rstrip("/") in self._origins:
            return True
        for scheme in _SCHEMES:
            if origin.startswith(scheme):
                return _without_port(origin[len(scheme) :].rstrip("/")) in LOOPBACK_NAMES
        return False
