"""An installed release updating into this checkout: the 1.x line's cross-version contract.

An install updates itself with the code of the release it has, not of the one it takes:
the old release builds the new environment, checks it by running code of its own in the
new interpreter — code that imports modules of the *new* release by name — switches
`current` to it, and hands over to the new release's server. So a later 1.x release that
moved one of those modules would fail every old install's daily check, and those installs
would stay on their old version for good, while this checkout's own tests, which check
this checkout's updater against this checkout's modules, went on passing.

Two things of release 1.0.0 are frozen here: its check, as the literal it runs, and its
wheel (`releases/`). Both are held against this checkout:

- the check, run by the interpreter of an environment built from this checkout's wheel,
  exits 0, writes nothing but frames and answers `initialize`;
- an install made by 1.0.0's own setup updates itself, through the registered command,
  into this checkout, which then answers the next start itself and reports its status.

The module paths this pins are listed in docs/development.md ("Cross-release contract").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.machine import Machine
from tests.support.stdio import INITIALIZE_PARAMS, ServerProcess, assert_only_frames
from tests.support.wheelhouse import (
    DISTRIBUTION,
    PROJECT_ROOT,
    build_project_wheel,
    isolated_environ,
)

RELEASES = Path(__file__).with_name("releases")
RELEASE_1_0_0 = RELEASES / "kinetis_mcp_docs-1.0.0-py3-none-any.whl"
# This checkout, as the release after 1.0.0 that an install of 1.0.0 is offered.
NEXT_VERSION = "1.0.1"
WAIT = 120.0

# What 1.0.0 runs in a new environment before switching to it (`candidate.SPAWN_CHECK`):
# the spawn entry's modules imported, then the server run as `python -m` runs it.
RELEASE_1_0_0_CHECK = (
    "import kinetis_mcp_docs.installer.start\n"
    "import kinetis_mcp_docs.installer.layout\n"
    "import kinetis_mcp_docs.installer.update\n"
    "import runpy\n"
    "runpy.run_module('kinetis_mcp_docs.server', run_name='__main__', alter_sys=True)\n"
)
# ... and what it sends the server on stdin (`smoke.OFFLINE_CHECK`), one frame a line.
RELEASE_1_0_0_REQUESTS = (
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "kinetis-docs-installer", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "id": 2, "method": "resources/list"},
)


# Printed by 1.0.0's own interpreter: the check and the requests as that release holds them.
_SHOW_CHECK = (
    "import json\n"
    "from kinetis_mcp_docs.installer.candidate import SPAWN_CHECK\n"
    "from kinetis_mcp_docs.installer.smoke import OFFLINE_CHECK\n"
    "print(json.dumps([SPAWN_CHECK, [step.message for step in OFFLINE_CHECK]]))\n"
)


def _venv(directory: Path, environ: dict[str, str], *requirements: str) -> Path:
    """A virtual environment at `directory` holding `requirements`; its Python.

    Made without ensurepip and filled by this interpreter's pip (`--python`), as the
    installer makes its own: the pip it holds is the one its requirements bring, and the
    three seconds of CPU ensurepip spends on a pip of its own, four times a run, are saved.
    """
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", os.fspath(directory)],
        check=True,
        timeout=WAIT,
        capture_output=True,
    )
    python = directory / "bin" / "python"
    install = ["install", "--quiet", "--no-compile", *requirements]
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", os.fspath(python), *install],
        env=environ,
        check=True,
        timeout=WAIT,
        capture_output=True,
    )
    return python


@pytest.fixture(scope="module")
def release_wheelhouse(wheelhouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Release 1.0.0, this checkout at `NEXT_VERSION`, and every dependency wheel."""
    house = tmp_path_factory.mktemp("release-wheelhouse")
    project = DISTRIBUTION.replace("-", "_") + "-"
    for wheel in wheelhouse.glob("*.whl"):
        if not wheel.name.startswith(project):  # this checkout's own versions stay out
            (house / wheel.name).symlink_to(wheel)
    shutil.copy2(RELEASE_1_0_0, house / RELEASE_1_0_0.name)
    build_project_wheel(NEXT_VERSION, house, work=tmp_path_factory.mktemp("next-build"))
    return house


def _frames(stdout: bytes) -> list[dict[str, object]]:
    lines = stdout.splitlines(keepends=True)
    assert_only_frames(lines)
    return [json.loads(line) for line in lines]


def test_release_1_0_0_still_describes_its_own_check(
    tmp_path: Path, release_wheelhouse: Path
) -> None:
    """The literals above are what the frozen wheel itself runs, not a memory of it."""
    environ = isolated_environ(release_wheelhouse)
    python = _venv(tmp_path / "old", environ, os.fspath(RELEASE_1_0_0))
    shown = subprocess.run(
        [
            os.fspath(python),
            "-I",
            "-c",
            _SHOW_CHECK,
        ],
        check=True,
        timeout=WAIT,
        capture_output=True,
        text=True,
    )
    check, requests = json.loads(shown.stdout)
    assert check == RELEASE_1_0_0_CHECK
    assert requests == list(RELEASE_1_0_0_REQUESTS)


@pytest.mark.interpreter
def test_release_1_0_0s_check_passes_in_an_environment_of_this_checkout(
    tmp_path: Path, release_wheelhouse: Path
) -> None:
    environ = isolated_environ(release_wheelhouse)
    python = _venv(tmp_path / "new", environ, f"{DISTRIBUTION}=={NEXT_VERSION}")
    # As 1.0.0 runs it: the new interpreter, isolated, in the install directory, the
    # requests on stdin and their end closing it.
    requests = b"".join(json.dumps(request).encode() + b"\n" for request in RELEASE_1_0_0_REQUESTS)
    checked = subprocess.run(
        [os.fspath(python), "-I", "-c", RELEASE_1_0_0_CHECK],
        input=requests,
        capture_output=True,
        timeout=WAIT,
        cwd=tmp_path,
        env={"PATH": os.environ["PATH"], "HOME": os.fspath(tmp_path), "LANG": "C.UTF-8"},
        check=False,
    )
    assert checked.returncode == 0, checked.stderr.decode()
    frames = _frames(checked.stdout)
    assert [frame["id"] for frame in frames] == [1, 2]
    initialized = frames[0]["result"]
    assert isinstance(initialized, dict)
    assert initialized["serverInfo"] == {"name": "kinetis-mcp-docs", "version": NEXT_VERSION}
    listed = frames[1]["result"]
    assert isinstance(listed, dict)
    assert listed["resources"]


def _old_release_command(tmp_path: Path, release_wheelhouse: Path) -> Path:
    """Release 1.0.0's `kinetis-docs`, installed as `pipx run` would: a venv of its own."""
    environ = isolated_environ(release_wheelhouse)
    python = _venv(tmp_path / "release-1.0.0", environ, os.fspath(RELEASE_1_0_0))
    return python.with_name("kinetis-docs")


def _spawn(machine: Machine, environ: dict[str, str]) -> ServerProcess:
    """The command the client registered, started as the client starts it."""
    (registered,) = machine.claude.registrations().values()
    return ServerProcess([registered["command"], *registered["args"]], environ)


# 1.0.0 caps a start's look at the package index at 2.5 s whatever the update deadline (1.x
# made it follow the deadline), so on a loaded machine its due start can give up on the
# index and serve the old release; a start after a failure tries again. A start that gives
# up must have given up on exactly that cap: any other failure (the new environment's
# check) fails the test at once. Where the load keeps pip slower than the cap, 1.0.0's own
# `update` command, the same updater without the cap, takes the step instead.
_STARTS = 2
_RESOLVE_CAP_GIVEN_UP = "within 2.5 s"


def _initialized(machine: Machine, environ: dict[str, str]) -> tuple[ServerProcess, str]:
    """A client start that answered `initialize`, and the version it answered as."""
    spawned = _spawn(machine, environ)
    try:
        answer = spawned.request("initialize", INITIALIZE_PARAMS, timeout=WAIT)
    except BaseException:
        spawned.kill()
        raise
    return spawned, answer["result"]["serverInfo"]["version"]


def _updated_start(machine: Machine, environ: dict[str, str], old_command: Path) -> ServerProcess:
    """A client start answering `initialize` as this checkout, after 1.0.0 updated into it."""
    for _ in range(_STARTS):
        spawned, version = _initialized(machine, environ)
        if version == NEXT_VERSION:
            return spawned
        try:
            assert spawned.finish(timeout=WAIT) == 0, spawned.stderr
            assert_only_frames(spawned.lines)
            assert _RESOLVE_CAP_GIVEN_UP in spawned.stderr, spawned.stderr
        finally:
            spawned.kill()
    updated = machine.run_process("update", program=old_command, env=environ)
    assert updated.returncode == 0, updated.stdout + updated.stderr
    spawned, version = _initialized(machine, environ)
    if version != NEXT_VERSION:
        spawned.kill()
        raise AssertionError(f"{version} after 1.0.0's update: {spawned.stderr}")
    return spawned


@pytest.mark.parametrize("pages", [False, True], ids=["pages from the origin", "local pages"])
def test_an_install_made_by_release_1_0_0_updates_itself_into_this_checkout(
    machine: Machine, tmp_path: Path, release_wheelhouse: Path, pages: bool
) -> None:
    old_command = _old_release_command(tmp_path, release_wheelhouse)
    pip = isolated_environ(release_wheelhouse, machine.env)
    # 1.0.0 alone on offer at setup: what the install starts from.
    offered = tmp_path / "offered"
    offered.mkdir()
    for wheel in release_wheelhouse.glob("*.whl"):
        if not wheel.name.startswith(f"kinetis_mcp_docs-{NEXT_VERSION}-"):
            (offered / wheel.name).symlink_to(wheel.resolve())
    setup_env = isolated_environ(offered, machine.env)
    index = PROJECT_ROOT / "docs" / "index.md"
    if pages:  # registered as `... start --docs-dir DIR`, handed on to the new server
        local = tmp_path / "pages"
        shutil.copytree(PROJECT_ROOT / "docs", local)
        index = local / "index.md"
        index.write_text(index.read_text() + "\nServed from a local directory.\n")
        setup_env["KINETIS_MCP_DOCS_PAGES"] = os.fspath(local)
    made = machine.run_process("setup", program=old_command, env=setup_env)
    assert made.returncode == 0, made.stderr
    assert machine.current()
    old_environment = machine.current()

    # A day later, with this checkout on offer: the next client start updates.
    (machine.install / ".last-update-check").write_text(f"{time.time() - 2 * 86_400!r}\n")
    timeout = {"KINETIS_MCP_DOCS_UPDATE_TIMEOUT": str(WAIT)}
    spawned = _updated_start(machine, pip | timeout, old_command)
    try:
        read = spawned.request("resources/read", {"uri": "kinetis://docs/index"}, timeout=WAIT)
        (contents,) = read["result"]["contents"]
        assert contents["text"] == index.read_text()
        assert spawned.finish(timeout=WAIT) == 0, spawned.stderr
        assert_only_frames(spawned.lines)
    finally:
        spawned.kill()
    assert machine.current() != old_environment
    assert (machine.install / "previous").readlink().name == old_environment

    # The next start runs this checkout's own entry, inside the window: no update.
    again = _spawn(machine, pip)
    try:
        answer = again.request("initialize", INITIALIZE_PARAMS, timeout=WAIT)
        assert answer["result"]["serverInfo"]["version"] == NEXT_VERSION, again.stderr
        assert again.finish(timeout=WAIT) == 0, again.stderr
    finally:
        again.kill()

    # And this checkout's own commands read the install 1.0.0 made.
    status = machine.run_process("status", program=machine.own_command, env=pip)
    assert status.returncode == 0, status.stdout + status.stderr
    assert NEXT_VERSION in status.stdout
