"""The spawn-time updater end to end: real installs, real spawns, a real package index.

Every spawn runs exactly the registered command, `DIR/current/bin/python -I -m
kinetis_mcp_docs.installer.start`, in an install built from the session's wheelhouse
(this checkout at 1.0.0, 1.0.1 and 2.0.0). pip reaches the wheelhouse the way a user
reaches a mirror: through its own environment — `PIP_FIND_LINKS` for a plain directory, or
`PIP_INDEX_URL` for `LocalIndex`, an HTTP "simple" index over the same wheels that counts
requests and can hold one until the test lets it go. The clock is moved by writing an old
time into `.last-update-check`.

Installs are built once per session and reset before each test through the layout's own
links (`current` back to the original environment, everything else removed): the
original environment is never modified by an update, which is the property under test.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.envs.build import build_environment
from kinetis_mcp_docs.installer.envs.candidate import Candidate
from kinetis_mcp_docs.installer.envs.links import (
    current_environment,
    previous_environment,
    switch_to,
)
from kinetis_mcp_docs.installer.envs.metadata import environment_version
from kinetis_mcp_docs.installer.install_dir.lock import update_lock
from kinetis_mcp_docs.installer.install_dir.package_source import PackageSource, record_source
from kinetis_mcp_docs.installer.install_dir.throttle import (
    read_failure,
    read_last_check,
    record_check,
)
from kinetis_mcp_docs.installer.layout import InstallLayout
from kinetis_mcp_docs.installer.update import TIMEOUT_VARIABLE
from tests.installer.conftest import MISBEHAVING_RELEASES, PlantedWheelhouse
from tests.server.test_standard_streams_e2e import assert_refused_for_a_closed_stdout, with_closed
from tests.support.imports import imported_modules
from tests.support.installs import Install, build_install
from tests.support.origin import DocsOrigin
from tests.support.package_index import LocalIndex
from tests.support.processes import (
    PROC_AVAILABLE,
    children_of,
    holds_file,
    holds_lock,
    kill_processes_mentioning,
    processes_mentioning,
    sigint_restored,
    wait_for,
)
from tests.support.stdio import INITIALIZE_PARAMS, ServerProcess, assert_only_frames
from tests.support.wheelhouse import (
    wheelhouse_pip_env,
    without_pip_configuration,
)

pytestmark = pytest.mark.skipif(not PROC_AVAILABLE, reason="observes processes in /proc")

DAY = 86_400
WAIT = 60.0  # the bound on every wait for another process
# Generous, so a loaded machine cannot turn a test of success into a test of the deadline.
UPDATE_TIMEOUT = "120"
PROJECT_PAGE = "/simple/kinetis-mcp-docs/"


@pytest.fixture
def index(wheelhouse: Path) -> Iterator[LocalIndex]:
    served = LocalIndex(wheelhouse)
    yield served
    served.close()


# --- installs -----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def old_install_base(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> Install:
    return build_install(tmp_path_factory.mktemp("old") / "install", "1.0.0", wheelhouse)


@pytest.fixture(scope="session")
def newest_install_base(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> Install:
    return build_install(tmp_path_factory.mktemp("newest") / "install", "1.0.1", wheelhouse)


@pytest.fixture
def old_install(old_install_base: Install) -> Iterator[Install]:
    """An install at 1.0.0, with 1.0.1 and 2.0.0 on offer."""
    old_install_base.reset()
    yield old_install_base
    kill_processes_mentioning(os.fspath(old_install_base.layout.root), WAIT)


@pytest.fixture
def newest_install(newest_install_base: Install) -> Iterator[Install]:
    """An install already at 1.0.1, the newest release within >=1.0,<2."""
    newest_install_base.reset()
    yield newest_install_base
    kill_processes_mentioning(os.fspath(newest_install_base.layout.root), WAIT)


# --- environments the spawns run with ------------------------------------------------------


def _environ(pip: Mapping[str, str], tmp_path: Path, **extra: str) -> dict[str, str]:
    """This process's environment, its pip settings replaced by `pip`, plus `extra`."""
    environ = without_pip_configuration(os.environ) | dict(pip)
    environ["PIP_CACHE_DIR"] = os.fspath(tmp_path / "pip-cache")
    environ.pop(TIMEOUT_VARIABLE, None)
    environ[TIMEOUT_VARIABLE] = UPDATE_TIMEOUT
    return environ | extra


@pytest.fixture
def wheelhouse_environ(wheelhouse: Path, tmp_path: Path) -> dict[str, str]:
    """Spawns find releases in the wheelhouse directory."""
    return _environ(wheelhouse_pip_env(wheelhouse), tmp_path)


@pytest.fixture
def index_environ(index: LocalIndex, tmp_path: Path) -> dict[str, str]:
    """Spawns find releases through the local HTTP index."""
    pip = {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": index.url, "PIP_TIMEOUT": "300"}
    # The index is local: a proxy the machine may have configured must not be asked for it.
    return _environ(pip, tmp_path, NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")


@pytest.fixture
def unreachable_environ(tmp_path: Path, refusing_port: int) -> dict[str, str]:
    """Spawns find the index refusing connections."""
    index = f"http://127.0.0.1:{refusing_port}/simple/"
    pip = {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": index}
    return _environ(pip, tmp_path, NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")


# --- spawning and observing ------------------------------------------------------------------


Spawn = Callable[[InstallLayout, Mapping[str, str]], ServerProcess]


@pytest.fixture
def spawns() -> Iterator[Spawn]:
    """Start the registered command; every spawn is killed at teardown if still running."""
    started: list[ServerProcess] = []

    def spawn(layout: InstallLayout, environ: Mapping[str, str]) -> ServerProcess:
        # SIGINT's default action restored, for the tests that Ctrl-C a spawn.
        process = ServerProcess(sigint_restored(layout.start_argv()), environ)
        started.append(process)
        return process

    yield spawn
    for process in started:
        process.kill()


def _initialize(process: ServerProcess) -> str:
    """Ask `initialize`; return the serverInfo.version of whatever answered."""
    response = process.request("initialize", INITIALIZE_PARAMS, timeout=WAIT)
    assert response["result"]["protocolVersion"] == "2025-06-18", response
    version = response["result"]["serverInfo"]["version"]
    assert isinstance(version, str)
    return version


def _answers(process: ServerProcess, version: str) -> None:
    """`initialize` is answered by `version`; if not, the failure shows the server's stderr,
    where a start says why its update did not happen."""
    answered = _initialize(process)
    assert answered == version, f"{answered} answered, not {version}; stderr:\n{process.stderr}"


def _finish(process: ServerProcess) -> None:
    """End the session; the process exits 0 and its stdout held frames only."""
    assert process.finish(timeout=WAIT) == 0, process.stderr
    assert_only_frames(process.lines)


def _our_lines(process: ServerProcess) -> list[str]:
    return [line for line in process.stderr.splitlines() if line.startswith("kinetis-docs:")]


def _waiting_line(install: Install) -> str:
    """What a spawn says when it finds the update lock held."""
    return f"kinetis-docs: waiting for another update of {install.layout.root} to finish."


def _waits(install: Install, process: ServerProcess) -> Callable[[], bool]:
    """Whether `process` found the lock held, and so can only wait for it."""
    return lambda: _waiting_line(install) in _our_lines(process)


def _refuses_to_update(install: Install, environ: Mapping[str, str], spawns: Spawn) -> str:
    """Spawn with an update due: it serves 1.0.0, records no check and builds nothing, and
    its stderr is one line (none of pip's output); that line."""
    server = spawns(install.layout, environ)
    _answers(server, "1.0.0")
    _finish(server)
    (line,) = server.stderr.splitlines()
    assert line.startswith("kinetis-docs: could not update (")
    assert _installed(install) == "1.0.0"
    assert install.envs() == [install.original.name]
    assert not install.layout.last_update_check.is_file()
    return line


def _installed(install: Install) -> str | None:
    env = current_environment(install.layout)
    return None if env is None else environment_version(env)


# --- the throttle ------------------------------------------------------------------------------


@pytest.mark.interpreter
def test_a_spawn_within_the_window_serves_the_installed_version_without_updating(
    old_install: Install, wheelhouse_environ: dict[str, str], spawns: Spawn
) -> None:
    old_install.set_last_check(DAY - 1)
    recorded = read_last_check(old_install.layout.last_update_check)

    server = spawns(old_install.layout, wheelhouse_environ)
    _answers(server, "1.0.0")
    _finish(server)

    assert read_last_check(old_install.layout.last_update_check) == recorded
    assert old_install.envs() == [old_install.original.name]
    assert _our_lines(server) == []


@pytest.mark.parametrize(
    "last_check",
    ["more than a day ago", "missing", "garbage", "in the future"],
)
def test_a_due_check_that_finds_nothing_newer_builds_nothing_and_records_the_time(
    newest_install: Install, wheelhouse_environ: dict[str, str], spawns: Spawn, last_check: str
) -> None:
    stamp = newest_install.layout.last_update_check
    if last_check == "more than a day ago":
        newest_install.set_last_check(DAY + 1)
    elif last_check == "missing":
        newest_install.set_last_check(None)
    elif last_check == "garbage":
        stamp.write_text("not a time\n")
    else:
        newest_install.set_last_check(-3600)
    before = time.time()

    server = spawns(newest_install.layout, wheelhouse_environ)
    _answers(server, "1.0.1")
    _finish(server)

    recorded = read_last_check(stamp)
    assert recorded is not None
    assert before <= recorded <= time.time()
    assert newest_install.envs() == [newest_install.original.name]
    assert _our_lines(server) == []


# --- updating ----------------------------------------------------------------------------------


# What the fast path may not import: each costs start-up time and none is needed to take the
# lock, read the throttle and answer `initialize` (the HTTP client comes with the first read).
# Nothing of the HTTP route or its extra ever loads on the stdio path.
HEAVY_MODULES = {
    "asyncio",
    "click",
    "contextlib",
    "dataclasses",
    "filelock",
    "httpx",
    "json",
    "pathlib",
    "platformdirs",
    "re",
    "socket",
    "ssl",
    "subprocess",
    "threading",
    "typing",
    "kinetis_mcp_docs.server.http",
    "kinetis_mcp_docs.server.site",
    "kinetis_mcp_docs.server.search",
    "kinetis_mcp_docs.server.search.index",
    "sqlite3",
    "tantivy",
    "kinetis_mcp_docs.server.tools.site_tools",
    "limits",
    "uvicorn",
    "prometheus_client",
    "redis",
    "zstandard",
}


@pytest.mark.interpreter
def test_a_spawn_within_the_window_imports_only_what_answering_needs(
    old_install: Install, wheelhouse_environ: dict[str, str], spawns: Spawn
) -> None:
    old_install.set_last_check(DAY - 1)
    python, *rest = old_install.layout.start_argv()
    # The registered command, with the interpreter reporting every import on stderr.
    server = ServerProcess([python, "-X", "importtime", *rest], wheelhouse_environ)
    _answers(server, "1.0.0")
    _finish(server)

    # Every module imported once `-m` hands over to our code: what runpy and site import
    # before it is the interpreter's cost, paid by any Python program started this way.
    imported = imported_modules(server.stderr)
    ours = imported[imported.index("kinetis_mcp_docs") :]
    assert "kinetis_mcp_docs.server.stdio" in ours
    assert set(ours) & HEAVY_MODULES == set()


# A newline once split the refusal in two, and an ESC reached the terminal as it was.
@pytest.mark.parametrize(
    "argument", ["--bogus", "--docs-dir=/nonexistent", "--docs-dir=/nonexistent\n\x1b[31mx"]
)
def test_a_due_spawn_refuses_a_bad_argument_before_it_updates(
    old_install: Install, wheelhouse_environ: dict[str, str], argument: str
) -> None:
    # It once ran the day's update first (pip, the lock, the timestamp), then refused.
    old_install.set_last_check(None)
    completed = subprocess.run(
        [*old_install.layout.start_argv(), argument],
        env=wheelhouse_environ,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )

    assert completed.returncode == 2
    assert completed.stdout == ""
    (line,) = completed.stderr.splitlines()
    assert line.startswith("kinetis-docs: "), line
    assert "\x1b" not in line
    assert old_install.envs() == [old_install.original.name]
    assert not old_install.layout.last_update_check.exists()
    assert not old_install.layout.lock.exists()


@pytest.mark.interpreter
def test_an_update_takes_1_0_1_never_2_0_0_and_the_new_version_answers(
    old_install: Install, index: LocalIndex, index_environ: dict[str, str], spawns: Spawn
) -> None:
    layout = old_install.layout
    old_install.set_last_check(DAY + 1)
    before = time.time()

    server = spawns(layout, index_environ)
    _answers(server, "1.0.1")
    # The lock was released before the new version's server started, and not inherited.
    assert not holds_file(server.process.pid, layout.lock)
    assert server.request("resources/list", timeout=WAIT)["result"]["resources"]
    _finish(server)

    assert _installed(old_install) == "1.0.1"
    assert previous_environment(layout) == old_install.original
    recorded = read_last_check(layout.last_update_check)
    assert recorded is not None
    assert before <= recorded <= time.time()
    # One resolution and one build, each reading the project's page once.
    assert index.count(PROJECT_PAGE) == 2
    assert index.count("/files/kinetis_mcp_docs-2.0.0-py3-none-any.whl") == 0

    # The next spawn is inside the window: it asks the index nothing and serves 1.0.1.
    again = spawns(layout, index_environ)
    _answers(again, "1.0.1")
    _finish(again)
    assert index.count(PROJECT_PAGE) == 2


def _bytecode_body(source: Path) -> bytes:
    """The code object of `source`'s bytecode: past its 16-byte header, which holds the
    source's time and size."""
    (compiled,) = (source.parent / "__pycache__").glob(f"{source.stem}.*.pyc")
    return compiled.read_bytes()[16:]


def test_an_update_is_byte_compiled_after_the_switch_by_a_process_the_server_does_not_own(
    old_install: Install, index: LocalIndex, index_environ: dict[str, str], spawns: Spawn
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)

    server = spawns(layout, index_environ)
    _answers(server, "1.0.1")
    new = current_environment(layout)
    assert new is not None
    assert new != old_install.original
    # The compile was detached before the hand-over: the server has no child to reap.
    assert children_of(server.process.pid) == []

    # pip installed without compiling; the detached compile fills in its bytecode.
    def compiled() -> bool:
        return bool(list(new.glob("lib/python3.*/site-packages/pip/_internal/__pycache__/*.pyc")))

    wait_for(compiled, "the new environment's bytecode", WAIT)
    # The server runs the new environment's interpreter too (it was exec'd into it).
    wait_for(
        lambda: processes_mentioning(os.fspath(new)) == [server.process.pid],
        "the compile to end",
        WAIT,
    )
    # pip is the same release in both environments: its bytecode was copied from the one
    # that ran the update, not compiled again (a compile names the new path in its code).
    (old_pip,) = old_install.original.glob("lib/python3.*/site-packages/pip/__init__.py")
    (new_pip,) = new.glob("lib/python3.*/site-packages/pip/__init__.py")
    assert _bytecode_body(new_pip) == _bytecode_body(old_pip)
    assert server.request("ping", timeout=WAIT)["result"] == {}
    _finish(server)
    assert _our_lines(server) == []


def test_an_unreachable_index_still_serves_records_why_and_the_next_spawn_retries(
    old_install: Install,
    index: LocalIndex,
    index_environ: dict[str, str],
    unreachable_environ: dict[str, str],
    spawns: Spawn,
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)

    line = _refuses_to_update(old_install, unreachable_environ, spawns)
    assert line == (
        "kinetis-docs: could not update (Could not check for a newer kinetis-mcp-docs: pip "
        "exited with status 1: ERROR: No matching distribution found for "
        "kinetis-mcp-docs<2,>=1.0); starting the installed version 1.0.0."
    )
    # The reason is kept for status; the time of the last success is not moved.
    failure = read_failure(layout.last_update_failure)
    assert failure is not None
    assert failure[1].rstrip(".") == line.removeprefix(
        "kinetis-docs: could not update ("
    ).removesuffix("); starting the installed version 1.0.0.")
    assert read_last_check(layout.last_update_check) is None

    # The index is back: the very next start tries again, and updates.
    online = spawns(layout, index_environ)
    _answers(online, "1.0.1")
    _finish(online)
    assert _our_lines(online) == []
    assert read_last_check(layout.last_update_check) is not None
    assert not layout.last_update_failure.exists()


def test_an_update_past_its_deadline_is_abandoned_and_the_installed_version_serves(
    old_install: Install, index: LocalIndex, index_environ: dict[str, str], spawns: Spawn
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)
    # The build's request for the project page never gets an answer.
    index.hold(PROJECT_PAGE, occurrence=2)
    environ = index_environ | {TIMEOUT_VARIABLE: "2"}
    started = time.monotonic()

    server = spawns(layout, environ)
    _answers(server, "1.0.0")
    assert time.monotonic() - started < 15
    # pip was stopped, and the partial environment removed, before the server started.
    assert old_install.envs() == [old_install.original.name]
    wait_for(
        lambda: processes_mentioning(os.fspath(layout.root)) == [server.process.pid],
        "pip's processes to be gone",
        WAIT,
    )
    _finish(server)

    (line,) = _our_lines(server)
    assert "could not update" in line
    assert not layout.last_update_check.exists()


def test_an_update_timeout_that_is_not_a_number_skips_the_update_serves_and_is_recorded(
    old_install: Install, wheelhouse_environ: dict[str, str], spawns: Spawn
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)

    # As a client whose registration sets it passes it: 1.0.1 is on offer meanwhile.
    server = spawns(layout, wheelhouse_environ | {TIMEOUT_VARIABLE: "soon"})
    _answers(server, "1.0.0")
    _finish(server)

    reason = (
        f"{TIMEOUT_VARIABLE}='soon' is not a positive number of seconds, so no update was "
        "attempted; give the server a number of seconds, such as 10, or remove the variable"
    )
    assert _our_lines(server) == [
        f"kinetis-docs: could not update ({reason}); starting the installed version 1.0.0."
    ]
    # Skipped, not run with the default: nothing was built, no time recorded; the setting
    # is the failure `status` shows.
    assert old_install.envs() == [old_install.original.name]
    assert not layout.last_update_check.exists()
    failure = read_failure(layout.last_update_failure)
    assert failure is not None
    assert failure[1] == f"{reason}."


def test_a_due_spawn_asks_a_failing_index_once_whatever_retries_pip_is_configured_with(
    old_install: Install, index: LocalIndex, index_environ: dict[str, str], spawns: Spawn
) -> None:
    old_install.set_last_check(None)
    # pip retries a 503 (with back-off) as often as it is told: a spawn must not.
    index.fail(PROJECT_PAGE, 503)

    _refuses_to_update(old_install, index_environ | {"PIP_RETRIES": "5"}, spawns)

    assert index.count(PROJECT_PAGE) == 1


def test_a_due_spawn_gives_up_on_an_index_that_never_answers_long_before_its_deadline(
    old_install: Install, index: LocalIndex, index_environ: dict[str, str], spawns: Spawn
) -> None:
    old_install.set_last_check(None)
    # The first request is accepted and never answered. pip is configured to wait 300 s
    # for it (PIP_TIMEOUT) and the update may take 40 s, whose check for a newer release
    # is cut at 20 s: only the spawn's own socket timeout (12 s of 40) makes pip itself
    # give up, which the line shows. 40 s, not the other tests' 120: this test waits out
    # the socket timeout, and 36 s of it was the longest wait of the suite.
    index.hold(PROJECT_PAGE, occurrence=1)
    assert index_environ["PIP_TIMEOUT"] == "300"

    # Nothing is recorded, so the next spawn tries again.
    line = _refuses_to_update(old_install, index_environ | {TIMEOUT_VARIABLE: "40"}, spawns)

    assert "pip exited with status 1" in line
    assert index.count(PROJECT_PAGE) == 1


@pytest.mark.parametrize(("module", "code", "said"), MISBEHAVING_RELEASES)
def test_an_update_to_a_release_that_misbehaves_where_a_spawn_runs_is_never_switched_in(  # noqa: PLR0917
    old_install: Install,
    planted_wheelhouse: PlantedWheelhouse,
    tmp_path: Path,
    spawns: Spawn,
    module: str,
    code: str,
    said: str,
) -> None:
    old_install.set_last_check(None)
    environ = _environ(wheelhouse_pip_env(planted_wheelhouse(module, code)), tmp_path)

    line = _refuses_to_update(old_install, environ, spawns)

    assert "The new environment's server failed its check" in line
    assert said in line


def test_a_due_spawn_updates_from_the_recorded_source_whatever_index_its_environment_names(
    old_install: Install,
    wheelhouse: Path,
    unreachable_environ: dict[str, str],
    spawns: Spawn,
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)
    # Setup ran with pip pointed at the wheelhouse; this client gives the server an index
    # that refuses connections.
    record_source(layout, PackageSource.of(wheelhouse_pip_env(wheelhouse)))

    server = spawns(layout, unreachable_environ)
    _answers(server, "1.0.1")
    _finish(server)

    assert _our_lines(server) == []
    assert _installed(old_install) == "1.0.1"


def test_a_due_spawn_whose_recorded_wheelhouse_is_gone_says_how_to_build_it_in_one_line(
    old_install: Install, tmp_path: Path, wheelhouse_environ: dict[str, str], spawns: Spawn
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)
    checkout = tmp_path / "checkout"
    gone = checkout / "build" / "wheelhouse"
    source = {"PIP_FIND_LINKS": gone.as_uri(), "PIP_NO_INDEX": "1"}
    record_source(layout, PackageSource(source))

    line = _refuses_to_update(old_install, wheelhouse_environ, spawns)

    # The checkout went with its wheelhouse: no `cd` to it, which would fail, but the
    # command to run where it is now.
    assert line == (
        f"kinetis-docs: could not update (The wheelhouse {layout.root} was installed from, "
        f"{gone}, is gone; build it again with `python3 -m venv .venv && .venv/bin/python -m "
        f"pip install 'nox[uv]' && KINETIS_MCP_DOCS_DIR={layout.root} .venv/bin/python -m nox "
        f"-s setup_from_source`, run in the clone's new place ({checkout}, where it was "
        "installed from, is gone), or in a fresh clone of kinetis-mcp-docs (add `-- codex` for "
        "Codex)); starting the installed version 1.0.0."
    )


def test_the_updates_check_imports_every_module_of_the_package_a_due_spawn_imports(
    newest_install: Install, wheelhouse_environ: dict[str, str]
) -> None:
    layout = newest_install.layout
    newest_install.set_last_check(None)
    python, *rest = layout.start_argv()
    # A due spawn that finds nothing newer, every import reported on stderr.
    spawn = ServerProcess([python, "-X", "importtime", *rest], wheelhouse_environ)
    check = Candidate(layout, newest_install.original, None).check_argv()
    checking = ServerProcess([check[0], "-X", "importtime", *check[1:]], wheelhouse_environ)
    try:
        for process in (spawn, checking):
            _answers(process, "1.0.1")
            _finish(process)
    finally:
        spawn.kill()
        checking.kill()

    assert read_last_check(layout.last_update_check) is not None  # it did check
    spawned, checked = _package_imports(spawn), _package_imports(checking)
    assert "kinetis_mcp_docs.installer.update" in spawned
    assert spawned <= checked


def _package_imports(process: ServerProcess) -> set[str]:
    """The modules of this package a process started with `-X importtime` imported."""
    imported = imported_modules(process.stderr)
    return {name for name in imported if name.split(".")[0] == "kinetis_mcp_docs"}


@pytest.mark.parametrize("planted", ["dangling-lock-link", "lock-link-to-a-file"])
def test_a_due_spawn_never_makes_or_opens_a_lock_file_through_a_planted_link(
    old_install: Install,
    wheelhouse_environ: dict[str, str],
    spawns: Spawn,
    tmp_path: Path,
    planted: str,
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)
    target = tmp_path / "outside" / "target"
    target.parent.mkdir()
    if planted == "lock-link-to-a-file":
        target.write_text("theirs\n")
    layout.lock.symlink_to(target)

    line = _refuses_to_update(old_install, wheelhouse_environ, spawns)

    assert f"{layout.lock} is a symlink" in line
    assert sorted(path.name for path in target.parent.iterdir()) == (
        [] if planted == "dangling-lock-link" else ["target"]
    )
    if planted == "lock-link-to-a-file":
        assert target.read_text() == "theirs\n"


def test_a_fifo_under_the_timestamps_name_neither_blocks_a_spawn_nor_lets_it_update(
    old_install: Install, wheelhouse_environ: dict[str, str], spawns: Spawn
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)
    os.mkfifo(layout.last_update_check)

    line = _refuses_to_update(old_install, wheelhouse_environ, spawns)

    assert f"{layout.last_update_check} is a FIFO" in line


@pytest.mark.parametrize("writable", ["install directory", "environment"])
def test_a_due_spawn_where_other_users_can_write_refuses_to_update_naming_the_fix(
    old_install: Install, wheelhouse_environ: dict[str, str], spawns: Spawn, writable: str
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)
    # What an earlier version left under umask 000: writable throughout.
    path, said = (
        (layout.root, f"{layout.root} is writable by other users")
        if writable == "install directory"
        else (
            old_install.original,
            f"{old_install.original}, the environment current points at, is writable by other",
        )
    )
    subprocess.run(["chmod", "-R", "go+w", os.fspath(path)], check=True)
    try:
        line = _refuses_to_update(old_install, wheelhouse_environ, spawns)
    finally:
        subprocess.run(["chmod", "-R", "go-w", os.fspath(path)], check=True)

    assert said in line
    assert f"fix it with `chmod -R go-w {layout.root}`" in line


# --- the lock ----------------------------------------------------------------------------------


def test_twenty_spawns_during_a_slow_update_run_one_update_and_all_answer_from_the_new_version(
    old_install: Install, index: LocalIndex, index_environ: dict[str, str], spawns: Spawn
) -> None:
    layout = old_install.layout
    old_install.set_last_check(DAY + 1)
    # The first resolution stalls until all twenty spawns are in: one holds the lock and
    # waits on the index, nineteen wait on the lock.
    stalled = index.hold(PROJECT_PAGE, occurrence=1)

    servers = [spawns(layout, index_environ) for _ in range(20)]
    for server in servers:
        server.send(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE_PARAMS}
        )
    assert stalled.arrived.wait(timeout=WAIT)
    wait_for(
        lambda: sum(_waits(old_install, server)() for server in servers) == 19,
        "nineteen spawns to wait on the lock",
        WAIT,
    )
    stalled.release.set()

    versions = []
    for server in servers:
        response = server.receive(timeout=WAIT)
        assert response["id"] == 1, response
        versions.append(response["result"]["serverInfo"]["version"])
    said = []
    for server in servers:
        _finish(server)
        said.append(_our_lines(server))

    # Nineteen said they waited, and nothing else; the one that updated said nothing.
    assert sorted(said) == [[]] + [[_waiting_line(old_install)]] * 19
    # Every spawn answered from the finished new environment, and only one updated.
    assert versions == ["1.0.1"] * 20
    assert index.count(PROJECT_PAGE) == 2
    assert len(old_install.envs()) == 2
    assert _installed(old_install) == "1.0.1"


def test_a_server_whose_spawn_checked_for_an_update_does_not_hold_the_lock(
    newest_install: Install, wheelhouse_environ: dict[str, str], spawns: Spawn
) -> None:
    layout = newest_install.layout
    newest_install.set_last_check(None)

    # Due: this spawn takes the lock, finds nothing newer, records the time, then serves.
    first = spawns(layout, wheelhouse_environ)
    _answers(first, "1.0.1")
    assert read_last_check(layout.last_update_check) is not None
    assert not holds_file(first.process.pid, layout.lock)
    with update_lock(layout.lock) as state:
        assert not state.waited

    newest_install.set_last_check(None)
    second = spawns(layout, wheelhouse_environ)
    _answers(second, "1.0.1")
    assert first.process.poll() is None
    assert first.request("ping", timeout=WAIT)["result"] == {}
    _finish(second)
    _finish(first)
    assert _our_lines(second) == []


def test_a_spawn_inside_the_window_does_not_wait_for_a_running_setup(
    old_install: Install, unreachable_environ: dict[str, str], spawns: Spawn
) -> None:
    layout = old_install.layout
    old_install.set_last_check(DAY - 1)

    # This test plays a setup re-run, which holds the lock while it installs.
    with update_lock(layout.lock):
        server = spawns(layout, unreachable_environ)
        _answers(server, "1.0.0")
    _finish(server)
    assert _our_lines(server) == []


# Takes the update lock of the install directory it is given, says so, and holds it until
# a line arrives on stdin: another process, as setup or another client's start would be.
LOCK_HOLDER = """
import sys
from pathlib import Path
from kinetis_mcp_docs.installer.install_dir.lock import update_lock
from kinetis_mcp_docs.installer.install_dir.package_source import PackageSource, record_source
with update_lock(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.readline()
"""


@pytest.fixture
def lock_holder(old_install: Install) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the install's update lock, as the kernel's lock table shows."""
    lock = old_install.layout.lock
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, os.fspath(lock)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: lock.exists() and holds_lock(holder.pid, lock), "the lock held", WAIT)
        yield holder
    finally:
        holder.kill()
        holder.communicate(timeout=WAIT)


def _release(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None
    holder.stdin.write("release\n")
    holder.stdin.flush()
    assert holder.wait(timeout=WAIT) == 0


def test_a_due_start_waits_for_a_held_lock_no_longer_than_its_deadline_then_serves_current(
    old_install: Install,
    lock_holder: subprocess.Popen[str],
    wheelhouse_environ: dict[str, str],
    spawns: Spawn,
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)

    # A 2 s deadline: the other process holds the lock until the test lets it go.
    server = spawns(layout, wheelhouse_environ | {TIMEOUT_VARIABLE: "2"})
    _answers(server, "1.0.0")

    assert holds_lock(lock_holder.pid, layout.lock)
    assert _our_lines(server) == [
        _waiting_line(old_install),
        (
            f"kinetis-docs: {layout.root} was still being updated after 2 s, this start's update "
            "deadline; starting the version installed there now, 1.0.0."
        ),
    ]
    _release(lock_holder)
    _finish(server)
    assert not layout.last_update_check.exists()
    assert old_install.envs() == [old_install.original.name]


def test_a_due_start_with_no_complete_install_yet_keeps_waiting_past_its_deadline_saying_so(
    old_install: Install,
    lock_holder: subprocess.Popen[str],
    wheelhouse_environ: dict[str, str],
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)
    # As during a first setup: no `current` yet. The start runs its environment directly.
    layout.current.unlink()
    python = layout.python(old_install.original)
    argv = [os.fspath(python), "-I", "-m", "kinetis_mcp_docs.installer.start"]
    said = (
        f"kinetis-docs: {layout.root} has no complete install yet ({layout.current} points at "
        "none): waiting for the setup that holds its update lock to finish."
    )

    server = ServerProcess(argv, wheelhouse_environ | {TIMEOUT_VARIABLE: "1"})
    try:
        server.send(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE_PARAMS}
        )
        wait_for(lambda: said in _our_lines(server), "the start to say it waits on", WAIT)
        assert server.lines == []
        assert server.process.poll() is None

        # The setup finishes: `current` appears, and the lock is released.
        switch_to(layout, old_install.original)
        _release(lock_holder)
        assert server.receive(timeout=WAIT)["result"]["serverInfo"]["version"] == "1.0.0"
        _finish(server)
    finally:
        server.kill()
    assert _our_lines(server) == [_waiting_line(old_install), said]


def test_a_spawn_during_setup_waits_and_starts_from_the_finished_install_without_a_check(
    old_install: Install,
    wheelhouse: Path,
    unreachable_environ: dict[str, str],
    spawns: Spawn,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)
    for key in [key for key in os.environ if key.startswith("PIP_")]:
        monkeypatch.delenv(key)
    for key, value in wheelhouse_pip_env(wheelhouse).items():
        monkeypatch.setenv(key, value)

    # This test plays `setup`: it holds the lock while it installs 1.0.1.
    with update_lock(layout.lock):
        server = spawns(layout, unreachable_environ)
        server.send(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE_PARAMS}
        )
        wait_for(_waits(old_install, server), "the spawn to wait on the lock", WAIT)
        env = build_environment(
            layout, ["--quiet", "kinetis-mcp-docs==1.0.1"], deadline=time.monotonic() + 300
        )
        switch_to(layout, env)
        installed_at = time.time()
        record_check(layout.last_update_check, installed_at)

    response = server.receive(timeout=WAIT)
    assert response["result"]["serverInfo"]["version"] == "1.0.1"
    _finish(server)
    # Its index is unreachable: had it checked for an update, it would have said so.
    assert _our_lines(server) == [_waiting_line(old_install)]
    assert read_last_check(layout.last_update_check) == installed_at


def test_a_spawn_that_waited_does_not_update_even_when_the_holder_recorded_nothing(
    old_install: Install, wheelhouse_environ: dict[str, str], spawns: Spawn
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)

    with update_lock(layout.lock):
        server = spawns(layout, wheelhouse_environ)
        server.send(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE_PARAMS}
        )
        wait_for(_waits(old_install, server), "the spawn to wait on the lock", WAIT)

    assert server.receive(timeout=WAIT)["result"]["serverInfo"]["version"] == "1.0.0"
    _finish(server)
    assert _our_lines(server) == [_waiting_line(old_install)]
    assert not layout.last_update_check.exists()
    assert old_install.envs() == [old_install.original.name]


# --- killed mid-update -------------------------------------------------------------------------


def _stop_when_built(install: Install, index: LocalIndex, updater: ServerProcess) -> None:
    """Freeze the updater once its build is complete, before it checks or switches."""
    root = os.fspath(install.layout.root)
    building = index.hold(PROJECT_PAGE, occurrence=2)
    assert building.arrived.wait(timeout=WAIT)
    updater.process.send_signal(signal.SIGSTOP)
    building.release.set()

    # pip (and the interpreter `pip --python` starts) finish while the updater is frozen.
    def built() -> bool:
        return processes_mentioning(root) == [updater.process.pid]

    wait_for(built, "the build to finish", WAIT)


def _kill_mid_update(updater: ServerProcess, layout: InstallLayout) -> None:
    """SIGKILL a spawn while it updates, and what it started: pip runs in a session of its
    own, and must not race the next spawn."""
    updater.process.send_signal(signal.SIGKILL)
    updater.process.wait(timeout=WAIT)
    kill_processes_mentioning(os.fspath(layout.root), WAIT)
    updater.kill()


@pytest.mark.parametrize("point", ["resolving", "building", "built", "switching"])
def test_an_updater_killed_mid_update_leaves_an_install_the_next_spawn_serves(  # noqa: PLR0917
    old_install: Install,
    index: LocalIndex,
    index_environ: dict[str, str],
    unreachable_environ: dict[str, str],
    spawns: Spawn,
    point: str,
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)
    updater = spawns(layout, index_environ)

    if point == "resolving":
        assert index.hold(PROJECT_PAGE, occurrence=1).arrived.wait(timeout=WAIT)
    elif point == "building":
        assert index.hold(PROJECT_PAGE, occurrence=2).arrived.wait(timeout=WAIT)
        assert len(old_install.envs()) == 2  # the half-built environment exists
    elif point == "built":
        _stop_when_built(old_install, index, updater)
        assert len(old_install.envs()) == 2  # complete, unchecked, not switched
    else:
        wait_for(lambda: current_environment(layout) != old_install.original, "the switch", WAIT)
    _kill_mid_update(updater, layout)
    assert_only_frames(updater.lines)

    # The next spawn cannot reach an index: it serves whatever the kill left installed.
    after = spawns(layout, unreachable_environ)
    version = _initialize(after)
    _finish(after)
    assert version in {"1.0.0", "1.0.1"}
    assert version == _installed(old_install)

    if point == "building":
        # And once the index is back, the next update succeeds over the leftovers.
        recovered = spawns(layout, index_environ)
        _answers(recovered, "1.0.1")
        _finish(recovered)
        assert len(old_install.envs()) == 2
        assert read_last_check(layout.last_update_check) is not None


def test_a_spawn_killed_mid_download_leaves_nothing_in_the_users_temporary_directory(  # noqa: PLR0917
    old_install: Install,
    index: LocalIndex,
    index_environ: dict[str, str],
    wheelhouse: Path,
    spawns: Spawn,
    tmp_path: Path,
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)
    users = tmp_path / "users-tmp"
    users.mkdir()
    environ = index_environ | {"TMPDIR": os.fspath(users)}
    (wheel,) = wheelhouse.glob("kinetis_mcp_docs-1.0.1-*.whl")
    download = index.hold(f"/files/{wheel.name}")
    updater = spawns(layout, environ)
    assert download.arrived.wait(timeout=WAIT)

    # What pip and the check keep while they run is in the install directory.
    assert layout.scratch.is_dir()
    during = sorted(entry.name for entry in layout.scratch.iterdir())
    assert any(name.startswith("pip-") for name in during), during
    assert any(name.startswith("kinetis-update-") for name in during), during
    _kill_mid_update(updater, layout)
    assert list(users.iterdir()) == []
    assert sorted(entry.name for entry in layout.scratch.iterdir()) == during

    # The next update removes what the killed one left, and leaves nothing itself.
    recovered = spawns(layout, environ)
    _answers(recovered, "1.0.1")
    _finish(recovered)
    assert list(layout.scratch.iterdir()) == []
    assert list(users.iterdir()) == []


# --- pinned to its environment ------------------------------------------------------------------

# An environment without this package, named as the installer names its environments, so
# that `Install.reset` prunes it.
ELSEWHERE = "20000101T000000-e15e3e7e"

SWITCH_AND_IMPORT = """
import os, sys
from kinetis_mcp_docs.installer.start import pin_to_environment
real = os.path.realpath(sys.prefix)
if sys.argv[1] == "pin":
    pin_to_environment(sys.prefix, real)
root = os.path.dirname(os.path.dirname(real))
os.makedirs(os.path.join(root, "envs", sys.argv[2]))
os.symlink(os.path.join("envs", sys.argv[2]), os.path.join(root, "current.swap"))
os.replace(os.path.join(root, "current.swap"), os.path.join(root, "current"))
import importlib.metadata
import kinetis_mcp_docs.server.sources.fetcher
import httpx
print(real)
print(kinetis_mcp_docs.server.sources.fetcher.__file__)
print(httpx.__file__)
print(importlib.metadata.version("kinetis-mcp-docs"))
"""


def _switch_and_import(install: Install, mode: str) -> subprocess.CompletedProcess[str]:
    python = install.layout.python(install.layout.current)
    return subprocess.run(
        [os.fspath(python), "-I", "-c", SWITCH_AND_IMPORT, mode, ELSEWHERE],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )


def test_a_pinned_process_keeps_importing_from_its_own_environment_after_current_moves(
    old_install: Install,
) -> None:
    completed = _switch_and_import(old_install, "pin")
    assert completed.returncode == 0, completed.stderr
    real, fetcher, httpx_file, version = completed.stdout.splitlines()
    assert real == os.path.realpath(old_install.original)
    assert fetcher.startswith(real + os.sep)
    assert httpx_file.startswith(real + os.sep)
    assert version == "1.0.0"


def test_without_pinning_a_lazy_import_follows_current_which_is_why_start_pins(
    old_install: Install,
) -> None:
    completed = _switch_and_import(old_install, "no-pin")
    assert completed.returncode != 0
    assert "ModuleNotFoundError" in completed.stderr


def test_a_serving_spawn_keeps_reading_pages_after_current_moves_away(
    old_install: Install,
    docs_origin: DocsOrigin,
    wheelhouse: Path,
    tmp_path: Path,
    spawns: Spawn,
) -> None:
    layout = old_install.layout
    old_install.set_last_check(0)
    docs_origin.serve_page("index", "# Kinetis\n")
    environ = docs_origin.environ(_environ(wheelhouse_pip_env(wheelhouse), tmp_path))

    server = spawns(layout, environ)
    _answers(server, "1.0.0")
    # Another spawn switches `current` to an environment without this package in it.
    elsewhere = layout.envs / ELSEWHERE
    elsewhere.mkdir()
    swap = layout.root / "current.swap"
    swap.symlink_to(Path("envs", ELSEWHERE))
    swap.replace(layout.current)

    # The first page read imports the fetcher and httpx: from the server's own environment.
    response = server.request("resources/read", {"uri": "kinetis://docs/index"}, timeout=WAIT)
    assert response["result"]["contents"][0]["text"] == "# Kinetis\n", response
    _finish(server)
    shutil.rmtree(elsewhere)


# --- the install directory ----------------------------------------------------------------------


def test_a_spawn_outside_an_install_directory_fails_with_one_line(
    old_install: Install, wheelhouse_environ: dict[str, str], spawns: Spawn
) -> None:
    old_install.layout.marker.unlink()

    server = spawns(old_install.layout, wheelhouse_environ)
    assert server.finish(timeout=WAIT) == 1
    assert server.lines == []
    (line,) = server.stderr.splitlines()
    assert line.startswith("kinetis-docs: ")
    assert line.endswith(
        "install it again as the README says, in a clone: `python3 -m venv .venv && "
        ".venv/bin/python -m pip install 'nox[uv]' && .venv/bin/python -m nox -s "
        "setup_from_source`."
    )


def test_a_lock_that_cannot_be_taken_costs_one_line_and_the_installed_version_serves(
    old_install: Install, wheelhouse_environ: dict[str, str], spawns: Spawn
) -> None:
    old_install.set_last_check(None)
    old_install.layout.lock.unlink(missing_ok=True)
    old_install.layout.lock.mkdir()

    server = spawns(old_install.layout, wheelhouse_environ)
    _answers(server, "1.0.0")
    _finish(server)

    (line,) = _our_lines(server)
    assert "update lock" in line
    assert not old_install.layout.last_update_check.exists()


# --- closed and full standard streams -----------------------------------------------------------


def test_a_due_spawn_with_stderr_closed_whose_update_fails_writes_nothing_but_frames(
    old_install: Install, unreachable_environ: dict[str, str]
) -> None:
    old_install.set_last_check(None)

    server = ServerProcess(with_closed("2", old_install.layout.start_argv()), unreachable_environ)
    try:
        _answers(server, "1.0.0")
        _finish(server)
    finally:
        server.kill()
    assert not old_install.layout.last_update_check.exists()


def test_a_spawn_with_stdout_closed_exits_one_saying_so_in_one_line(
    old_install: Install, wheelhouse_environ: dict[str, str]
) -> None:
    old_install.set_last_check(None)

    assert_refused_for_a_closed_stdout(old_install.layout.start_argv(), wheelhouse_environ)
    # It stopped before anything else: no update was tried.
    assert old_install.envs() == [old_install.original.name]


def _full_pipe() -> tuple[int, int]:
    """A pipe whose buffer is full: a blocking write to it waits until someone reads."""
    read_end, write_end = os.pipe()
    # Filled through a non-blocking open file description of its own: the write end the
    # spawn gets stays blocking, as the pipe a client gives is.
    filler = os.open(f"/proc/self/fd/{write_end}", os.O_WRONLY | os.O_NONBLOCK)
    try:
        while True:
            os.write(filler, bytes(65536))
    except BlockingIOError:
        pass
    finally:
        os.close(filler)
    return read_end, write_end


def _read_to_end(fd: int) -> bytes:
    """Everything still to come from `fd` until its writers are gone (bounded)."""
    data = bytearray()
    deadline = time.monotonic() + WAIT
    while select.select([fd], [], [], max(deadline - time.monotonic(), 0))[0]:
        chunk = os.read(fd, 65536)
        if not chunk:
            return bytes(data)
        data += chunk
    raise AssertionError("stderr did not reach its end in time")


@pytest.mark.parametrize("failure", ["the lock cannot be taken", "pip cannot reach the index"])
def test_a_due_spawn_whose_update_fails_serves_though_its_stderr_is_full_and_unread(
    old_install: Install, unreachable_environ: dict[str, str], failure: str
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)
    if failure == "the lock cannot be taken":
        layout.lock.unlink(missing_ok=True)
        layout.lock.mkdir()
    # Were pip's output to go to the descriptor, pip would block there until the deadline,
    # and the line would name the deadline, not pip's reason: the deadline can be generous.
    environ = unreachable_environ | {TIMEOUT_VARIABLE: UPDATE_TIMEOUT}
    read_end, write_end = _full_pipe()
    try:
        process = subprocess.Popen(
            layout.start_argv(),
            env=environ,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=write_end,
        )
    finally:
        os.close(write_end)
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}
        process.stdin.write(json.dumps(initialize | {"params": INITIALIZE_PARAMS}).encode())
        process.stdin.write(b"\n")
        process.stdin.flush()
        assert select.select([process.stdout], [], [], WAIT)[0], "no answer to initialize"
        answer = json.loads(process.stdout.readline())
        assert answer["result"]["serverInfo"]["version"] == "1.0.0"

        process.stdin.close()
        said = _read_to_end(read_end).lstrip(b"\0").decode()
        assert process.wait(timeout=WAIT) == 0
    finally:
        process.kill()
        process.wait(timeout=WAIT)
        for stream in (process.stdin, process.stdout):
            stream.close()
        os.close(read_end)

    # One line, and nothing of pip's: its output never went to the full stderr.
    (line,) = said.splitlines()
    assert line.startswith("kinetis-docs: could not update (")
    if failure == "pip cannot reach the index":
        assert "ERROR: No matching distribution found" in line
    assert not layout.last_update_check.exists()


# --- the registered command's options and Ctrl-C ------------------------------------------------


def test_a_due_update_hands_the_pages_directory_to_the_version_it_execs(
    old_install: Install, wheelhouse_environ: dict[str, str], tmp_path: Path
) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "index.md").write_text("# Local index\n")
    old_install.set_last_check(None)

    server = ServerProcess(old_install.layout.start_argv(pages), wheelhouse_environ)
    try:
        _answers(server, "1.0.1")
        response = server.request("resources/read", {"uri": "kinetis://docs/index"}, timeout=WAIT)
        _finish(server)
    finally:
        server.kill()
    assert response["result"]["contents"][0]["text"] == "# Local index\n"


def _interrupted(server: ServerProcess) -> None:
    """Ctrl-C: the registered command ends with 130, saying nothing of Python's."""
    server.process.send_signal(signal.SIGINT)
    assert server.process.wait(timeout=WAIT) == 130
    server.kill()
    assert "Traceback" not in server.stderr
    assert "KeyboardInterrupt" not in server.stderr
    assert_only_frames(server.lines)


@pytest.mark.interpreter
def test_ctrl_c_on_the_registered_command_while_it_serves_ends_it_without_a_traceback(
    old_install: Install, wheelhouse_environ: dict[str, str], spawns: Spawn
) -> None:
    old_install.set_last_check(0)
    server = spawns(old_install.layout, wheelhouse_environ)
    _answers(server, "1.0.0")

    _interrupted(server)


def test_ctrl_c_on_the_registered_command_waiting_for_the_lock_ends_it_without_a_traceback(
    old_install: Install, wheelhouse_environ: dict[str, str], spawns: Spawn
) -> None:
    old_install.set_last_check(None)
    with update_lock(old_install.layout.lock):
        server = spawns(old_install.layout, wheelhouse_environ)
        wait_for(_waits(old_install, server), "the spawn to wait on the lock", WAIT)

        _interrupted(server)
    assert old_install.envs() == [old_install.original.name]


def test_ctrl_c_on_the_registered_command_while_pip_builds_stops_it_and_discards_the_build(
    old_install: Install, index: LocalIndex, index_environ: dict[str, str], spawns: Spawn
) -> None:
    layout = old_install.layout
    old_install.set_last_check(None)
    building = index.hold(PROJECT_PAGE, occurrence=2)
    server = spawns(layout, index_environ)
    assert building.arrived.wait(timeout=WAIT)
    assert len(old_install.envs()) == 2

    _interrupted(server)

    # pip was stopped with its whole group, and its half-built environment removed.
    wait_for(lambda: not processes_mentioning(os.fspath(layout.root)), "pip to be gone", WAIT)
    building.release.set()
    assert old_install.envs() == [old_install.original.name]
    assert current_environment(layout) == old_install.original
    assert not layout.last_update_check.exists()
