"""What the route takes from uvicorn beyond its public API, named, so that a uvicorn release
that removes or changes one fails here with its name rather than in production.

The bounded protocol (`connection`) subclasses uvicorn's private httptools protocol and
reads its request cycle; the draining server (`drain`) subclasses `uvicorn.Server`. Each
name they use and do not define themselves is read from their source, and looked up in
the uvicorn installed: a method or property of its class, or an attribute its own code
assigns. pyproject.toml bounds uvicorn below the next release; raising that bound is a
one-line change once this module and the suite pass on it.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Iterator
from types import ModuleType

import pytest
import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

from kinetis_mcp_docs.server.http.uvicorn import connection, drain, serve, workers
from kinetis_mcp_docs.server.http.uvicorn.connection import BoundedHttpToolsProtocol
from kinetis_mcp_docs.server.http.uvicorn.drain import DrainingServer


def _tree(source: object) -> ast.AST:
    return ast.parse(textwrap.dedent(inspect.getsource(source)))  # type: ignore[arg-type]


def _assigned_on_self(cls: type) -> set[str]:
    """The attributes the code of `cls` (and of its bases from the same library) assigns."""
    library = cls.__module__.split(".")[0]
    names = set()
    for klass in cls.__mro__:
        if klass.__module__.split(".")[0] != library:
            continue
        for node in ast.walk(_tree(klass)):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "self"
                and isinstance(node.ctx, ast.Store)
            ):
                names.add(node.attr)
    return names


def _used_on_self(cls: type) -> set[str]:
    """The attributes the methods of `cls` read, call or assign on `self`."""
    return {
        node.attr
        for node in ast.walk(_tree(cls))
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    }


def _read_on(module: ModuleType, names: set[str]) -> Iterator[str]:
    """The attributes `module`'s code reads on a variable (or `self.` attribute) in `names`."""
    for node in ast.walk(_tree(module)):
        if not isinstance(node, ast.Attribute):
            continue
        value = node.value
        if (isinstance(value, ast.Name) and value.id in names) or (
            isinstance(value, ast.Attribute) and value.attr in names
        ):
            yield node.attr


def _provides(cls: type, name: str) -> bool:
    return hasattr(cls, name) or name in _assigned_on_self(cls)


SUBCLASSES = [(BoundedHttpToolsProtocol, HttpToolsProtocol), (DrainingServer, uvicorn.Server)]


@pytest.mark.parametrize(("ours", "theirs"), SUBCLASSES, ids=lambda cls: cls.__name__)
def test_every_uvicorn_attribute_a_subclass_relies_on_is_there(ours: type, theirs: type) -> None:
    # Its own: its methods, and the attributes it adds, each named with a leading `_`. An
    # attribute of uvicorn's it assigns (`timeout_keep_alive_task`, `should_exit`) is
    # relied on as one it reads is: renamed in uvicorn, the assignment would do nothing.
    own = set(vars(ours)) | {name for name in _assigned_on_self(ours) if name.startswith("_")}
    relied_on = _used_on_self(ours) - own
    assert relied_on  # the source was read: each subclass uses some of uvicorn's
    missing = sorted(name for name in relied_on if not _provides(theirs, name))
    assert not missing, (
        f"uvicorn {uvicorn.__version__}'s {theirs.__name__} has no "
        f"{', '.join(missing)}, which {ours.__name__} relies on"
    )


def test_every_method_of_uvicorns_protocol_the_route_calls_by_name_is_there() -> None:
    called = set(_read_on(connection, {"HttpToolsProtocol"}))
    assert {"on_header", "on_body", "send_400_response"} <= called
    missing = sorted(name for name in called if not callable(getattr(HttpToolsProtocol, name, 0)))
    assert not missing, f"uvicorn {uvicorn.__version__}'s HttpToolsProtocol lacks {missing}"


def test_every_attribute_of_a_draining_server_its_runners_read_is_uvicorns() -> None:
    read = set(_read_on(serve, {"server"})) | set(_read_on(workers, {"server"}))
    assert {"run", "started"} <= read
    missing = sorted(name for name in read if not _provides(uvicorn.Server, name))
    assert not missing, f"uvicorn {uvicorn.__version__}'s Server lacks {missing}"


def test_every_attribute_of_uvicorns_request_cycle_the_route_reads_is_there() -> None:
    relied_on = set(_read_on(connection, {"cycle", "earlier"})) - {"transport"}
    assert {"response_complete", "message_event", "disconnected"} <= relied_on
    missing = sorted(name for name in relied_on if not _provides(RequestResponseCycle, name))
    assert not missing, f"uvicorn {uvicorn.__version__}'s RequestResponseCycle lacks {missing}"
    # Swapped for one that writes an answer's head and body at once (`_OneWrite`).
    assert "transport" in _assigned_on_self(RequestResponseCycle)


def _parameters(cls: type) -> dict[str, list[str]]:
    """The parameters of each method `cls`'s source defines, read from the source: a
    library imported beside uvicorn may have replaced one on the class (sse-starlette,
    which the MCP SDK brings, replaces `Server.handle_exit`)."""
    (definition,) = ast.parse(textwrap.dedent(inspect.getsource(cls))).body
    assert isinstance(definition, ast.ClassDef)
    return {
        node.name: [argument.arg for argument in node.args.args]
        for node in definition.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }


@pytest.mark.parametrize(("ours", "theirs"), SUBCLASSES, ids=lambda cls: cls.__name__)
def test_every_method_a_subclass_overrides_takes_what_uvicorn_passes_it(
    ours: type, theirs: type
) -> None:
    their_methods = _parameters(theirs)
    overridden = {
        name: (takes, their_methods[name])
        for name, takes in _parameters(ours).items()
        if name in their_methods and name != "__init__"
    }
    assert {"handle_exit", "on_tick"} <= set(overridden) or {"data_received"} <= set(overridden)
    changed = {name: pair for name, pair in overridden.items() if pair[0] != pair[1]}
    assert not changed, f"uvicorn {uvicorn.__version__} calls these differently: {changed}"


def test_the_application_the_drain_tells_is_where_uvicorn_keeps_it() -> None:
    # `drain` finds the route as `getattr(config, "loaded_app")`, a name no walk sees.
    assert '"loaded_app"' in inspect.getsource(drain)
    assert "loaded_app" in _assigned_on_self(uvicorn.Config)
