"""The package's allowed imports, read from its source with `ast`, as the import-budget test
holds what a client start imports.

Every import statement counts, wherever it stands: at module level, inside a function (a
lazy import is an edge all the same, only taken later), and under `TYPE_CHECKING` (a type
ties the text, if not the running program). `from package import name` counts as an import
of the submodule when `name` is one. The rules are data the tests read: each part's
rooms and the rooms each may import (the installer's, the server's), and a list of layers
that never import one another.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "kinetis_mcp_docs"
INSTALLER = f"{PACKAGE}.installer"
SERVER = f"{PACKAGE}.server"

# --- the installer ----------------------------------------------------------------------

# Each module of the installer is in the room of the longest name here that holds it. The
# entry points and the spawn's update, which stay in `installer/` (their module paths are
# the cross-release contract), are rooms of their own; the rest of `installer/` (errors,
# names, layout, children) is the ground every room stands on.
ROOMS = {
    f"{INSTALLER}.cli": "cli",
    f"{INSTALLER}.start": "start",
    f"{INSTALLER}.update": "update",
    f"{INSTALLER}.commands": "commands",
    f"{INSTALLER}.install_dir": "install_dir",
    f"{INSTALLER}.envs": "envs",
    f"{INSTALLER}.clients": "clients",
    f"{INSTALLER}.server_check": "server_check",
    INSTALLER: "ground",
}
# The rooms each room may import besides itself: only rooms below it. Commands are thin,
# over the rooms; the install directory knows its environments, never the reverse; an
# environment is checked through the server check; the clients know none of the others.
BELOW = {
    "cli": {"commands", "start", "install_dir", "ground"},
    "start": {"update", "install_dir", "ground"},
    "update": {"install_dir", "envs", "ground"},
    "commands": {"update", "install_dir", "envs", "clients", "server_check", "ground"},
    "install_dir": {"envs", "ground"},
    "envs": {"server_check", "ground"},
    "clients": {"ground"},
    "server_check": {"ground"},
    "ground": set(),
}
# The two hand-offs from the installer to the server: the spawn entry becomes the stdio
# server, and `serve` runs it (or the HTTP route) in the CLI's process.
HAND_OFFS = {f"{INSTALLER}.start", f"{INSTALLER}.cli"}

# --- layers that never import one another -------------------------------------------------


@dataclass(frozen=True)
class Never:
    """No module under `importer` imports a module under any of `imported`, because `why`."""

    importer: str
    imported: tuple[str, ...]
    why: str

    def broken(self) -> list[Import]:
        return [
            edge
            for edge in imports()
            if under(edge.importer, self.importer)
            and any(under(edge.imported, name) for name in self.imported)
        ]


# --- the server ---------------------------------------------------------------------------

# The server's rooms: each top-level module or folder of `server/` (DESIGN.md's layers,
# transport → JSON-RPC → DocsApplication → page source). `methods` is the 1.x name of the
# stdio method table and of the error table, kept importable for hosts.
SERVER_ROOMS = (
    "__main__",
    "methods",
    "stdio",
    "http",
    "application",
    "tools",
    "site",
    "errors",
    "core",
    "protocol",
    "search",
    "sources",
    "codec",
)
# The rooms each server room may import besides itself: only rooms below it. The two
# transports (stdio, http) never import each other; the core and what it is made of
# (application, tools, site, core) know no wire (protocol, stdio, http); the protocol knows
# nothing of docs; search is text in, scores out; page sources are the bottom.
SERVER_BELOW = {
    "__main__": {"stdio"},
    "methods": {"stdio", "errors"},
    "stdio": {"application", "errors", "protocol", "core", "codec"},
    "http": {"application", "errors", "protocol", "site", "core", "codec"},
    "application": {"tools", "site", "core", "sources"},
    "tools": {"site", "search", "core", "codec"},
    "site": {"search", "core", "sources"},
    "errors": {"protocol", "core"},
    "core": {"sources"},
    "protocol": {"codec"},
    "search": set(),
    "sources": set(),
    "codec": set(),
}
SERVER_RULES = [
    pytest.param(
        Never(SERVER, (INSTALLER,), "the installer reaches the server as a client does"),
        id="the server never imports the installer",
    ),
]
# --- what both parts share ----------------------------------------------------------------

# The modules beside the package's `__init__.py`: what the installer and the server both
# need, so that neither imports the other for it. They stand below both parts.
SHARED = (f"{PACKAGE}.printable", f"{PACKAGE}.seconds")
SHARED_RULES = [
    pytest.param(
        Never(module, (INSTALLER, SERVER), "what both parts share stands below both"),
        id=f"{module.rpartition('.')[2]} never imports the installer or the server",
    )
    for module in SHARED
]
# Libraries that only one module may import: the CLI alone is click (the stdio server and
# the spawn entry import none); the lock alone is filelock (kept off every start but one a
# day); the fetcher alone touches the network.
SOLE_IMPORTERS = {
    "click": f"{INSTALLER}.cli",
    "filelock": f"{INSTALLER}.install_dir.lock",
    "httpx": f"{SERVER}.sources.fetcher",
}

# --- reading the source -------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    """`importer` imports `imported`: a module of the package, or a library's top name."""

    importer: str
    imported: str
    line: int

    def __str__(self) -> str:
        return f"{self.importer} -> {self.imported} (line {self.line})"


def under(module: str, name: str) -> bool:
    """Whether `module` is `name` or inside the package `name`."""
    return module == name or module.startswith(f"{name}.")


@cache
def modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own)."""
    found = {}
    for path in sorted((SOURCE / PACKAGE).rglob("*.py")):
        parts = path.relative_to(SOURCE).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


@cache
def imports() -> tuple[Import, ...]:
    """Every import statement of the package's source, resolved."""
    known = modules()
    found: list[Import] = []
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, module, is_package=path.name == "__init__.py")
                names = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                    for alias in node.names
                ]
            else:
                continue
            found.extend(Import(module, _owner(name, known), node.lineno) for name in names)
    return tuple(found)


def _absolute(node: ast.ImportFrom, module: str, *, is_package: bool) -> str:
    """The absolute name a (possibly relative) `from ... import` reads from."""
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


def _owner(name: str, known: dict[str, Path]) -> str:
    """The module of the package `name` is or is in; for a library, its top-level name."""
    if name.split(".", maxsplit=1)[0] != PACKAGE:
        return name.split(".", maxsplit=1)[0]
    while name not in known:
        name = name.rpartition(".")[0]
    return name


def room(module: str) -> str:
    """The installer room `module` is in."""
    return ROOMS[max((name for name in ROOMS if under(module, name)), key=len)]


def _inside(edges: Iterable[Import], package: str) -> list[Import]:
    """The imports from one module of `package` to another."""
    return [
        edge
        for edge in edges
        if under(edge.importer, package)
        and under(edge.imported, package)
        and edge.importer != edge.imported
    ]


# --- the tests --------------------------------------------------------------------------


def test_the_installer_imports_the_server_only_at_its_two_hand_offs() -> None:
    crossing = [
        edge
        for edge in imports()
        if under(edge.importer, INSTALLER) and under(edge.imported, SERVER)
    ]
    assert crossing, "no hand-off to the server was found: the walk reads nothing"
    assert [str(edge) for edge in crossing if edge.importer not in HAND_OFFS] == []


@pytest.mark.parametrize("name", sorted(BELOW))
def test_each_room_of_the_installer_imports_only_rooms_below_it(name: str) -> None:
    edges = _inside(imports(), INSTALLER)
    mine = [edge for edge in edges if room(edge.importer) == name]
    assert mine or name == "ground", f"no module of the installer is in the room {name}"
    allowed = BELOW[name] | {name}
    assert [str(edge) for edge in mine if room(edge.imported) not in allowed] == []


def test_the_installers_rooms_stand_one_above_another_with_no_way_back_up() -> None:
    def reaches(start: str, target: str, seen: frozenset[str] = frozenset()) -> bool:
        return any(
            below == target or (below not in seen and reaches(below, target, seen | {below}))
            for below in BELOW[start]
        )

    assert [name for name in BELOW if reaches(name, name)] == []
    assert set(ROOMS.values()) == set(BELOW)


def test_every_module_of_the_installer_is_in_a_room_that_exists() -> None:
    installer = [module for module in modules() if under(module, INSTALLER)]
    assert {room(module) for module in installer} == set(BELOW)
    assert [name for name in ROOMS if name not in modules()] == []


def server_room(module: str) -> str:
    """The server room `module` is in (`face`: the package's own `__init__`)."""
    return "face" if module == SERVER else module[len(SERVER) + 1 :].split(".", maxsplit=1)[0]


@pytest.mark.parametrize("name", SERVER_ROOMS)
def test_each_room_of_the_server_imports_only_rooms_below_it(name: str) -> None:
    edges = _inside(imports(), SERVER)
    mine = [edge for edge in edges if server_room(edge.importer) == name]
    assert mine or not SERVER_BELOW[name], f"no module of the server is in the room {name}"
    allowed = SERVER_BELOW[name] | {name}
    assert [str(edge) for edge in mine if server_room(edge.imported) not in allowed] == []


def test_every_module_of_the_server_is_in_one_of_its_rooms() -> None:
    server = [module for module in modules() if under(module, SERVER) and module != SERVER]
    assert {server_room(module) for module in server} == set(SERVER_ROOMS)
    assert set(SERVER_ROOMS) == set(SERVER_BELOW)
    assert [name for name in SERVER_ROOMS if f"{SERVER}.{name}" not in modules()] == []


def test_the_servers_rooms_stand_one_above_another_with_no_way_back_up() -> None:
    graph = {name: set(below) for name, below in SERVER_BELOW.items()}
    assert circles(graph) == []


def circles(graph: dict[str, set[str]]) -> list[str]:
    """Every way round `graph` (module -> the modules it imports) back to where it began."""
    # Depth-first, colouring each module: reaching one still on the path is a circle.
    state: dict[str, str] = {}
    found: list[str] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                found.append(" -> ".join([*path[path.index(imported) :], imported]))
            elif imported not in state:
                visit(imported, [*path, imported])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return found


def test_no_module_of_the_package_reaches_itself_through_its_imports() -> None:
    graph: dict[str, set[str]] = {module: set() for module in modules()}
    for edge in _inside(imports(), PACKAGE):
        graph[edge.importer].add(edge.imported)
    assert circles(graph) == []


@pytest.mark.parametrize("rule", [*SERVER_RULES, *SHARED_RULES])
def test_a_layer_never_imports_what_it_must_not(rule: Never) -> None:
    assert [str(edge) for edge in rule.broken()] == [], rule.why


def test_every_module_beside_the_packages_init_is_one_both_parts_share() -> None:
    root = [
        module
        for module in modules()
        if module.count(".") == 1 and not under(module, INSTALLER) and not under(module, SERVER)
    ]
    assert sorted(root) == sorted(SHARED)


def test_every_rule_names_modules_that_exist() -> None:
    rules = [
        value
        for param in [*SERVER_RULES, *SHARED_RULES]
        for value in param.values
        if isinstance(value, Never)
    ]
    named = {name for rule in rules for name in (rule.importer, *rule.imported)}
    named |= set(SOLE_IMPORTERS.values()) | HAND_OFFS
    assert sorted(name for name in named if name not in modules()) == []


@pytest.mark.parametrize("library", sorted(SOLE_IMPORTERS))
def test_a_library_with_one_job_is_imported_by_one_module(library: str) -> None:
    importers = {edge.importer for edge in imports() if edge.imported == library}
    assert importers == {SOLE_IMPORTERS[library]}


def _benchmark_imports() -> dict[str, set[str]]:
    """Which benchmark module imports which, read from `benchmarks/` as the package is."""
    folder = SOURCE.parent / "benchmarks"
    names = {path.stem for path in folder.glob("*.py")} - {"__init__"}
    graph: dict[str, set[str]] = {name: set() for name in names}
    for name in names:
        tree = ast.parse((folder / f"{name}.py").read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "benchmarks":
                graph[name].update(alias.name for alias in node.names if alias.name in names)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("benchmarks."):
                graph[name].add((node.module or "").split(".")[1])
            elif isinstance(node, ast.Import):
                graph[name].update(
                    alias.name.split(".")[1]
                    for alias in node.names
                    if alias.name.startswith("benchmarks.")
                )
        graph[name] &= names  # a data folder such as search_eval/ is no module of theirs
    return graph


def test_the_benchmarks_import_one_another_in_one_direction_only() -> None:
    graph = _benchmark_imports()
    assert graph["bench"] <= {"stage", "wire"}  # what every figure is given needs no figure
    assert not any("run" in imported for imported in graph.values())  # the registry is on top
    assert circles(graph) == []
