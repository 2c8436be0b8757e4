"""What `kinetis-docs status` reports and advises, gathered in-process over a directory the
test lays out and stub client CLIs on PATH: no real install (status_e2e has those)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.commands.status import gather_status
from kinetis_mcp_docs.installer.install_dir.throttle import record_check, record_failure
from kinetis_mcp_docs.installer.layout import InstallLayout
from tests.support.clients import StubClient, install_stub
from tests.support.machine import START

MARKER = b"kinetis-mcp-docs install directory\n"
SERVING = "20261201T101500-3f2a9c1e"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", os.fspath(home))
    return home


@pytest.fixture
def bin_dir(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty directory alone on PATH (with what the stubs' interpreter needs): no
    client CLI is found unless a test puts its stub there."""
    directory = tmp_path / "bin"
    directory.mkdir()
    monkeypatch.setenv("PATH", os.fspath(directory))
    return directory


def _environ(root: Path) -> dict[str, str]:
    return {**os.environ, "KINETIS_MCP_DOCS_DIR": os.fspath(root)}


def _claude_running(bin_dir: Path, root: Path) -> StubClient:
    """A stub `claude` whose user-scope `kinetis-docs` runs the install in `root`."""
    claude = install_stub("claude", bin_dir, bin_dir.parent / "stub-state")
    argv = [os.fspath(InstallLayout(root).python(InstallLayout(root).current)), *START]
    entry = {"type": "stdio", "command": argv[0], "args": argv[1:], "env": {}}
    claude.state.write_text(json.dumps({"kinetis-docs": entry}))
    return claude


def _install_with_damaged_marker(tmp_path: Path) -> Path:
    """What setup wrote, but with a marker holding something else: the environment
    `current` points at is there; only the marker went wrong."""
    root = tmp_path / "install"
    (root / "envs" / SERVING / "bin").mkdir(parents=True)
    (root / "current").symlink_to(Path("envs", SERVING))
    (root / ".kinetis-mcp-docs").write_text("half-written\n")
    return root


def test_an_install_whose_marker_was_damaged_is_mended_by_deleting_it_never_by_its_setup(
    tmp_path: Path, bin_dir: Path
) -> None:
    root = _install_with_damaged_marker(tmp_path)
    _claude_running(bin_dir, root)

    status = gather_status(_environ(root))

    assert status.install.state == "not-ours"
    fixes = [problem.fix for problem in status.problems]
    # The page read, Claude Code's status, the directory: setup refuses the directory, so
    # no fix names it; each names the directory's deletion and the README's install.
    assert len(fixes) == 3
    session = (
        "python3 -m venv .venv && .venv/bin/python -m pip install 'nox[uv]' && "
        f"KINETIS_MCP_DOCS_DIR={root} .venv/bin/python -m nox -s setup_from_source"
    )
    for fix in fixes:
        assert "bin/kinetis-docs" not in fix
        assert f"`rm -rf -- {root}`" in fix
        assert f"`{session}` (Claude Code) or `{session} -- codex` (Codex)" in fix
    assert status.problems[-1].fix == (
        f"if nothing of yours is in {root}, it is an install of this tool whose "
        f".kinetis-mcp-docs marker was damaged: delete it, `rm -rf -- {root}`, and install "
        f"again from a clone of kinetis-mcp-docs, `{session}` (Claude Code) or `{session} -- "
        "codex` (Codex), as its README says; otherwise set KINETIS_MCP_DOCS_DIR to the install "
        "directory you mean"
    )


def test_an_install_that_lost_its_marker_is_named_for_deletion_too(
    tmp_path: Path, bin_dir: Path
) -> None:
    root = _install_with_damaged_marker(tmp_path)
    (root / ".kinetis-mcp-docs").unlink()

    status = gather_status(_environ(root))

    (problem,) = status.problems
    assert problem.problem.endswith(
        "it is not empty (it holds current, envs) and has no "
        ".kinetis-mcp-docs marker, so it is not an install of this tool"
    )
    assert f"delete it, `rm -rf -- {root}`" in problem.fix


def test_a_directory_of_someone_elses_files_is_never_named_for_deletion(
    tmp_path: Path, bin_dir: Path
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("mine\n")

    status = gather_status(_environ(root))

    (problem,) = status.problems
    assert problem.fix == "set KINETIS_MCP_DOCS_DIR to the install directory you mean"


def _install(tmp_path: Path) -> Path:
    """An install as setup leaves it, as far as status reads it without starting it."""
    root = _install_with_damaged_marker(tmp_path)
    (root / ".kinetis-mcp-docs").write_bytes(MARKER)
    (root / "envs" / SERVING / "bin" / "python").symlink_to(sys.executable)
    return root


def test_with_no_client_cli_on_path_status_says_registration_cannot_be_checked(
    tmp_path: Path, bin_dir: Path
) -> None:
    root = _install(tmp_path)

    status = gather_status(_environ(root))

    (problem,) = status.problems
    assert problem.problem == (
        "Neither the Claude Code CLI `claude` nor the Codex CLI `codex` is on PATH, so whether "
        f"a client is registered to run {root} cannot be checked"
    )
    assert problem.fix.startswith(
        "run status again from a shell where `claude` or `codex` runs; with neither client "
        "installed, install one, then "
    )


def test_a_client_whose_cli_is_missing_is_named_unchecked_beside_one_not_registered(
    tmp_path: Path, bin_dir: Path
) -> None:
    root = _install(tmp_path)
    install_stub("codex", bin_dir, tmp_path / "stub-state")

    status = gather_status(_environ(root))

    (problem,) = status.problems
    assert problem.problem == (
        f"No client whose CLI is on PATH is registered to run {root}; the Claude Code CLI "
        "`claude` is not on PATH, so its registration was not checked"
    )
    assert problem.fix.endswith(
        "; or, if that client is the one you use, run status again from a shell where `claude` runs"
    )


def test_with_both_clis_on_path_and_neither_registered_no_client_is_registered(
    tmp_path: Path, bin_dir: Path
) -> None:
    root = _install(tmp_path)
    for kind in ("claude", "codex"):
        install_stub(kind, bin_dir, tmp_path / "stub-state")

    status = gather_status(_environ(root))

    assert [problem.problem for problem in status.problems] == [
        f"No client is registered to run {root}"
    ]


@pytest.mark.parametrize(("checked", "shown"), [(-3600.0, False), (30 * 86_400.0, True)])
def test_a_failure_older_than_the_last_check_is_past_unless_that_check_is_in_the_future(
    tmp_path: Path, bin_dir: Path, checked: float, shown: bool
) -> None:
    root = _install(tmp_path)
    layout = InstallLayout(root)
    now = time.time()
    # A failure an hour old: before a check an hour later it was followed by a success;
    # before a check dated a month ahead (the clock turned back), nothing orders the two.
    record_failure(layout.last_update_failure, now - 7200, "pip exited with status 1")
    record_check(layout.last_update_check, now + checked)

    status = gather_status(_environ(root))

    assert (status.install.last_failure == "pip exited with status 1") is shown
    stuck = [problem for problem in status.problems if "failed" in problem.problem]
    assert len(stuck) == int(shown)
