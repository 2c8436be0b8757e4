"""`kinetis-docs update` end to end: the spawn's update, now, under the same lock."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.envs.metadata import environment_version
from kinetis_mcp_docs.installer.install_dir.lock import update_lock
from tests.support.machine import (
    MARKER,
    Machine,
    machine_at,
    python_removed,
    read_only_or_skip,
)
from tests.support.processes import PROC_AVAILABLE, processes_mentioning
from tests.support.wheelhouse import wheelhouse_pip_env

WAIT = 60.0


@pytest.fixture
def old_machine(tmp_path: Path, wheelhouse: Path) -> Machine:
    """A machine with 1.0.0 installed and registered (pages from this repository's docs/)
    from a wheelhouse of its own, into which 1.0.1 has been released since."""
    house = tmp_path / "wheelhouse"
    house.mkdir()
    newer = []
    for wheel in wheelhouse.glob("*.whl"):
        if wheel.name.startswith(("kinetis_mcp_docs-1.0.1-", "kinetis_mcp_docs-2.")):
            newer.append(wheel)
        else:
            (house / wheel.name).symlink_to(wheel)
    machine = machine_at(tmp_path, wheelhouse_pip_env(house), {})
    machine.env["KINETIS_MCP_DOCS_PAGES"] = os.fspath(Path(__file__).parents[2] / "docs")
    assert machine.setup().returncode == 0
    for wheel in newer:
        (house / wheel.name).symlink_to(wheel)
    return machine


def _plain_shell(machine: Machine) -> dict[str, str]:
    """The machine's environment without any pip setting: a later shell, not setup's."""
    return {key: value for key, value in machine.env.items() if not key.startswith("PIP_")}


def _version(machine: Machine, link: str) -> str | None:
    return environment_version((machine.install / link).resolve())


def test_update_takes_the_newest_release_now_whatever_the_timestamp_a_line_per_step(
    old_machine: Machine,
) -> None:
    last_check = old_machine.install / ".last-update-check"
    before = last_check.read_text()

    result = old_machine.run("update")

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"Updating the install in {old_machine.install}",
        "Checking for a newer release of kinetis-mcp-docs>=1.0,<2",
        "Installing kinetis-mcp-docs 1.0.1 beside 1.0.0",
        "Checking the new environment's server",
        "Switched to kinetis-mcp-docs 1.0.1",
        "New client sessions start the new version.",
    ]
    assert (_version(old_machine, "current"), _version(old_machine, "previous")) == (
        "1.0.1",
        "1.0.0",
    )
    assert float(last_check.read_text()) > float(before)

    again = old_machine.run("update")

    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[-1] == "kinetis-mcp-docs 1.0.1 is installed and up to date"


def test_update_looks_where_setup_did_whatever_the_pip_settings_of_its_shell(
    old_machine: Machine, refusing_port: int
) -> None:
    # This shell's pip would ask an index that refuses connections.
    env = _plain_shell(old_machine) | {
        "PIP_INDEX_URL": f"http://127.0.0.1:{refusing_port}/simple/",
        "NO_PROXY": "127.0.0.1",
    }

    result = old_machine.run("update", env=env)

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-2] == "Switched to kinetis-mcp-docs 1.0.1"


def test_an_update_whose_source_offers_no_release_exits_1_and_changes_nothing(
    old_machine: Machine, tmp_path: Path
) -> None:
    serving = old_machine.current()
    last_check = (old_machine.install / ".last-update-check").read_text()
    for wheel in (tmp_path / "wheelhouse").glob("kinetis_mcp_docs-*"):
        wheel.unlink()

    result = old_machine.run("update")

    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == (
        "kinetis-docs: Could not check for a newer kinetis-mcp-docs: pip exited with status 1 "
        "(its output is above)."
    )
    assert old_machine.current() == serving
    assert (old_machine.install / ".last-update-check").read_text() == last_check


def test_an_update_whose_wheelhouse_is_gone_says_so_in_one_line_and_changes_nothing(
    old_machine: Machine, tmp_path: Path
) -> None:
    serving = old_machine.current()
    shutil.rmtree(tmp_path / "wheelhouse")

    result = old_machine.run("update")

    assert result.returncode == 1
    assert result.stderr == (
        f"kinetis-docs: The wheelhouse {old_machine.install} was installed from, "
        f"{tmp_path / 'wheelhouse'}, is gone; run setup again from where its packages are "
        "now.\n"
    )
    assert old_machine.current() == serving


def test_an_update_of_an_install_whose_python_is_gone_names_setup_with_a_python_there_is_now(
    installed: Machine,
) -> None:
    machine = installed
    serving = machine.current()
    gone = python_removed(machine.install / "envs" / serving)
    files = sorted(path.name for path in machine.install.iterdir())

    result = machine.run("update")

    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"kinetis-docs: Cannot update {machine.install}: the environment "
        f"{machine.install / 'current'} points at cannot run: its Python, {gone}, is gone. Run "
        "setup again with a Python you have now, from a clone of kinetis-mcp-docs (whose .venv "
        "is made again, since it links to the Python that went too): `rm -rf .venv && python3 "
        "-m venv .venv && .venv/bin/python -m pip install 'nox[uv]' && "
        f"KINETIS_MCP_DOCS_DIR={machine.install} .venv/bin/python -m nox -s setup_from_source` "
        "(add `-- codex` for Codex; `status` names each client's). Nothing was changed.\n"
    )
    assert machine.current() == serving
    assert sorted(path.name for path in machine.install.iterdir()) == files


def test_an_update_of_an_install_that_cannot_be_written_names_the_fix_in_one_line(
    installed: Machine,
) -> None:
    machine = installed

    result = machine.run_process("update", wrapper=read_only_or_skip(machine.install))

    assert result.returncode == 1
    assert result.stderr == (
        f"kinetis-docs: Cannot update {machine.install}: {machine.install} cannot be written "
        "(it is on a read-only file system); choose a writable location with "
        "KINETIS_MCP_DOCS_DIR, or fix the permissions, and try again. Nothing was changed.\n"
    )


def test_update_with_nothing_installed_names_setup(
    tmp_path: Path, wheelhouse_env: dict[str, str]
) -> None:
    machine = machine_at(tmp_path, wheelhouse_env, {})

    result = machine.run("update")

    assert result.returncode == 1
    session = (
        "python3 -m venv .venv && .venv/bin/python -m pip install 'nox[uv]' && "
        f"KINETIS_MCP_DOCS_DIR={machine.install} .venv/bin/python -m nox -s setup_from_source"
    )
    assert result.stderr == (
        f"kinetis-docs: Nothing is installed in {machine.install}; install it from a clone of "
        f"kinetis-mcp-docs with `{session}` (or `{session} -- codex`), as its README says.\n"
    )
    assert not machine.install.exists()


def test_update_refuses_a_directory_that_is_not_an_install_and_writes_nothing_there(
    tmp_path: Path, wheelhouse_env: dict[str, str]
) -> None:
    machine = machine_at(tmp_path, wheelhouse_env, {})
    machine.install.mkdir()
    (machine.install / ".kinetis-mcp-docs").write_bytes(b"somebody else's\n")

    result = machine.run("update")

    assert result.returncode == 1
    assert result.stderr.startswith(
        f"kinetis-docs: Refusing to update {machine.install}: its .kinetis-mcp-docs does not "
        "hold the marker this tool writes. Nothing was changed there;"
    )
    assert [path.name for path in machine.install.iterdir()] == [".kinetis-mcp-docs"]
    assert (machine.install / ".kinetis-mcp-docs").read_bytes() != MARKER


@pytest.mark.skipif(not PROC_AVAILABLE, reason="observes processes in /proc")
def test_update_waits_for_the_update_lock_another_process_holds(old_machine: Machine) -> None:
    install = old_machine.install
    with update_lock(install / ".update.lock"), old_machine.started("update") as process:
        assert process.stdout is not None
        assert process.stdout.readline() == f"Updating the install in {install}\n"
        assert process.stdout.readline() == f"Waiting for another update of {install}\n"
        # While it waits, nothing of the update has started.
        assert processes_mentioning(os.fspath(install)) == []
        assert _version(old_machine, "current") == "1.0.0"
    stdout, _ = process.communicate(timeout=WAIT)
    assert process.returncode == 0
    assert stdout.splitlines()[-2] == "Switched to kinetis-mcp-docs 1.0.1"
