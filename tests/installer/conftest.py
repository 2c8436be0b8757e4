"""Fixtures shared by the installer tests: one wheelhouse per test run, a user's machine,
and a machine on which setup already ran, for the tests that need an install only as a
precondition."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.machine import Machine, machine_at, machine_in
from tests.support.origin import DocsOrigin
from tests.support.per_run import made_once_per_run
from tests.support.processes import kill_processes_mentioning
from tests.support.wheelhouse import build_project_wheel, make_wheelhouse, wheelhouse_pip_env

# A wheelhouse offering a misbehaving release: (module of the package, code appended to it).
PlantedWheelhouse = Callable[[str, str], Path]
PLANTED_VERSION = "1.0.2"

# Releases that misbehave in what a client spawn runs before its first frame, for
# `planted_wheelhouse`: the module planted in, the code appended to it, and what the
# check of the new environment then says. The spawn entry's own two first: the server
# alone (`python -m kinetis_mcp_docs.server`) imports neither module.
SPAWN_ENTRY_RELEASES = [
    pytest.param(
        "installer/__init__.py",
        '\nprint("HELLO")\n',
        "something other than a JSON-RPC frame: 'HELLO'",
        id="the spawn entry's package prints",
    ),
    pytest.param(
        "installer/names.py",
        "\nraise SystemExit(3)\n",
        "initialize got no response before the server exited with status 3",
        id="the spawn entry's names exit 3",
    ),
]
MISBEHAVING_RELEASES = [
    pytest.param(
        "__init__.py",
        '\nimport sys\nsys.stdout.write("kinetis 1.0.2 says hello\\n")\n',
        "something other than a JSON-RPC frame: 'kinetis 1.0.2 says hello'",
        id="the package writes to stdout",
    ),
    *SPAWN_ENTRY_RELEASES,
    pytest.param(
        "installer/update.py",
        '\nprint("HELLO")\n',
        "something other than a JSON-RPC frame: 'HELLO'",
        id="the due spawn's update prints",
    ),
]

# The releases the installer and updater tests resolve between: setup picks the newest
# within >=1.0,<2 (1.0.1); an update from 1.0.0 takes 1.0.1; 2.0.0 must never be taken.
WHEELHOUSE_VERSIONS = ["1.0.0", "1.0.1", "2.0.0"]


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Path:
    """This checkout's wheel at 1.0.0, 1.0.1 and 2.0.0, plus every dependency wheel."""
    # No cache provider (`-p no:cacheprovider`) means downloading once per session.
    cache_provider = getattr(pytestconfig, "cache", None)
    cache = cache_provider.mkdir("kinetis-dependency-wheels") if cache_provider else None
    # Three wheel builds: once per run, not once per test process.
    return made_once_per_run(
        tmp_path_factory.getbasetemp(),
        "wheelhouse",
        lambda: make_wheelhouse(tmp_path_factory, WHEELHOUSE_VERSIONS, cache_dir=cache),
    )


@pytest.fixture(scope="session")
def planted_wheelhouse(
    wheelhouse: Path, tmp_path_factory: pytest.TempPathFactory
) -> PlantedWheelhouse:
    """The session's wheelhouse plus a 1.0.2 with `code` appended to `module` (say
    `installer/names.py`): the newest release, one that misbehaves when that module is
    imported. Each is built once per test run."""
    built: dict[tuple[str, str], Path] = {}

    def make(module: str, code: str) -> Path:
        house = tmp_path_factory.mktemp("planted-wheelhouse")
        for wheel in wheelhouse.glob("*.whl"):
            (house / wheel.name).symlink_to(wheel)
        work = tmp_path_factory.mktemp("planted-build")
        build_project_wheel(PLANTED_VERSION, house, work=work, at_import=code, module=module)
        return house

    def planted(module: str, code: str) -> Path:
        if (module, code) not in built:
            name = "planted-" + hashlib.sha256(f"{module}\0{code}".encode()).hexdigest()[:16]
            built[module, code] = made_once_per_run(
                tmp_path_factory.getbasetemp(), name, lambda: make(module, code)
            )
        return built[module, code]

    return planted


@pytest.fixture(scope="session")
def wheelhouse_env(wheelhouse: Path) -> dict[str, str]:
    """The PIP_* variables that make pip install from the wheelhouse alone.

    Apply over `tests.support.wheelhouse.without_pip_configuration(os.environ)` (or use
    `isolated_environ(wheelhouse)`), so the machine's own PIP_* settings are dropped.
    """
    return wheelhouse_pip_env(wheelhouse)


@pytest.fixture
def machine(
    tmp_path: Path,
    wheelhouse_env: dict[str, str],
    docs_origin: DocsOrigin,
    origin_env: dict[str, str],
) -> Machine:
    """A user's machine whose server reaches the local origin serving this repo's docs/."""
    docs_origin.serve_docs()
    return machine_at(tmp_path, wheelhouse_env, origin_env)


PROJECT_DOCS = Path(__file__).resolve().parents[2] / "docs"
_SETTLE = 60.0


class SetUpMachines:
    """Machines on which `kinetis-docs setup` ran once per session (per worker), each
    restored exactly as that setup left it, at the same path, before every test using it.

    An install names its own path (its scripts' first lines, its `current` link, the
    client's registration), so a copy elsewhere would be another install: the machine is
    copied back to where it was set up instead. The first test asking for one sets it up.
    """

    def __init__(self, base: Path, wheelhouse_env: dict[str, str]) -> None:
        self._base = base
        self._wheelhouse_env = wheelhouse_env

    def restored(self, origin_env: dict[str, str], pages: Path | None) -> Machine:
        """A machine set up for Claude Code with pages from the origin `origin_env`
        reaches, or from the local directory `pages`."""
        name = "origin" if pages is None else "local"
        root = self._base / name
        pristine = self._base / f"{name}-as-set-up"
        if pristine.exists():
            kill_processes_mentioning(os.fspath(root), _SETTLE)
            _remove(root)
            shutil.copytree(pristine, root, symlinks=True)
            machine = machine_in(root, self._wheelhouse_env, origin_env)
        else:
            root.mkdir(parents=True)
            machine = machine_at(root, self._wheelhouse_env, origin_env)
        if pages is not None:
            machine.env["KINETIS_MCP_DOCS_PAGES"] = os.fspath(pages)
        if not pristine.exists():
            result = machine.setup()
            assert result.returncode == 0, result.stdout + result.stderr
            shutil.copytree(root, pristine, symlinks=True)
        return machine


def _remove(root: Path) -> None:
    """Remove `root`, whatever modes a test left on its directories."""
    try:
        shutil.rmtree(root)
    except PermissionError:
        for directory, names, _ in os.walk(root):
            for name in names:
                path = Path(directory) / name
                if not path.is_symlink():
                    path.chmod(0o700)
        shutil.rmtree(root)


@pytest.fixture(scope="session")
def set_up_machines(
    tmp_path_factory: pytest.TempPathFactory, wheelhouse_env: dict[str, str]
) -> SetUpMachines:
    return SetUpMachines(tmp_path_factory.mktemp("set-up-machines"), wheelhouse_env)


@pytest.fixture
def installed(
    set_up_machines: SetUpMachines, docs_origin: DocsOrigin, origin_env: dict[str, str]
) -> Iterator[Machine]:
    """A `machine` on which `kinetis-docs setup` has run: this checkout's newest release
    within >=1.0,<2 installed and registered with Claude Code, pages from the test's origin."""
    docs_origin.serve_docs()
    machine = set_up_machines.restored(origin_env, None)
    yield machine
    kill_processes_mentioning(os.fspath(machine.install), _SETTLE)


@pytest.fixture
def installed_local(set_up_machines: SetUpMachines) -> Iterator[Machine]:
    """A machine on which `kinetis-docs setup` has run with KINETIS_MCP_DOCS_PAGES set to
    this repository's docs/ (no origin needed), registered with Claude Code."""
    machine = set_up_machines.restored({}, PROJECT_DOCS)
    yield machine
    kill_processes_mentioning(os.fspath(machine.install), _SETTLE)
