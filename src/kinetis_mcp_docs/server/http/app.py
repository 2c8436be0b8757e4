"""The ASGI application: `POST /api/mcp`, and the HTTP rules around it.

For every request to the route, in order:

1. a private route not yet enabled answers 404, whatever the method or the headers: a dark
   route must not be told from a path that does not exist;
2. the DNS-rebinding guard (421 / 403, on loopback connections only; a `Host` sent twice is
   421 on any connection);
3. the rate limit (429 with `Retry-After`), keyed as `keys` says;
4. the bearer token, when one is set (401 with `WWW-Authenticate`, also for an
   `Authorization` sent twice); `OPTIONS` needs none, but its token becomes its key only
   if it is valid;
5. `OPTIONS` is 204 with `Allow: POST, OPTIONS`; any method but `POST` is 405;
6. a body over 2 MiB is 413, refused by its `Content-Length` or as soon as the bytes
   received pass the cap, never buffered beyond it; a `Content-Type` other than JSON is 415;
7. JSON-RPC, as `rpc` says. A method that reads pages runs on a worker thread.

Any other path is 404. Every refusal outside JSON-RPC is a small JSON body
`{"error": "..."}`, except the guard's, which answer as the MCP SDK does.
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..application import DocsApplication
from ..protocol.errors import INTERNAL_ERROR, RpcError
from ..protocol.jsonrpc import MAX_MESSAGE_BYTES
from . import access
from .guard import RebindingGuard
from .headers import RequestHeaders
from .keys import AddressKeys, token_key
from .ratelimit import RateLimit
from .rpc import Call, Reply, error_reply, read_call, result_reply, route_methods
from .settings import Settings

ROUTE = "/api/mcp"
MAX_BODY_BYTES = MAX_MESSAGE_BYTES  # the one message limit of both transports: 2 MiB
MAX_THREADS = 32

Scope = dict[str, Any]
Receive = Any
Send = Any

_JSON = (b"content-type", b"application/json")
_NO_STORE = (b"cache-control", b"no-store")
_ALLOW = (b"allow", b"POST, OPTIONS")


def _refusal_body(message: str) -> bytes:
    return b'{"error":"' + message.encode("ascii") + b'"}'


class McpRoute:
    """The route as an ASGI 3 application over one `DocsApplication`."""

    def __init__(self, settings: Settings, application: DocsApplication | None = None) -> None:
        self.settings = settings
        self.application = application or DocsApplication(
            pages_root=settings.pages_dir, ranking=settings.ranking
        )
        self._methods = route_methods(self.application)
        self._guard = RebindingGuard(settings.allowed_hosts, settings.allowed_origins)
        self._limit = RateLimit(settings.rate_limit, settings.rate_limit_storage)
        self._addresses = AddressKeys(settings.trusted_proxies)
        # What a client must send, as bytes (a token that is not UTF-8 fails here, at start).
        self._token = None if settings.token is None else settings.token.encode("utf-8")
        self._token_key = None if self._token is None else token_key(self._token)
        self._threads = ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="kinetis-docs call")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self._http(scope, receive, send)
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)
        self.application.close()

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"].rstrip("/") != ROUTE:
            await _respond(send, 404, _refusal_body("Not found"))
            return
        if self.settings.dark:
            await _respond(send, 404, _refusal_body("Not found"))
            return
        headers = RequestHeaders(scope["headers"])
        server = scope.get("server")
        status = self._guard.refusal(
            server[0] if server else None,
            headers.get("host"),
            headers.get("origin"),
            headers.repeated,
        )
        if status:
            text = b"Invalid Host header" if status == 421 else b"Invalid Origin header"
            await _respond(send, status, text, content_type=b"text/plain; charset=utf-8")
            return
        method = scope["method"]
        presented = access.presented_token(headers.get("authorization"))
        denied = access.refusal(
            self._token, presented, repeated="authorization" in headers.repeated
        )
        if presented is not None and denied is None and self._token_key is not None:
            key = self._token_key  # verified: a made-up token is never a key, nor a fresh budget
        else:
            client = scope.get("client")
            key = self._addresses.key(client[0] if client else None, headers.get("x-forwarded-for"))
        wait = await self._limit.retry_after(key)
        if wait:
            extra = [(b"retry-after", str(wait).encode("ascii"))]
            await _respond(send, 429, _refusal_body("Rate limit exceeded"), extra)
            return
        if denied is not None and method != "OPTIONS":
            challenge = [(b"www-authenticate", access.CHALLENGE.encode("ascii"))]
            await _respond(send, 401, _refusal_body(denied), challenge)
            return
        if method == "OPTIONS":
            await _respond(send, 204, b"", [_ALLOW], content_type=None)
            return
        if method != "POST":
            await _respond(send, 405, _refusal_body("Method not allowed"), [_ALLOW])
            return
        body = await _body(headers, receive)
        if body is _GONE:
            return  # the client went away (or took too long) before its body was whole
        if body is None:
            await _respond(send, 413, _refusal_body("Request body too large"))
            return
        content_type = headers.get("content-type", "")
        if content_type.split(";", 1)[0].strip().lower() != "application/json":
            await _respond(send, 415, _refusal_body("Content-Type must be application/json"))
            return
        reply = await self._answer(body, headers)
        await _respond(
            send, reply.status, reply.body, content_type=_JSON[1] if reply.body else None
        )

    async def _answer(self, body: bytes, headers: RequestHeaders) -> Reply:
        try:
            call = read_call(body, headers, self._methods)
            return await self._run(call) if isinstance(call, Call) else call
        except Exception:  # noqa: BLE001 - a bug costs one answer, never a trace on the wire
            traceback.print_exc(file=sys.stderr)
            return error_reply(None, RpcError(INTERNAL_ERROR, "Internal error"))

    async def _run(self, call: Call) -> Reply:
        try:
            if call.method.blocking:
                loop = asyncio.get_running_loop()
                result = await loop.run_in_executor(
                    self._threads, self._methods.run, call.method, call.params
                )
            else:
                result = self._methods.run(call.method, call.params)
        except RpcError as error:
            return error_reply(call.id, error)
        return result_reply(call.id, result)


# What `_body` returns for a body that never came whole: nothing to answer, nothing to run.
_GONE = b"<gone>"


async def _body(headers: RequestHeaders, receive: Receive) -> bytes | None:
    """The request body, None as soon as it is known to pass `MAX_BODY_BYTES`, or `_GONE`
    when the client left before sending all of it."""
    declared = headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > MAX_BODY_BYTES:
        return None
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return _GONE  # a part of a body is no request: the client cannot be answered
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def _respond(
    send: Send,
    status: int,
    body: bytes,
    extra: list[tuple[bytes, bytes]] | None = None,
    *,
    content_type: bytes | None = _JSON[1],
) -> None:
    headers = [_NO_STORE, *(extra or ())]
    if content_type is not None:
        headers.append((b"content-type", content_type))
    if status != 204:
        headers.append((b"content-length", str(len(body)).encode("ascii")))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
