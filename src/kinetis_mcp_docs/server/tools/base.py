"""What a tool is: its definition, its typed arguments and the code that runs it, in one object.

A `Tool` publishes the definition `tools/list` carries and runs a call: it reads its
arguments from the same schema dicts it publishes (so the two cannot drift apart), as
typed values, before any page is read, then runs. A `Toolset` is the tools one server
offers: it resolves a tool's name once and says what an unknown name is.

The server validates arguments itself rather than trusting the client to have done it.
Each kind of argument (`Text`, `Integer`) checks a value against its schema and returns it
typed; a value outside the schema is `InvalidArguments`.
"""

from __future__ import annotations

from ..core.exceptions import InvalidArguments

TYPE_CHECKING = False  # `typing` itself costs start-up time; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    Arguments = dict[str, object]
    Result = dict[str, object]


class Argument:
    """One member of a tool's input schema: its name and the schema `tools/list` shows."""

    __slots__ = ("name", "schema")

    def __init__(self, name: str, schema: dict[str, object]) -> None:
        self.name = name
        self.schema = schema

    def problem(self, value: object) -> str | None:
        """What is wrong with `value` under this schema, or None."""
        raise NotImplementedError

    def present(self, tool: str, arguments: Arguments) -> bool:
        """Whether the call carries this argument; a carried value is checked first."""
        if self.name not in arguments:
            return False
        problem = self.problem(arguments[self.name])
        if problem:
            raise InvalidArguments(f'Invalid arguments for {tool}: "{self.name}" {problem}.')
        return True


class Text(Argument):
    """A string argument; `minLength`/`maxLength` count code points, as JSON Schema does."""

    __slots__ = ()

    def problem(self, value: object) -> str | None:
        if not isinstance(value, str):
            return "must be a string"
        low, high = self.schema.get("minLength"), self.schema.get("maxLength")
        # len() counts code points, as JSON Schema's minLength/maxLength do.
        if isinstance(low, int) and len(value) < low:
            return "must not be empty" if low == 1 else f"must have at least {low} characters"
        if isinstance(high, int) and len(value) > high:
            return f"must have at most {high} characters"
        return None

    def take(self, tool: str, arguments: Arguments) -> str:
        """The value of a required string argument; `InvalidArguments` when missing or wrong."""
        value = self.optional(tool, arguments)
        if value is None:
            raise InvalidArguments(f'Invalid arguments for {tool}: "{self.name}" is required.')
        return value

    def optional(self, tool: str, arguments: Arguments) -> str | None:
        """The value, or None when the call does not carry it."""
        if not self.present(tool, arguments):
            return None
        value = arguments[self.name]
        assert isinstance(value, str)  # noqa: S101 - problem() has just checked it
        return value


class Integer(Argument):
    """An integer argument with a `default` and an optional `minimum`/`maximum`.

    Integers are JSON integer literals: `true` is a bool and `1.0` a float in Python.
    """

    __slots__ = ()

    def problem(self, value: object) -> str | None:
        if not isinstance(value, int) or isinstance(value, bool):
            return "must be an integer"
        low, high = self.schema.get("minimum"), self.schema.get("maximum")
        if (isinstance(low, int) and value < low) or (isinstance(high, int) and value > high):
            bounds = f"from {low} to {high}" if isinstance(high, int) else f"of at least {low}"
            return f"must be an integer {bounds}"
        return None

    def take(self, tool: str, arguments: Arguments) -> int:
        """The value, or the schema's default when the call does not carry it."""
        value = arguments[self.name] if self.present(tool, arguments) else self.schema["default"]
        assert isinstance(value, int)  # noqa: S101 - checked, or the schema's own default
        return value


def input_schema(
    arguments: Iterable[Argument], required: Iterable[str], *, closed: bool
) -> dict[str, object]:
    """The `inputSchema` of a tool taking `arguments`."""
    schema: dict[str, object] = {
        "type": "object",
        "properties": {argument.name: argument.schema for argument in arguments},
        "required": list(required),
    }
    if closed:
        schema["additionalProperties"] = False
    return schema


def check_closed(
    tool: str, arguments: Arguments, accepted: Iterable[Argument], required: Iterable[str]
) -> None:
    """Refuse a member the closed schema does not name, then a missing required one."""
    names = {argument.name for argument in accepted}
    for key in arguments:
        if key not in names:
            raise InvalidArguments(f'Invalid arguments for {tool}: unknown argument "{key}".')
    for key in required:
        if key not in arguments:
            raise InvalidArguments(f'Invalid arguments for {tool}: "{key}" is required.')


class Tool:
    """One tool: the definition `tools/list` shows, and `call`, which reads its typed
    arguments from that definition's schema before it does anything, then runs."""

    __slots__ = ("definition", "name")

    def __init__(self, definition: dict[str, object]) -> None:
        self.definition = definition
        self.name = str(definition["name"])

    def call(self, arguments: Arguments) -> Result:
        """The `tools/call` result; `InvalidArguments` for arguments outside the schema."""
        raise NotImplementedError


class Toolset:
    """The tools one server offers, in the order `tools/list` shows them."""

    __slots__ = ("_by_name", "_unknown", "tools")

    def __init__(self, tools: Iterable[Tool], unknown: Callable[[str], Result]) -> None:
        self.tools = tuple(tools)
        self._by_name = {tool.name: tool for tool in self.tools}
        self._unknown = unknown

    def definitions(self) -> list[dict[str, object]]:
        """Every tool's definition, as `tools/list` entries (copies: a caller may change them)."""
        return [dict(tool.definition) for tool in self.tools]

    def call(self, name: object, arguments: object = None) -> Result:
        """Run the tool `name`; a missing `arguments` is `{}`."""
        if not isinstance(name, str):
            raise InvalidArguments('"name" must be a string naming a tool.')
        tool = self._by_name.get(name)
        if tool is None:
            return self._unknown(name)
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise InvalidArguments(f"Invalid arguments for {name}: arguments must be an object.")
        return tool.call(arguments)


def refuse_unknown(name: str) -> Result:
    """An unknown tool name is `InvalidArguments` (-32602), as the stdio contract says."""
    raise InvalidArguments(f"Unknown tool: {name}")
