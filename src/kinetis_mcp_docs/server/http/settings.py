"""How one instance of the HTTP route is configured: from the environment, for every worker.

`kinetis-docs serve --http` turns its options into these variables before it starts
uvicorn, so `uvicorn --factory kinetis_mcp_docs.server.http:create_app` (or gunicorn
with uvicorn workers) configured by the same variables runs the same route.

- `MCP_BEARER_TOKEN`: the token every request must carry (`Authorization: Bearer ...`).
  One with whitespace around it (a space or a tab, which HTTP trims), a control character
  in it, or one that is not UTF-8 (the environment holds bytes; Python shows those that
  are not UTF-8 as surrogate escapes) could never be sent in a header as it is: it is
  refused, not served behind a lock no client can open.
- `MCP_ENABLED`: true turns a private route on (it needs a token too).
- `KINETIS_DOCS_PRIVATE`: true, private mode: dark (404) until enabled. Public otherwise.
- `KINETIS_DOCS_PAGES_DIR`: a local tree of `*.md`/`*.mdx` to serve instead of the catalogue.
- `KINETIS_DOCS_RANKING`: how `search_docs` ranks, `owndocs` (the contract's scoring, the
  default) or `relevance` (see docs/http.md).
- `KINETIS_DOCS_RATE_LIMIT`: requests per minute per key (60).
- `KINETIS_DOCS_RATE_LIMIT_STORAGE`: `memory://` (per instance, the default) or `redis://...`
  (shared by every instance naming it).
- `KINETIS_DOCS_TRUSTED_PROXIES`: comma-separated addresses or networks whose
  `X-Forwarded-For` counts (loopback by default).
- `KINETIS_DOCS_ALLOWED_HOSTS`, `KINETIS_DOCS_ALLOWED_ORIGINS`: more `Host` names and
  `Origin`s accepted on a loopback connection.
- `KINETIS_DOCS_METRICS`: true, `GET /metrics` answers in Prometheus' text format (see
  `metrics`); otherwise it is 404.
- `KINETIS_DOCS_ACCESS_LOG`: `json`, one JSON object per request on stderr (see
  `access_log`); `text` or nothing, none of the route's own (uvicorn's line, if on).
- `KINETIS_DOCS_DRAIN_SECONDS`: after SIGTERM, how long `serve --http` goes on answering
  while readiness says 503, before it stops accepting (5; 0 stops at once).
- `KINETIS_DOCS_BODY_MEMORY`: MiB of request bodies a worker holds at once (64, at least
  4); a body that does not fit is 503 before it is read (see `body_budget`).

Both switches read `true`, `1`, `yes` as true and `false`, `0`, `no` or nothing as false,
in any case; anything else is refused, since a mistyped switch that silently meant "public"
would open a route its operator meant to keep dark.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from ...seconds import parse_seconds
from ..core.display import utf8_encodable
from .limits.body_budget import DEFAULT_BODY_MEMORY_MIB, MIN_BODY_MEMORY_MIB

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_RATE_LIMIT = 60
DEFAULT_DRAIN_SECONDS = 5.0
MAX_DRAIN_SECONDS = 3600.0
ACCESS_LOG_FORMATS = ("text", "json")
DEFAULT_STORAGE = "memory://"
RANKINGS = ("owndocs", "relevance")
LOOPBACK_NETWORKS = ("127.0.0.0/8", "::1/128")
ALLOWED_HOSTS = "KINETIS_DOCS_ALLOWED_HOSTS"
# prometheus_client's own variable: where every worker's metrics are kept (see `metrics`).
MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"


class SettingsError(ValueError):
    """A setting that cannot be used; the message names it, fit for one line on stderr.

    `variable`, `value` and `problem`, when given, say which variable held what and what is
    wrong with it, so that a caller that set the variable from an option of its own can
    name that option instead (`kinetis-docs serve --http --rate-limit-storage ...`).
    """

    def __init__(
        self,
        message: str,
        *,
        variable: str | None = None,
        value: str | None = None,
        problem: str | None = None,
    ) -> None:
        super().__init__(message)
        self.variable = variable
        self.value = value
        self.problem = problem

    @classmethod
    def of(cls, variable: str, value: str, problem: str) -> SettingsError:
        """`VARIABLE='value': problem`, with its parts kept."""
        return cls(
            f"{variable}={value!r}: {problem}", variable=variable, value=value, problem=problem
        )


@dataclass(frozen=True)
class Settings:
    """One route's configuration."""

    token: str | None = None
    private: bool = False
    enabled: bool = False
    pages_dir: str | None = None
    ranking: str = RANKINGS[0]
    rate_limit: int = DEFAULT_RATE_LIMIT
    rate_limit_storage: str = DEFAULT_STORAGE
    trusted_proxies: tuple[IpNetwork, ...] = field(
        default_factory=lambda: networks(",".join(LOOPBACK_NETWORKS))
    )
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    metrics: bool = False
    access_log: str = ACCESS_LOG_FORMATS[0]
    drain_seconds: float = DEFAULT_DRAIN_SECONDS
    body_memory: int = DEFAULT_BODY_MEMORY_MIB << 20  # bytes

    @property
    def dark(self) -> bool:
        """Private mode keeps every method 404 until both `MCP_ENABLED=true` and a token."""
        return self.private and not (self.enabled and self.token)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        limit_text = env.get("KINETIS_DOCS_RATE_LIMIT", str(DEFAULT_RATE_LIMIT))
        try:
            rate_limit = int(limit_text)
        except ValueError:
            rate_limit = -1
        if rate_limit < 1:
            raise SettingsError.of("KINETIS_DOCS_RATE_LIMIT", limit_text, "not a positive integer")
        storage = env.get("KINETIS_DOCS_RATE_LIMIT_STORAGE") or DEFAULT_STORAGE
        if not storage.startswith(("memory://", "redis://", "rediss://", "redis+unix://")):
            raise SettingsError.of(
                "KINETIS_DOCS_RATE_LIMIT_STORAGE", storage, "use memory:// or a redis:// URI"
            )
        ranking = env.get("KINETIS_DOCS_RANKING") or RANKINGS[0]
        if ranking not in RANKINGS:
            raise SettingsError(f"KINETIS_DOCS_RANKING={ranking!r}: use owndocs or relevance")
        proxies = env.get("KINETIS_DOCS_TRUSTED_PROXIES")
        access_log = (env.get("KINETIS_DOCS_ACCESS_LOG") or ACCESS_LOG_FORMATS[0]).strip().lower()
        if access_log not in ACCESS_LOG_FORMATS:
            raise SettingsError.of(
                "KINETIS_DOCS_ACCESS_LOG", env["KINETIS_DOCS_ACCESS_LOG"], "use text or json"
            )
        return cls(
            token=_token(env.get("MCP_BEARER_TOKEN") or None),
            private=_switch(env, "KINETIS_DOCS_PRIVATE"),
            enabled=_switch(env, "MCP_ENABLED"),
            pages_dir=env.get("KINETIS_DOCS_PAGES_DIR") or None,
            ranking=ranking,
            rate_limit=rate_limit,
            rate_limit_storage=storage,
            trusted_proxies=networks(
                ",".join(LOOPBACK_NETWORKS) if proxies is None else proxies,
                name="KINETIS_DOCS_TRUSTED_PROXIES",
            ),
            allowed_hosts=_names(env.get(ALLOWED_HOSTS, "")),
            allowed_origins=_names(env.get("KINETIS_DOCS_ALLOWED_ORIGINS", "")),
            metrics=_switch(env, "KINETIS_DOCS_METRICS"),
            access_log=access_log,
            drain_seconds=_drain_seconds(env),
            body_memory=_body_memory(env),
        )


def _body_memory(env: Mapping[str, str]) -> int:
    text = env.get("KINETIS_DOCS_BODY_MEMORY")
    if text is None:
        return DEFAULT_BODY_MEMORY_MIB << 20
    try:
        mib = int(text)
    except ValueError:
        mib = 0
    if mib < MIN_BODY_MEMORY_MIB:
        raise SettingsError.of(
            "KINETIS_DOCS_BODY_MEMORY",
            text,
            f"not a whole number of MiB from {MIN_BODY_MEMORY_MIB} (the largest body and "
            "room for ordinary ones)",
        )
    return mib << 20


def _drain_seconds(env: Mapping[str, str]) -> float:
    text = env.get("KINETIS_DOCS_DRAIN_SECONDS")
    if text is None:
        return DEFAULT_DRAIN_SECONDS
    # A bound, not a wish: a drain of hours would hold a deploy, and SIGKILL would end it.
    seconds = parse_seconds(text, maximum=MAX_DRAIN_SECONDS, minimum_open=False)
    if seconds is None:
        raise SettingsError.of(
            "KINETIS_DOCS_DRAIN_SECONDS",
            text,
            f"not a number of seconds from 0 to {MAX_DRAIN_SECONDS:g}",
        )
    return seconds


_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no", ""})


def _switch(env: Mapping[str, str], name: str) -> bool:
    text = env.get(name, "")
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingsError(f"{name}={text!r}: use true or false (or 1/0, yes/no)")


def _token(token: str | None) -> str | None:
    # The token is never echoed: the message says what is wrong with it, not what it is.
    if token is not None and not utf8_encodable(token):
        raise SettingsError("MCP_BEARER_TOKEN is not valid UTF-8; no client could send it")
    # ASCII whitespace only: HTTP trims a space or a tab around a header value, and a line
    # break cannot be sent at all; U+00A0 or U+0085 can, as UTF-8, and are kept.
    if token is not None and token != token.strip(" \t\r\n\v\f"):
        raise SettingsError("MCP_BEARER_TOKEN has whitespace around it; no client could send it")
    if token is not None and any(ord(char) < 0x20 or ord(char) == 0x7F for char in token):
        raise SettingsError("MCP_BEARER_TOKEN holds a control character; no client could send it")
    return token


def networks(text: str, *, name: str = "trusted proxies") -> tuple[IpNetwork, ...]:
    """Comma-separated addresses or CIDR networks."""
    return tuple(_network(item, name) for item in _names(text))


def _network(item: str, name: str) -> IpNetwork:
    try:
        return ipaddress.ip_network(item, strict=False)
    except ValueError as error:
        raise SettingsError(
            f"{name}: {error}", variable=name, value=item, problem="not an IP address or network"
        ) from None


def _names(text: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in text.split(",") if item.strip())
