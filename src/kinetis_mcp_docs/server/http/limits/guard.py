"""DNS-rebinding guard: on a loopback connection, only loopback names may be asked for.

A web page can make a browser send requests to a server on the user's own machine by
pointing a name it controls at 127.0.0.1. The request then arrives on a loopback
connection carrying that foreign name in `Host` (and the page's `Origin`). So, as the MCP
transport rules require and the MCP SDK answers: a request that arrived on a loopback
address whose `Host` is not a loopback name, the address it arrived on, or an allowed
name is 421, and one whose `Origin`, when present, is not a loopback origin (or an allowed
one) is 403. A `Host` or `Origin` sent twice is refused the same way: which copy would
count is anybody's guess.

The test is made per connection, from the address it arrived on, so it holds whether the
server was bound to 127.0.0.1, to another loopback address, or to every interface (an
IPv4 connection to a dual-stack socket arrives on `::ffff:127.0.0.1`, which is loopback
too); a connection from another machine (through a load balancer, say) is not subject to it.
"""

from __future__ import annotations

import ipaddress

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})
_SCHEMES = ("http://", "https://")

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def ip_address(text: str) -> IpAddress | None:
    """The address `text` names, an IPv4-mapped IPv6 address as the IPv4 address it maps;
    None when `text` is no address."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_loopback(text: str) -> bool:
    address = ip_address(text)
    return address is not None and address.is_loopback


# Local address -> how a `Host` header names it, or None when it is not loopback. A server
# has few local addresses: each is parsed once.
_LOOPBACK_LOCAL: dict[str, str | None] = {}


def _loopback_host(local_address: str) -> str | None:
    address = ip_address(local_address)
    if address is None or not address.is_loopback:
        return None
    return f"[{address.compressed}]" if address.version == 6 else address.compressed


def _without_port(host: str) -> str:
    if host.startswith("["):
        end = host.find("]")
        return host[: end + 1] if end > 0 else host
    return host.partition(":")[0]


# `Host` values whose answer is remembered, per guard: a client may send any name it likes,
# so the memory is bounded; past the bound the answer is worked out again (a microsecond).
_REMEMBERED_HOSTS = 256


class RebindingGuard:
    """Decides whether a request on a loopback connection names this machine."""

    def __init__(self, allowed_hosts: tuple[str, ...], allowed_origins: tuple[str, ...]) -> None:
        self._hosts = LOOPBACK_NAMES | {_without_port(host).lower() for host in allowed_hosts}
        self._origins = frozenset(origin.rstrip("/").lower() for origin in allowed_origins)
        # (local address, Host as sent) -> the answer to a request without `Origin`, with
        # `Host` sent once: nearly every request to a server comes with the same few, and
        # working it out anew cost more than the rest of the guard. The route looks here
        # first (a lookup); `refusal` fills it.
        self.answers: dict[tuple[str | None, bytes | None], int] = {}

    def refusal(
        self,
        local_address: str | None,
        host: str | None,
        origin: str | None,
        repeated: frozenset[str],
    ) -> int:
        """0 when the request may go on, else the status to answer (421 or 403)."""
        answer = self._refusal(local_address, host, origin, repeated)
        if origin is None and not repeated and len(self.answers) < _REMEMBERED_HOSTS:
            self.answers[local_address, None if host is None else host.encode("latin-1")] = answer
        return answer

    def _refusal(
        self,
        local_address: str | None,
        host: str | None,
        origin: str | None,
        repeated: frozenset[str],
    ) -> int:
        if "host" in repeated:
            return 421  # on any connection: no reader can tell which one was meant
        if local_address is None:
            return 0
        if local_address in _LOOPBACK_LOCAL:
            local = _LOOPBACK_LOCAL[local_address]
        else:
            local = _LOOPBACK_LOCAL[local_address] = _loopback_host(local_address)
        if local is None:
            return 0
        if not host:
            return 421
        name = _without_port(host.strip()).lower()
        # The address the connection arrived on names this machine by construction: a bound
        # 127.0.0.2, say. A rebinding attack can only send the attacker's own name.
        if name not in self._hosts and name != local:
            return 421
        if origin and ("origin" in repeated or not self._origin_allowed(origin.strip().lower())):
            return 403
        return 0

    def _origin_allowed(self, origin: str) -> bool:
        if origin.rstrip("/") in self._origins:
            return True
        for scheme in _SCHEMES:
            if origin.startswith(scheme):
                return _without_port(origin[len(scheme) :].rstrip("/")) in LOOPBACK_NAMES
        return False
