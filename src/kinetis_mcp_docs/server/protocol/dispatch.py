"""Methods and the one table that turns what they raise into error codes, for any wire.

A `MethodTable` holds the methods a server answers and the `ErrorTable` that turns
whatever they raise into an `RpcError`; every transport runs methods through it, so an
exception means the same code on every wire. An exception the table does not name is a
bug: its traceback goes to stderr and the wire gets `-32603` `Internal error`.

`traceback` is imported with the first bug: it is not needed to answer `initialize`, and
costs start-up time.
"""

from __future__ import annotations

import sys

from .errors import INTERNAL_ERROR, METHOD_NOT_FOUND, RpcError

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Handler = Callable[[dict[str, object]], object]
    Translator = Callable[[Any], RpcError]


class Method:
    """One entry of a method table."""

    __slots__ = ("blocking", "handler")

    def __init__(self, handler: Handler, *, blocking: bool = False) -> None:
        self.handler = handler
        self.blocking = blocking


class ErrorTable:
    """Exception classes, each with the `RpcError` it becomes.

    The most specific class wins: an exception is looked up along its class's MRO.
    """

    __slots__ = ("entries",)

    def __init__(self, entries: dict[type[Exception], Translator]) -> None:
        self.entries = entries

    def rpc_error(self, error: Exception) -> RpcError:
        """The error answer for `error`; an unknown exception is logged as a bug."""
        if isinstance(error, RpcError):
            return error
        for kind in type(error).__mro__:
            translate = self.entries.get(kind)
            if translate is not None:
                return translate(error)
        import traceback  # noqa: PLC0415 - see the module's docstring

        traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
        return RpcError(INTERNAL_ERROR, "Internal error")


class MethodTable:
    """The methods a server answers, by name, and the table their exceptions go through."""

    __slots__ = ("errors", "methods")

    def __init__(self, methods: dict[str, Method], errors: ErrorTable) -> None:
        self.methods = methods
        self.errors = errors

    def __call__(self, name: str) -> Method | None:
        return self.methods.get(name)

    def resolve(self, name: str) -> Method:
        """The method called `name`; `RpcError` -32601 when the table has none."""
        method = self.methods.get(name)
        if method is None:
            raise RpcError(METHOD_NOT_FOUND, f"Method not found: {name}")
        return method

    def run(self, method: Method, params: dict[str, object]) -> object:
        """The method's result; anything it raises comes out as an `RpcError`."""
        try:
            return method.handler(params)
        except Exception as error:  # noqa: BLE001 - a bug must cost one answer, not the server
            raise self.errors.rpc_error(error) from None
