"""The one table that turns the core's exceptions into JSON-RPC errors, for every wire.

Both servers answer through it, so an exception means the same code on stdio and over HTTP,
and a host embedding `DocsApplication` can answer through it too. The table writes nothing
anywhere itself: the reason behind an unreadable page goes to the `kinetis_mcp_docs.server`
logger (`reasons.py`), which a host configures as it likes, and which the two servers send
to their stderr. So does an `ImportError`: a module loaded on first use that cannot be
loaded means the server's files went away while it ran (an uninstall, a deleted
directory), not a bug, so it is one line there rather than a traceback.
"""

from __future__ import annotations

from .core import reasons
from .core.exceptions import InvalidArguments, PageUnavailable, RejectedUrl, UnknownResource
from .protocol.dispatch import ErrorTable
from .protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError

__all__ = ["ERRORS"]


def _invalid(message: str) -> RpcError:
    return RpcError(INVALID_PARAMS, f"Invalid params: {message}")


def _unreadable(error: PageUnavailable) -> RpcError:
    # The operator gets the URL and the real reason, through logging; the wire gets a
    # stable sentence.
    reasons.logger().warning("could not read %s: %s", error.url, error.reason)
    return RpcError(INTERNAL_ERROR, str(error))


MISSING_FILES = "Internal error: this server's installed files are missing or incomplete."
"""The wire's sentence when a module the server loads on first use cannot be loaded."""


def _missing(error: ImportError) -> RpcError:
    # Not a bug but a server whose files went away while it ran: an uninstall, or its
    # directory deleted, and a module it imports when first needed is gone. The reason is
    # one line for the operator; a traceback would say no more.
    reasons.logger().error(
        "could not load part of this server (%s): its installed files are missing or "
        "incomplete, removed or changed while it ran; start a new session, and run setup "
        "again unless it was uninstalled",
        error,
    )
    return RpcError(INTERNAL_ERROR, MISSING_FILES)


def _unknown(error: UnknownResource) -> RpcError:
    return RpcError(RESOURCE_NOT_FOUND, str(error), {"uri": error.uri})


# Every concrete `DocsError` class, and the code it is answered with on every wire.
ERRORS = ErrorTable(
    {
        InvalidArguments: lambda error: _invalid(str(error)),
        RejectedUrl: lambda error: RpcError(INVALID_PARAMS, str(error)),
        UnknownResource: _unknown,
        PageUnavailable: _unreadable,
        ImportError: _missing,
    }
)
