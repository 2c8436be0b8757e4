"""The two tools' definitions, and the validation of their arguments against them.

The schemas are closed and the server validates them itself, before any fetch, rather
than trusting the client to have done it. One small validator reads the same schema
dicts that `tools/list` publishes, so the two cannot drift apart.
"""

from __future__ import annotations

from .lines import MAX_LINE_COUNT

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    from typing import Any

READ_DOC = "kinetis_read_doc"
SEARCH_DOC = "kinetis_search_doc"
MAX_QUERY_LENGTH = 256

_URI = {
    "type": "string",
    "minLength": 1,
    "description": "A catalogue page, e.g. kinetis://docs/agent-workflow (see resources/list).",
}
_START_LINE = {
    "type": "integer",
    "minimum": 1,
    "default": 1,
}
_ANNOTATIONS = {
    "readOnlyHint": True,
    "destructiveHint": False,
    "idempotentHint": True,
    "openWorldHint": True,
}

TOOLS: tuple[dict[str, object], ...] = (
    {
        "name": READ_DOC,
        "title": "Read a Kinetis docs page",
        "description": (
            "Read a window of lines of one Kinetis documentation page, fetched live. "
            "Returns at most lineCount lines (default and maximum 200) and at most 32 KiB, "
            "never splitting a line. Continue with startLine = endLine + 1 while hasMore is "
            "true. Refusals: resource_unknown (no such page), line_out_of_range."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "uri": _URI,
                "startLine": {**_START_LINE, "description": "First line to return, from 1."},
                "lineCount": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LINE_COUNT,
                    "default": MAX_LINE_COUNT,
                    "description": "Most lines to return, 1 to 200.",
                },
            },
            "required": ["uri"],
            "additionalProperties": False,
        },
        "annotations": {"title": "Read a Kinetis docs page", **_ANNOTATIONS},
    },
    {
        "name": SEARCH_DOC,
        "title": "Search a Kinetis docs page",
        "description": (
            "Find the lines of one Kinetis documentation page that contain a literal, "
            "case-sensitive string; then read around a match with kinetis_read_doc. "
            "At most 50 matches; when hasMore is true, continue with startLine = last "
            "match line + 1. Refusals: resource_unknown, line_out_of_range."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "uri": _URI,
                "query": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_QUERY_LENGTH,
                    "description": "Literal text to find (1 to 256 characters, no pattern syntax).",
                },
                "startLine": {**_START_LINE, "description": "First line to scan, from 1."},
            },
            "required": ["uri", "query"],
            "additionalProperties": False,
        },
        "annotations": {"title": "Search a Kinetis docs page", **_ANNOTATIONS},
    },
)

_BY_NAME = {str(tool["name"]): tool for tool in TOOLS}


class ArgumentError(ValueError):
    """Arguments outside a tool's schema; the message is fit for the wire."""


def validate_arguments(name: str, arguments: object) -> dict[str, object]:
    """The arguments with defaults filled in, or `ArgumentError` saying what is wrong."""
    tool = _BY_NAME.get(name)
    if tool is None:
        raise ArgumentError(f"Unknown tool: {name}")
    schema: dict[str, Any] = _input_schema(tool)
    if not isinstance(arguments, dict):
        raise ArgumentError(f"Invalid arguments for {name}: arguments must be an object.")
    properties: dict[str, dict[str, object]] = schema["properties"]
    for key in arguments:
        if key not in properties:
            raise ArgumentError(f'Invalid arguments for {name}: unknown argument "{key}".')
    for key in schema["required"]:
        if key not in arguments:
            raise ArgumentError(f'Invalid arguments for {name}: "{key}" is required.')
    checked: dict[str, object] = {}
    for key, rule in properties.items():
        if key in arguments:
            problem = _problem(arguments[key], rule)
            if problem:
                raise ArgumentError(f'Invalid arguments for {name}: "{key}" {problem}.')
            checked[key] = arguments[key]
        elif "default" in rule:
            checked[key] = rule["default"]
    return checked


def _input_schema(tool: dict[str, object]) -> dict[str, Any]:
    schema = tool["inputSchema"]
    assert isinstance(schema, dict)  # noqa: S101 - the tools above are written that way
    return schema


def _problem(value: object, rule: dict[str, object]) -> str | None:
    if rule["type"] == "string":
        if not isinstance(value, str):
            return "must be a string"
        low, high = rule.get("minLength"), rule.get("maxLength")
        # len() counts code points, as JSON Schema's minLength/maxLength do.
        if isinstance(low, int) and len(value) < low:
            return "must not be empty" if low == 1 else f"must have at least {low} characters"
        if isinstance(high, int) and len(value) > high:
            return f"must have at most {high} characters"
        return None
    # Integers are JSON integer literals: `true` is a bool and `1.0` a float in Python.
    if not isinstance(value, int) or isinstance(value, bool):
        return "must be an integer"
    low, high = rule.get("minimum"), rule.get("maximum")
    if (isinstance(low, int) and value < low) or (isinstance(high, int) and value > high):
        bounds = f"from {low} to {high}" if isinstance(high, int) else f"of at least {low}"
        return f"must be an integer {bounds}"
    return None
