"""Whose request it is: the rate-limit key, which no client can choose for itself.

- A **valid bearer token** is its own key (a team behind one address is not one client).
  A token that was not verified never becomes a key, whatever the method: otherwise every
  made-up token would be a fresh budget, and a fresh key in the count's memory.
- Otherwise the **client's address**. The peer's, unless the peer is a trusted proxy: then
  the rightmost `X-Forwarded-For` address that is not itself a trusted proxy. The common
  proxies (nginx's `$proxy_add_x_forwarded_for`, HAProxy's `option forwardfor`, AWS ALB)
  keep whatever the client sent and add the address they saw after it, so everything left
  of what trusted proxies added is the client's own writing; the rightmost untrusted
  address is the one the last trusted proxy saw connect. With one proxy that overwrites
  the header it is the only address there.
- An **IPv6** address counts by its /64: one host is routinely given a whole /64 and can
  pick any address in it. An IPv4-mapped address (`::ffff:198.51.100.4`) is the IPv4
  address it maps.

Parsing an address costs more than the rest of a small request, so what was parsed is
remembered (a bounded cache); an IPv4 peer with no `X-Forwarded-For` is never parsed.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress

from ..settings import IpNetwork
from .guard import IpAddress, ip_address

TOKEN_PREFIX = "token:"  # noqa: S105 - the key's namespace, no password
ADDRESS_PREFIX = "address:"
IPV6_PREFIX_LENGTH = 64
# A chain of trusted proxies longer than this is no deployment: what lies further left is
# not looked at, so a long header costs no more than a short one.
MAX_HOPS = 16
# An `X-Forwarded-For` entry that is not an address (`unknown`, an obfuscated name) was
# written by a trusted proxy; it is a key as written, cut to this many characters. No
# address is longer (an IPv6 address with its zone, brackets and port), so nothing longer
# is parsed, or remembered.
MAX_NAME_CHARACTERS = 64
_CACHE_SIZE = 4096
_HTTP_SPACE = " \t"


def token_key(token: bytes) -> str:
    """The key of a valid token: a digest, so the token itself is never stored (in Redis)."""
    return TOKEN_PREFIX + hashlib.sha256(token).hexdigest()


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _parsed(text: str) -> IpAddress | None:
    """The address an `X-Forwarded-For` entry or a peer names, with a port or brackets
    (`[2001:db8::1]:443`, `203.0.113.5:4711`) allowed; None when it names none."""
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else text
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    return ip_address(text)


def address_key(text: str) -> str:
    """The key of the address `text` names: IPv4 as it is, IPv6 by its /64."""
    if len(text) > MAX_NAME_CHARACTERS:
        return ADDRESS_PREFIX + text[:MAX_NAME_CHARACTERS]
    return _address_key(text)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _address_key(text: str) -> str:
    address = _parsed(text)
    if address is None:
        return ADDRESS_PREFIX + text
    if isinstance(address, ipaddress.IPv6Address):
        network = ipaddress.IPv6Network((address, IPV6_PREFIX_LENGTH), strict=False)
        return ADDRESS_PREFIX + network.compressed
    return ADDRESS_PREFIX + address.compressed


class AddressKeys:
    """The address key of a request, given the proxies whose `X-Forwarded-For` is believed."""

    def __init__(self, trusted: tuple[IpNetwork, ...]) -> None:
        self._networks = trusted
        self._trusted = functools.lru_cache(maxsize=_CACHE_SIZE)(self._in_networks)

    def trusted(self, text: str) -> bool:
        """Whether the address `text` names is a trusted proxy's."""
        return len(text) <= MAX_NAME_CHARACTERS and self._trusted(text)

    def _in_networks(self, text: str) -> bool:
        address = _parsed(text)
        return address is not None and any(address in network for network in self._networks)

    def key(self, peer: str | None, forwarded_for: str | None) -> str:
        """The key of a request from `peer` carrying `forwarded_for` (every
        `X-Forwarded-For` line, joined in order with commas)."""
        if peer is None:
            return ADDRESS_PREFIX + "unknown"  # a Unix socket: no address to tell clients by
        if forwarded_for and self.trusted(peer):
            client = self._forwarded(forwarded_for)
            if client:
                return address_key(client)
        if ":" not in peer:
            return ADDRESS_PREFIX + peer  # IPv4, as the socket gives it: nothing to parse
        return address_key(peer)

    def _forwarded(self, forwarded_for: str) -> str:
        """The rightmost entry that is not a trusted proxy; if every entry is one (or more
        than `MAX_HOPS` are), the leftmost looked at; "" when there is none at all."""
        client = ""
        for entry in reversed(forwarded_for.rsplit(",", MAX_HOPS)[-MAX_HOPS:]):
            text = entry.strip(_HTTP_SPACE)
            if text:
                client = text
                if not self.trusted(text):
                    break
        return client
