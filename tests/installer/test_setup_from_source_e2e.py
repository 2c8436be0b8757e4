"""`nox -s setup_from_source` end to end, as the README's first command runs it.

Run on a copy of this checkout, so the session's `.nox/` and `build/wheelhouse` are the
test's own. pip sees only a local wheelhouse (the session's, plus the build backend, so
`pip wheel .` builds offline too, and nox, so the README's own command runs offline); the
clients are stubs on PATH; HOME is a throwaway; and unless a test says otherwise the
documentation origin is unreachable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.install_dir.throttle import record_check
from kinetis_mcp_docs.installer.update import TIMEOUT_VARIABLE
from tests.support.doc_commands import DOCS, README, the_one
from tests.support.machine import Machine, index_page, machine_at
from tests.support.origin import DocsOrigin
from tests.support.stdio import INITIALIZE_PARAMS, ServerProcess
from tests.support.wheelhouse import PROJECT_ROOT, download_dependencies, wheelhouse_pip_env

# Creating the session's environment and building the wheels, then setup: a minute on a
# loaded machine at most.
NOX_TIMEOUT = 600.0
DAY = 86_400
WAIT = 60.0

pytest.importorskip("nox", reason="`nox -s setup_from_source` needs nox (the test extra)")


def _with_wheels_of(
    base: Path,
    requirements: list[str],
    name: str,
    tmp_path_factory: pytest.TempPathFactory,
    pytestconfig: pytest.Config,
) -> Path:
    """A wheelhouse of `base`'s wheels and those of `requirements` (downloaded once, kept in
    pytest's cache where it has one), each a link."""
    cache_provider = getattr(pytestconfig, "cache", None)
    cache = (
        cache_provider.mkdir(f"kinetis-{name}-wheels")
        if cache_provider
        else tmp_path_factory.mktemp(f"{name}-wheels")
    )
    house = tmp_path_factory.mktemp(f"{name}-wheelhouse")
    for wheel in [*base.glob("*.whl"), *download_dependencies(requirements, cache)]:
        if not (house / wheel.name).exists():
            (house / wheel.name).symlink_to(wheel.resolve())
    return house


@pytest.fixture(scope="session")
def build_wheelhouse(
    wheelhouse: Path, tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Path:
    """The session's wheelhouse plus the build backend, so `pip wheel .` needs no index."""
    return _with_wheels_of(
        wheelhouse, ["hatchling"], "build-backend", tmp_path_factory, pytestconfig
    )


@pytest.fixture(scope="session")
def readme_wheelhouse(
    build_wheelhouse: Path, tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Path:
    """`build_wheelhouse` plus nox and uv, which the README's command installs in a clone."""
    return _with_wheels_of(build_wheelhouse, ["nox[uv]"], "nox", tmp_path_factory, pytestconfig)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of what a clone holds that the session uses, where a path may well be: in a
    directory whose name holds a space and a letter beyond ASCII."""
    copy = tmp_path / "my projects é" / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("src", "docs"):
        shutil.copytree(PROJECT_ROOT / name, copy / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE", "noxfile.py"):
        shutil.copy2(PROJECT_ROOT / name, copy / name)
    return copy


def _nox(checkout: Path, env: Mapping[str, str], *posargs: str) -> None:
    noxfile = os.fspath(checkout / "noxfile.py")
    completed = subprocess.run(
        [sys.executable, "-m", "nox", "-f", noxfile, "-s", "setup_from_source", "--", *posargs],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=NOX_TIMEOUT,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


@pytest.mark.once_per_run  # it builds a wheelhouse of every dependency: the same anywhere
def test_setup_from_source_serves_the_users_own_pages_and_its_updates_find_the_wheels(  # noqa: PLR0917
    tmp_path: Path,
    refusing_port: int,
    build_wheelhouse: Path,
    checkout: Path,
    docs_origin: DocsOrigin,
    origin_env: dict[str, str],
) -> None:
    machine = machine_at(
        tmp_path,
        wheelhouse_pip_env(build_wheelhouse),
        {"HTTPS_PROXY": f"http://127.0.0.1:{refusing_port}"},
    )
    # A directory of pages of the user's own, read in place: the session once set the
    # variable to the checkout's docs/ whatever the user had set.
    docs = tmp_path / "my pages"
    docs.mkdir()
    (docs / "index.md").write_text("# My own pages\n")

    # Offline: the registered server reads the user's pages.
    _nox(checkout, machine.env | {"KINETIS_MCP_DOCS_PAGES": os.fspath(docs)}, "codex")

    entry = machine.codex.registrations()["kinetis-docs"]
    argv = machine.registered_argv("--docs-dir", os.fspath(docs))
    assert [entry["command"], *entry["args"]] == argv
    wheelhouse = checkout / "build" / "wheelhouse"
    assert entry["env"]["PIP_FIND_LINKS"] == wheelhouse.as_uri()
    assert entry["env"]["PIP_NO_INDEX"] == "1"
    assert index_page(argv, entry["launch_env"]) == (docs / "index.md").read_text()

    # A later run — the live origin this time, for Claude Code — rebuilds the session's
    # environment and the wheels; Codex's wheelhouse is still there.
    docs_origin.serve_docs()
    _nox(checkout, machine.env | _origin(origin_env), "--live")

    claude = machine.claude.registrations()["kinetis-docs"]
    assert [claude["command"], *claude["args"]] == machine.registered_argv()
    assert list(wheelhouse.glob("kinetis_mcp_docs-*.whl"))
    _assert_a_due_codex_start_updates(machine, entry)
    _assert_a_due_start_and_update_from_a_plain_shell_look_in_the_wheelhouse(machine, checkout)

    # Pages read in place: an edit shows in the next read, with no reinstall.
    (docs / "index.md").write_text("# Changed in place\n")
    assert index_page(argv, entry["launch_env"]) == "# Changed in place\n"


def _origin(origin_env: Mapping[str, str]) -> dict[str, str]:
    return {name: origin_env[name] for name in ("HTTPS_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR")}


def _assert_a_due_codex_start_updates(machine: Machine, entry: dict[str, object]) -> None:
    """Started as Codex starts it, a due update resolves from the recorded wheelhouse."""
    launch_env = entry["launch_env"]
    assert isinstance(launch_env, dict)
    _, stderr = _a_due_start(machine, launch_env)
    assert "could not update" not in stderr, stderr


def _a_due_start(machine: Machine, env: dict[str, str]) -> tuple[str, str]:
    """A client start with `env`, its daily check due, which answers and records a check
    made now: the version it answered with, and what it wrote on stderr."""
    last_check = machine.install / ".last-update-check"
    record_check(last_check, time.time() - DAY - 1)
    # A generous deadline: a loaded machine must not turn this into a test of the bound.
    server = ServerProcess(machine.registered_argv(), env | {TIMEOUT_VARIABLE: "120"})
    try:
        response = server.request("initialize", INITIALIZE_PARAMS, timeout=WAIT)
        version = response["result"]["serverInfo"]["version"]
        assert version
        assert server.finish(timeout=WAIT) == 0
    finally:
        server.kill()
    assert float(last_check.read_text()) > time.time() - DAY
    return str(version), server.stderr


def _assert_a_due_start_and_update_from_a_plain_shell_look_in_the_wheelhouse(
    machine: Machine, checkout: Path
) -> None:
    """Claude Code started from a shell without the wheelhouse's pip settings, and
    `kinetis-docs update` from one: both update from the wheelhouse the install came from,
    and find nothing newer."""
    plain = {key: value for key, value in machine.env.items() if not key.startswith("PIP_")}
    version, stderr = _a_due_start(machine, plain)
    assert stderr == ""

    result = machine.run_process("update", env=plain, program=machine.own_command)

    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-2:] == [
        (f"kinetis-mcp-docs {version} is installed and up to date"),
        (
            f"It is a source install of {checkout}, which takes the checkout's changes with "
            f"`cd '{checkout}' && git pull && python3 -m venv .venv && .venv/bin/python -m pip "
            f"install 'nox[uv]' && KINETIS_MCP_DOCS_DIR={machine.install} .venv/bin/python -m "
            "nox -s setup_from_source` (add `-- codex` for Codex; `status` names each client's)"
        ),
    ]


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["codx"], "did you mean `.venv/bin/python -m nox -s setup_from_source -- codex`?"),
        (["--liv"], "did you mean `.venv/bin/python -m nox -s setup_from_source -- --live`?"),
        ([], "the Claude Code CLI `claude` is not on PATH"),
    ],
)
def test_a_typo_or_a_missing_client_cli_is_refused_before_anything_is_built(
    checkout: Path, arguments: list[str], said: str
) -> None:
    # No client CLI on PATH: only nox's own Python.
    path = os.fspath(Path(sys.executable).parent)
    noxfile = os.fspath(checkout / "noxfile.py")

    done = subprocess.run(
        [sys.executable, "-m", "nox", "-f", noxfile, "-s", "setup_from_source", "--", *arguments],
        env={"PATH": path, "HOME": os.fspath(checkout.parent)},
        capture_output=True,
        text=True,
        timeout=NOX_TIMEOUT,
        check=False,
    )

    assert done.returncode == 1
    last = (done.stdout + done.stderr).splitlines()[-1]
    assert last.startswith("nox > Session setup_from_source aborted: "), last
    assert said in last
    assert last.endswith("Nothing was built.")
    # Once refused only by setup, after 9 to 19 s of building every wheel.
    assert not (checkout / "build").exists()
    assert not (checkout / ".nox" / "setup_from_source" / "tmp" / "kinetis-docs").exists()


def _bash(command: str, env: Mapping[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", command],
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=NOX_TIMEOUT,
        check=False,
    )


def _index_by_hand(machine: Machine) -> str:
    """kinetis://docs/index as troubleshooting.md's "By hand" pipeline, run as written from
    the home directory, reads it through the registered command."""
    pipeline = the_one(DOCS / "troubleshooting.md", "kinetis_mcp_docs.installer.start")
    done = _bash(pipeline, machine.env, machine.home)
    assert done.returncode == 0, done.stdout + done.stderr
    frames = [json.loads(line) for line in done.stdout.splitlines()]
    assert all("result" in frame for frame in frames), frames
    text: str = frames[-1]["result"]["contents"][0]["text"]
    return text


def _fix_in_backquotes(line: str, after: str) -> str:
    """The command in backquotes that follows `after` in `line`."""
    return line.split(after, 1)[1].split("`")[1]


@pytest.mark.once_per_run  # two sessions and the README's own nox: the same anywhere
def test_the_readme_install_keeps_serving_when_its_clone_moves_and_its_fixes_run_as_printed(
    tmp_path: Path, readme_wheelhouse: Path, checkout: Path, refusing_port: int
) -> None:
    # The README's machine: the default install directory, offline.
    machine = machine_at(
        tmp_path,
        wheelhouse_pip_env(readme_wheelhouse),
        {"HTTPS_PROXY": f"http://127.0.0.1:{refusing_port}"},
    )
    del machine.env["KINETIS_MCP_DOCS_DIR"]
    machine.install = machine.home / ".kinetis-mcp-docs"
    own = "~/.kinetis-mcp-docs/current/bin/kinetis-docs"
    plain = {key: value for key, value in machine.env.items() if not key.startswith("PIP_")}

    installed = _bash(the_one(README, "-s setup_from_source"), machine.env, checkout)

    assert installed.returncode == 0, installed.stdout + installed.stderr
    index = (checkout / "docs" / "index.md").read_text("utf-8")
    assert _index_by_hand(machine) == index

    # The clone moves: the install serves what it holds, and says where it comes from.
    moved = tmp_path / "elsewhere" / "clone"
    moved.parent.mkdir()
    checkout.rename(moved)
    assert _index_by_hand(machine) == index
    status = _bash(f"{own} status", plain, machine.home)
    assert status.returncode == 0, status.stdout + status.stderr
    (pages,) = [line for line in status.stdout.splitlines() if "Pages held:" in line]
    assert pages == (
        f"  Pages held: a copy of {checkout / 'docs'} in {machine.install / 'pages'}, served by "
        "every registration of this install that names no pages directory; "
        f"{checkout / 'docs'} is gone, so it stays as it was last copied"
    )
    (source,) = [line for line in status.stdout.splitlines() if "Source checkout:" in line]
    assert source.startswith(
        f"  Source checkout: {checkout}, which is gone (moved or deleted): the install serves "
        "and updates from its own copies, as they were at its last setup or update; to set it "
        "up from the clone, `"
    )

    # Its own setup would ask an index: refused, naming what to run in the new place.
    refused = _bash(f"{own} setup", plain, machine.home)
    assert refused.returncode == 1
    assert refused.stderr.startswith(
        f"kinetis-docs: {machine.install} is a source install of {checkout}: its packages come "
        "from that checkout's wheelhouse, which no package index has"
    )
    assert refused.stderr.rstrip().endswith("Nothing was written.")

    # Status's command, run as printed in the clone's new place, whose .venv moved with it.
    again = _bash(_fix_in_backquotes(source, "to set it up from the clone, "), machine.env, moved)
    assert again.returncode == 0, again.stdout + again.stderr
    status = _bash(f"{own} status", plain, machine.home)
    assert status.returncode == 0, status.stdout + status.stderr
    assert f"  Source checkout: {moved}; it takes the checkout's changes with `cd " in status.stdout

    # The clone deleted: a due update from a plain shell updates from the install's copy.
    shutil.rmtree(moved)
    assert _a_due_start(machine, plain)[1] == ""
    assert _index_by_hand(machine) == index
