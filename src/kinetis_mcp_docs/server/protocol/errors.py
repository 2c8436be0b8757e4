"""JSON-RPC error codes and the one exception that carries them to the wire."""

from __future__ import annotations

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# MCP's code for a resource that does not exist.
RESOURCE_NOT_FOUND = -32002


class RpcError(Exception):
    """An error answer: `code`, a message fit for the wire, and optional `data`."""

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_wire(self) -> dict[str, object]:
        error: dict[str, object] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error
