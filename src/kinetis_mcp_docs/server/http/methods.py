"""The route's five methods over one `DocsApplication`, each a method of `RouteMethods`.

`initialize` and `tools/call` run for each request. `ping`, `server/discover` and
`tools/list` have results that never change: each is worked out and encoded once, at
start, and the route answers with the bytes (`Fixed`) without calling anything. Whatever
a method raises becomes a code through the application's one error table.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import ERRORS
from ..protocol.dispatch import Method, MethodTable
from .envelope import NEWEST_VERSION, SUPPORTED_VERSIONS, Encoded

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..application import DocsApplication

SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"
TTL_MS = 60_000

Params = dict[str, object]


class Fixed(Method):
    """A method whose result never changes: `result`, made once by calling `method`, is
    what the route answers with, without calling anything."""

    __slots__ = ("result",)

    def __init__(self, method: Callable[[Params], Encoded]) -> None:
        result = method({})
        super().__init__(lambda _params: result)
        self.result = result


class RouteMethods:
    """What `initialize`, `ping`, `server/discover`, `tools/list` and `tools/call` answer
    over `application`: its catalogue-wide tools (`search_docs`, `fetch_page`)."""

    def __init__(self, application: DocsApplication) -> None:
        self._tools = application.site_tools()
        self._info = application.server_info
        self._meta = {SERVER_INFO_META_KEY: self._info}
        self._capabilities = {"tools": {"listChanged": False}}
        # One document for each version a client may ask for, encoded once.
        self._initialized = {
            version: Encoded(
                {
                    "resultType": "complete",
                    "protocolVersion": version,
                    "capabilities": self._capabilities,
                    "serverInfo": self._info,
                }
            )
            for version in SUPPORTED_VERSIONS
        }

    def table(self) -> MethodTable:
        """The methods by name, under the application's error table."""
        return MethodTable(
            {
                "initialize": Method(self.initialize),
                "ping": Fixed(self.ping),
                "server/discover": Fixed(self.discover),
                "tools/list": Fixed(self.list_tools),
                "tools/call": Method(self.call_tool, blocking=True),
            },
            ERRORS,
        )

    def initialize(self, params: Params) -> object:
        """The client's version when the route speaks it, else the newest it does."""
        asked = params.get("protocolVersion")
        newest = self._initialized[NEWEST_VERSION]
        return self._initialized.get(asked, newest) if isinstance(asked, str) else newest

    def ping(self, _params: Params) -> Encoded:
        return Encoded({})

    def discover(self, _params: Params) -> Encoded:
        return Encoded(
            {
                "_meta": self._meta,
                "resultType": "complete",
                "supportedVersions": list(SUPPORTED_VERSIONS),
                "capabilities": self._capabilities,
                "ttlMs": TTL_MS,
                "cacheScope": "public",
            }
        )

    def list_tools(self, _params: Params) -> Encoded:
        return Encoded(
            {
                "_meta": self._meta,
                "resultType": "complete",
                "tools": self._tools.definitions(),
                "ttlMs": TTL_MS,
                "cacheScope": "public",
            }
        )

    def call_tool(self, params: Params) -> object:
        """A tool's result: on a worker thread, since a tool reads pages."""
        called = self._tools.call(params.get("name"), params.get("arguments"))
        return {"resultType": "complete", **called}


def route_methods(application: DocsApplication) -> MethodTable:
    """The route's five methods over `application`, under the application's error table."""
    return RouteMethods(application).table()
