"""The ASGI application: `POST /api/mcp`, the probes, and the HTTP rules around them.

For every request to the route, in order:

1. a private route not yet enabled answers 404, whatever the method or the headers: a dark
   route must not be told from a path that does not exist;
2. the DNS-rebinding guard (421 / 403, on loopback connections only; a `Host` sent twice is
   421 on any connection);
3. the rate limit (429 with `Retry-After` and the `RateLimit-*` fields), keyed as `keys`
   says;
4. the bearer token, when one is set (401 with `WWW-Authenticate`, also for an
   `Authorization` sent twice); `OPTIONS` needs none, but its token becomes its key only
   if it is valid;
5. `OPTIONS` is 204 with `Allow: POST, OPTIONS`; any method but `POST` is 405;
6. a `Content-Encoding` other than `identity` (a compressed body) is 415 with
   `Accept-Encoding: identity`, as RFC 9110 (section 15.5.16) asks, a
   `Transfer-Encoding` other than `chunked` alone (`gzip, chunked`) is 501, as RFC 9112
   (section 6.1) asks, and a `Content-Type` other than JSON is 415, all before the body
   is read: the route reads JSON as sent and decodes no coding but chunked (which the
   server undoes), and a body it would refuse is not worth waiting for;
7. a body over 2 MiB is 413, refused by its `Content-Length` or as soon as the bytes
   received pass the cap, never buffered beyond it;
8. a body the worker's budget for bodies held at once has no room for is 503 with
   `Retry-After`, before it is read (see `body_budget`);
9. JSON-RPC: the envelope as `envelope` reads it, then the method, one of
   `methods.RouteMethods`. A method that reads pages runs on a worker thread.

`/healthz` and `/readyz` (see `probes`) answer in every mode, with no token and no limit:
they carry no documentation. `/metrics` answers only when metrics are on (see `metrics`).
Any other path is 404. Every refusal outside JSON-RPC is a small JSON body
`{"error": "..."}`, except the guard's, which answer as the MCP SDK does.

Every request is answered by `_answer`, which returns what to send rather than sending
it, so that the access log and the metrics (`_observed`) wrap it without a cost to a route
that has neither: such a route sends the answer as it comes.
"""

from __future__ import annotations

import asyncio
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from ..application import DocsApplication
from ..protocol.errors import INTERNAL_ERROR, RpcError
from ..protocol.jsonrpc import MAX_MESSAGE_BYTES
from .answers import (
    EMPTY,
    JSON,
    NO_STORE,
    NOT_FOUND,
    NOT_GET,
    Answer,
    length,
    refusal,
    text_answer,
)
from .envelope import (
    Call,
    Reply,
    called_tool,
    error_reply,
    read_call,
    result_body,
    version_refusal,
)
from .headers import RequestHeaders
from .lifecycle import Lifecycle
from .limits import access
from .limits.body_budget import RETRY_AFTER_SECONDS, BodyBudget
from .limits.guard import RebindingGuard
from .limits.keys import AddressKeys, token_key
from .limits.ratelimit import RateLimit
from .methods import Fixed, route_methods
from .observe.access_log import AccessLog, Note
from .probes import HEALTH_PATH, HEALTHY, PROBE_PATHS, probe_answer
from .settings import Settings

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .observe.metrics import RouteMetrics

ROUTE = "/api/mcp"
METRICS_PATH = "/metrics"
_METRICS_RAW = METRICS_PATH.encode("ascii")
MAX_BODY_BYTES = MAX_MESSAGE_BYTES  # the one message limit of both transports: 2 MiB
_MAX_BODY_DIGITS = len(str(MAX_BODY_BYTES))  # a shorter Content-Length cannot pass it
MAX_THREADS = 32
# What a client that left before its answer is logged and counted under (nginx's code).
CLIENT_GONE = 499

Scope = dict[str, Any]
Receive = Any
Send = Any

_ALLOW = (b"allow", b"POST, OPTIONS")
# While draining, each connection closes after its answer: as the load balancer takes this
# replica out, none is left for it to send a request on when the server stops.
_CLOSE = (b"connection", b"close")
_NO_REPEATS: frozenset[str] = frozenset()
# Peer addresses whose rate-limit key is remembered: a proxy, or a few direct clients.
_REMEMBERED_PEERS = 1024

OPTIONS_ANSWER: Answer = (204, b"", [NO_STORE, _ALLOW])
NOT_ALLOWED = refusal(405, "Method not allowed", [_ALLOW])
TOO_LARGE = refusal(413, "Request body too large")
NOT_JSON = refusal(415, "Content-Type must be application/json")
# RFC 9110, section 12.5.3: a 415 for a content coding says which ones the server takes.
_ACCEPT_IDENTITY = (b"accept-encoding", b"identity")
NOT_IDENTITY = refusal(415, "Content-Encoding is not supported", [_ACCEPT_IDENTITY])
NOT_CHUNKED = refusal(501, "Transfer-Encoding other than chunked is not supported")
BODIES_FULL = refusal(
    503, "Too many request bodies in flight", [(b"retry-after", b"%d" % RETRY_AFTER_SECONDS)]
)
BAD_HOST = text_answer(421, b"Invalid Host header")
BAD_ORIGIN = text_answer(403, b"Invalid Origin header")
_CHALLENGE = (b"www-authenticate", access.CHALLENGE.encode("ascii"))
UNAUTHORIZED = {
    reason: refusal(401, reason, [_CHALLENGE])
    for reason in (access.MISSING, access.WRONG, access.REPEATED)
}
_LIMITED_BODY = b'{"error":"Rate limit exceeded"}'


class McpRoute:
    """The route as an ASGI 3 application over one `DocsApplication`."""

    def __init__(
        self,
        settings: Settings,
        application: DocsApplication | None = None,
        *,
        metrics: RouteMetrics | None = None,
        access_log: AccessLog | None = None,
    ) -> None:
        """`metrics` and `access_log`, when given, observe every request; `metrics` also
        answers `/metrics`. `create_app` makes them from the settings."""
        self.settings = settings
        observe = None if metrics is None else metrics.page_fetched
        self.application = application or DocsApplication(
            pages_root=settings.pages_dir, ranking=settings.ranking, fetch_observer=observe
        )
        self._methods = route_methods(self.application)
        self._guard = RebindingGuard(settings.allowed_hosts, settings.allowed_origins)
        self._guard_answers = self._guard.answers
        self._dark = settings.dark
        self._limit = RateLimit(
            settings.rate_limit,
            settings.rate_limit_storage,
            on_storage_error=None if metrics is None else metrics.storage_failed,
        )
        # The in-memory count is called as it is: no coroutine to make and await.
        self._memory = self._limit.memory
        self._per_minute = b"%d" % settings.rate_limit
        self._addresses = AddressKeys(settings.trusted_proxies)
        self._peer_keys: dict[str | None, str] = {}
        # What a client must send, as bytes (a token that is not UTF-8 fails here, at start).
        self._token = None if settings.token is None else settings.token.encode("utf-8")
        self._token_key = None if self._token is None else token_key(self._token)
        self._threads = ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="kinetis-docs call")
        self._bodies = BodyBudget(settings.body_memory)
        # A dark route serves no page: it has no index to build, and is ready once started.
        self.lifecycle = Lifecycle(
            None if settings.dark else self.application.site_pages(), self._limit, metrics
        )
        self._metrics = metrics
        self._log = access_log
        self._observed_by = metrics is not None or access_log is not None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            if self._observed_by:
                await self._observed(scope, receive, send)
                return
            answer = await self._answer(scope, receive, None)
            if answer is not None:
                status, body, headers = answer
                if self.lifecycle.draining:
                    headers = [*headers, _CLOSE]  # see `_CLOSE`
                await send({"type": "http.response.start", "status": status, "headers": headers})
                await send({"type": "http.response.body", "body": body})
        elif kind == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                # The index is built on a thread of its own, so that the probes answer (not
                # ready yet) while it is: a load balancer sees a replica starting, not one
                # that does not answer.
                self.lifecycle.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def begin_drain(self, seconds: float) -> None:
        """SIGTERM arrived: say not ready from now on, and close each connection after its
        answer, for the `seconds` until the server stops accepting."""
        self.lifecycle.begin_drain(seconds)

    def close(self) -> None:
        self.lifecycle.stop()
        if self._log is not None:
            self._log.close()
        if self._metrics is not None:
            self._metrics.close()
        self._threads.shutdown(wait=False, cancel_futures=True)
        self.application.close()

    async def _observed(self, scope: Scope, receive: Receive, send: Send) -> None:
        """`_answer`, timed, counted and logged."""
        began = time.perf_counter()
        note = Note()
        log = self._log
        request_id = b""
        if log is not None:
            request_id = log.request_id(scope["headers"])
        answer = await self._answer(scope, receive, note)
        if answer is not None:
            status, body, headers = answer
            if log is not None:
                headers = [*headers, (b"x-request-id", request_id)]
            if self.lifecycle.draining:
                headers = [*headers, _CLOSE]  # see `_CLOSE`
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        else:
            status = CLIENT_GONE
        elapsed = time.perf_counter() - began
        if self._metrics is not None and note.route:
            # Only the route's own requests: probes every second would swamp its figures.
            self._metrics.observe(note, status, elapsed)
        if log is not None:
            log.write(scope, request_id, note, status, elapsed)

    async def _answer(self, scope: Scope, receive: Receive, note: Note | None) -> Answer | None:
        """What to answer the request `scope` is; None when the client left before its body
        was whole (there is no one to answer). `note`, when given, gets the JSON-RPC method,
        the tool and the rate-limit key, for the access log and the metrics.

        The checks run in the order the module's docstring gives, a phase each: the path,
        the dark route, the rebinding guard, the token and the rate limit's key, the limit,
        what the head alone refuses, the body's room in the budget, then the call.
        """
        path = scope["path"]
        if path != ROUTE:
            trimmed = path.rstrip("/")
            if trimmed != ROUTE:  # `/api/mcp/` is the route too
                return await self._elsewhere(trimmed or "/", scope)
        if note is not None:
            note.route = True
        if self._dark:
            return NOT_FOUND
        raw = scope["headers"]
        values = dict(raw)  # in C; `RequestHeaders` joins a field sent on several lines
        repeated = _NO_REPEATS
        if len(values) < len(raw):
            headers = RequestHeaders(raw)
            values, repeated = headers.values, headers.repeated
        refused = self._rebinding(scope, values, repeated)
        if refused is not None:
            return refused
        presented, denied = self._credentials(values, repeated)
        key = self._key(scope, values, presented, denied)
        if note is not None:
            note.key = key
        memory = self._memory
        wait = memory.hit(key) if memory is not None else await self._limit.retry_after(key)
        if wait:
            if note is not None:
                note.limited = True
            return self._limited(wait)
        refused = _refused_by_head(scope["method"], values, repeated, denied)
        if refused is not None:
            return refused
        size = _body_size(values)
        bodies = self._bodies
        if not bodies.reserve(size):
            return BODIES_FULL
        try:
            return await self._called(receive, values, repeated, note)
        finally:
            bodies.release(size)

    def _rebinding(
        self, scope: Scope, values: dict[bytes, bytes], repeated: frozenset[str]
    ) -> Answer | None:
        """The DNS-rebinding guard's refusal (421, 403), or None."""
        server = scope.get("server")
        local = server[0] if server else None
        host = values.get(b"host")
        # A request without `Origin` whose `Host` this connection's address has seen is
        # answered from the guard's memory (a lookup); any other goes through it whole.
        status = None
        if not repeated and b"origin" not in values:
            status = self._guard_answers.get((local, host))
        if status is None:
            origin = values.get(b"origin")
            status = self._guard.refusal(
                local,
                None if host is None else host.decode("latin-1"),
                None if origin is None else origin.decode("latin-1"),
                repeated,
            )
        if status:
            return BAD_HOST if status == 421 else BAD_ORIGIN
        return None

    def _credentials(
        self, values: dict[bytes, bytes], repeated: frozenset[str]
    ) -> tuple[bytes | None, str | None]:
        """The token presented, and why it is refused (None: it is not)."""
        authorization = values.get(b"authorization")
        if self._token is None and authorization is None:
            return None, None  # the common case of a public route: nothing to check
        presented = access.presented_token(
            None if authorization is None else authorization.decode("latin-1")
        )
        denied = access.refusal(self._token, presented, repeated="authorization" in repeated)
        return presented, denied

    def _key(
        self,
        scope: Scope,
        values: dict[bytes, bytes],
        presented: bytes | None,
        denied: str | None,
    ) -> str:
        """The rate-limit key: the token once verified, else the client's address."""
        if presented is not None and denied is None and self._token_key is not None:
            return self._token_key  # verified: a made-up token is never a key, nor a budget
        client = scope.get("client")
        peer = client[0] if client else None
        forwarded = values.get(b"x-forwarded-for")
        if forwarded is not None:
            return self._addresses.key(peer, forwarded.decode("latin-1"))
        # A peer's own key, once worked out, is a lookup (peers are few; bounded).
        known = self._peer_keys.get(peer)
        if known is None:
            known = self._addresses.key(peer, None)
            if len(self._peer_keys) < _REMEMBERED_PEERS:
                self._peer_keys[peer] = known
        return known

    async def _called(
        self,
        receive: Receive,
        values: dict[bytes, bytes],
        repeated: frozenset[str],
        note: Note | None,
    ) -> Answer | None:
        """The answer to a request admitted this far: its body read, the JSON-RPC envelope
        checked, its method run."""
        message = await receive()
        if message["type"] != "http.request":
            return None  # the client went away before its body was whole: no one to answer
        body = message.get("body", b"")
        if message.get("more_body", False):
            body = await _rest_of_body(body, receive)
            if body is _GONE:
                return None
        if body is None or len(body) > MAX_BODY_BYTES:
            return TOO_LARGE
        try:
            call = read_call(body, values, repeated, self._methods)
            if type(call) is tuple:
                return await self._run(call, note)
            reply = cast("Reply", call)  # not a Call: `type` narrows no further
            if note is not None:
                note.method = reply.name
                note.tool = reply.tool
        except Exception:  # noqa: BLE001 - a bug costs one answer, never a trace on the wire
            traceback.print_exc(file=sys.stderr)
            reply = error_reply(None, RpcError(INTERNAL_ERROR, "Internal error"))
        if not reply.body:
            return reply.status, b"", [NO_STORE, EMPTY]
        return reply.status, reply.body, [NO_STORE, JSON, length(reply.body)]

    async def _run(self, call: Call, note: Note | None) -> Answer:
        """The answer of the method `call` names: a fixed result as it is, a method that
        reads pages on a worker thread, any other here; an error as its code."""
        run, request_id, params, name = call
        if note is not None:
            note.method = name
            note.tool = called_tool(call)
        try:
            if type(run) is Fixed:
                result: object = run.result
            elif run.blocking:
                loop = asyncio.get_running_loop()
                result = await loop.run_in_executor(self._threads, self._methods.run, run, params)
            else:
                result = self._methods.run(run, params)
        except RpcError as error:
            refused = error_reply(request_id, error)
            return refused.status, refused.body, [NO_STORE, JSON, length(refused.body)]
        answer = result_body(request_id, result)
        return 200, answer, [NO_STORE, JSON, length(answer)]

    async def _elsewhere(self, trimmed: str, scope: Scope) -> Answer:
        """A request for a path other than the route's (`trimmed` of trailing slashes): a
        probe, the metrics, or 404."""
        if trimmed in PROBE_PATHS:
            if scope["method"] not in ("GET", "HEAD"):
                return NOT_GET
            if trimmed == HEALTH_PATH:
                return HEALTHY
            self._limit.refresh_in_background()
            return probe_answer(self.lifecycle.readiness())
        # Exactly, as sent: a proxy denying `= /metrics` must not be passed by `/metrics/`,
        # nor by `/%6detrics`, which the server decodes to `path` and a proxy matching the
        # raw path does not.
        if (
            scope["path"] == METRICS_PATH
            and scope.get("raw_path", _METRICS_RAW) == _METRICS_RAW
            and self._metrics is not None
        ):
            return await self._metrics_answer(scope)
        return NOT_FOUND

    async def _metrics_answer(self, scope: Scope) -> Answer:
        assert self._metrics is not None  # noqa: S101 - only called with metrics on
        headers = RequestHeaders(scope["headers"])
        server = scope.get("server")
        # The guard holds here as on the route: a page a browser was made to load from a
        # rebinding name learns nothing of this server.
        status = self._guard.refusal(
            server[0] if server else None,
            headers.get("host"),
            headers.get("origin"),
            headers.repeated,
        )
        if status:
            return BAD_HOST if status == 421 else BAD_ORIGIN
        if scope["method"] not in ("GET", "HEAD"):
            return NOT_GET
        self._metrics.fold()  # this worker's own figures, up to this request
        loop = asyncio.get_running_loop()
        # Collecting reads every worker's files: off the event loop.
        body, content_type = await loop.run_in_executor(self._threads, self._metrics.exposition)
        return 200, body, [NO_STORE, (b"content-type", content_type), length(body)]

    def _limited(self, wait: int) -> Answer:
        """429, with `Retry-After` and the IETF draft's `RateLimit-*` fields: the limit, no
        request left, and the seconds until there is room again."""
        seconds = b"%d" % wait
        return (
            429,
            _LIMITED_BODY,
            [
                NO_STORE,
                (b"retry-after", seconds),
                (b"ratelimit-limit", self._per_minute),
                (b"ratelimit-remaining", b"0"),
                (b"ratelimit-reset", seconds),
                JSON,
                length(_LIMITED_BODY),
            ],
        )


def _refused_by_head(
    method: str, values: dict[bytes, bytes], repeated: frozenset[str], denied: str | None
) -> Answer | None:
    """What the head alone refuses, before the body is read: a token denied, a method but
    `POST`, a coding, a transfer coding or a type the route does not read, a declared body
    over the cap, a protocol version the route does not speak. None: read the body."""
    if denied is not None and method != "OPTIONS":
        return UNAUTHORIZED[denied]
    if method != "POST":
        return OPTIONS_ANSWER if method == "OPTIONS" else NOT_ALLOWED
    coding = values.get(b"content-encoding")
    if coding is not None and not _identity(coding):
        return NOT_IDENTITY
    transfer = values.get(b"transfer-encoding")
    if transfer is not None and transfer.strip(b" \t").lower() != b"chunked":
        return NOT_CHUNKED  # llhttp undoes `chunked` alone, and passes the rest on as is
    content_type = values.get(b"content-type", b"")
    if (
        content_type != b"application/json"
        and content_type.split(b";", 1)[0].strip().lower() != b"application/json"
    ):
        return NOT_JSON
    declared = values.get(b"content-length")
    if (
        declared is not None
        and len(declared) >= _MAX_BODY_DIGITS
        and declared.strip().isdigit()
        and int(declared) > MAX_BODY_BYTES
    ):
        return TOO_LARGE
    if b"mcp-protocol-version" in values:
        refused = version_refusal(values, repeated)
        if refused is not None:
            return refused.status, refused.body, [NO_STORE, JSON, length(refused.body)]
    return None


def _body_size(values: dict[bytes, bytes]) -> int:
    """What a body counts against the budget: its declared length, or the cap for a
    chunked one, whose length is not known before it is read."""
    if b"transfer-encoding" in values:
        return MAX_BODY_BYTES
    declared = values.get(b"content-length")
    return int(declared) if declared is not None and declared.isdigit() else 0


def _identity(coding: bytes) -> bool:
    """Whether a `Content-Encoding` value (several lines joined with commas) names no
    coding but `identity`: empty, or `identity` in any case, as often as it likes."""
    return all(name.strip(b" \t").lower() in (b"", b"identity") for name in coding.split(b","))


# What `_rest_of_body` returns for a body that never came whole: nothing to answer.
_GONE = b"<gone>"


async def _rest_of_body(first: bytes, receive: Receive) -> bytes | None:
    """A body that comes in more than one message, after its `first` part: None as soon
    as it is known to pass `MAX_BODY_BYTES` (never buffered beyond), or `_GONE` when the
    client left before sending all of it."""
    chunks = [first]
    size = len(first)
    while True:
        if size > MAX_BODY_BYTES:
            return None
        message = await receive()
        if message["type"] != "http.request":
            return _GONE  # a part of a body is no request: the client cannot be answered
        chunk = message.get("body", b"")
        size += len(chunk)
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks) if size <= MAX_BODY_BYTES else None
